//! The authenticating proxy (spec 001 "Methods", R-ACC-128..132): a front proxy that
//! authenticated the user itself passes who it is in request headers (`X-Remote-User`,
//! `X-Remote-Group`, `X-Remote-Extra-<key>`). The headers count only on a connection whose
//! client certificate the request-header CA signed (and, with an allow-list, whose common name
//! is allowed); anyone else's headers are never read.

use std::collections::BTreeMap;
use std::sync::Arc;

use http::HeaderMap;

use super::AuthContext;
use super::Authenticator;
use super::AuthnOutcome;
use super::CertificateAuthority;
use super::ClientCertificate;
use super::UserInfo;
use super::X509Authenticator;

/// Which headers carry the user (the `--requestheader-*` flags), names as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestHeaderNames {
    /// Headers naming the user, in order; the first non-empty one wins.
    pub username: Vec<String>,
    /// Headers naming the user's uid, in order; the first non-empty one wins.
    pub uid: Vec<String>,
    /// Headers whose every value is a group.
    pub group: Vec<String>,
    /// Prefixes of headers whose (lower-cased, percent-decoded) suffix is an extra key.
    pub extra_prefixes: Vec<String>,
    /// Common names the proxy's certificate may have; empty: any the CA signed.
    pub allowed_names: Vec<String>,
}

/// Authenticates requests sent by an authenticating proxy.
#[derive(Clone)]
pub struct RequestHeaderAuthenticator {
    names: RequestHeaderNames,
    ca: Arc<dyn CertificateAuthority>,
}

impl RequestHeaderAuthenticator {
    /// Reads `names` on connections whose certificate `ca` verifies. Header names are matched
    /// case-insensitively.
    pub fn new(names: RequestHeaderNames, ca: Arc<dyn CertificateAuthority>) -> Self {
        let lower = |list: Vec<String>| {
            list.into_iter()
                .map(|name| name.trim().to_ascii_lowercase())
                .filter(|name| !name.is_empty())
                .collect()
        };
        let names = RequestHeaderNames {
            username: lower(names.username),
            uid: lower(names.uid),
            group: lower(names.group),
            extra_prefixes: lower(names.extra_prefixes),
            allowed_names: names.allowed_names,
        };
        Self { names, ca }
    }

    /// The user the headers name; `None` when no username header has a value.
    pub fn user_of(&self, headers: &HeaderMap) -> Option<UserInfo> {
        let name = first_value(headers, &self.names.username)?;
        let uid = first_value(headers, &self.names.uid).unwrap_or_default();
        let groups = self
            .names
            .group
            .iter()
            .flat_map(|header| values(headers, header))
            .filter(|value| !value.is_empty())
            .collect();
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (header, value) in headers {
            let header = header.as_str();
            let Some(prefix) = self
                .names
                .extra_prefixes
                .iter()
                .find(|prefix| header.starts_with(prefix.as_str()))
            else {
                continue;
            };
            let Ok(value) = value.to_str() else {
                continue;
            };
            extra
                .entry(percent_decoded(&header[prefix.len()..]))
                .or_default()
                .push(value.to_owned());
        }
        Some(UserInfo {
            name,
            uid,
            groups,
            extra,
        })
    }

    /// Removes every header this authenticator reads, so that nothing after authentication
    /// (handlers, audit) mistakes a client's own `X-Remote-*` headers for the proxy's word.
    pub fn clear(&self, headers: &mut HeaderMap) {
        let exact = self
            .names
            .username
            .iter()
            .chain(&self.names.uid)
            .chain(&self.names.group);
        for name in exact {
            headers.remove(name.as_str());
        }
        let prefixed: Vec<_> = headers
            .keys()
            .filter(|header| {
                self.names
                    .extra_prefixes
                    .iter()
                    .any(|prefix| header.as_str().starts_with(prefix.as_str()))
            })
            .cloned()
            .collect();
        for header in prefixed {
            headers.remove(header);
        }
    }

    /// Whether the certificate `der` may speak for users: signed by the request-header CA and,
    /// with an allow-list, of an allowed common name.
    fn check_proxy(&self, der: &[u8]) -> Result<(), String> {
        self.ca.verify(der)?;
        if self.names.allowed_names.is_empty() {
            return Ok(());
        }
        let name = X509Authenticator::user_of(der)?.name;
        if self.names.allowed_names.contains(&name) {
            Ok(())
        } else {
            Err(format!(
                "client certificate common name {name:?} is not an allowed request-header proxy"
            ))
        }
    }
}

#[async_trait::async_trait]
impl Authenticator for RequestHeaderAuthenticator {
    async fn authenticate(
        &self,
        request: &http::request::Parts,
        _context: &AuthContext<'_>,
    ) -> AuthnOutcome {
        let Some(certificate) = request.extensions.get::<ClientCertificate>() else {
            return AuthnOutcome::NoCredentials;
        };
        if let Err(reason) = self.check_proxy(certificate.der()) {
            return AuthnOutcome::Rejected(format!("request-header proxy: {reason}"));
        }
        match self.user_of(&request.headers) {
            Some(user) => AuthnOutcome::Authenticated(user),
            None => AuthnOutcome::NoCredentials,
        }
    }
}

/// Every value of `header` that is text.
fn values<'a>(headers: &'a HeaderMap, header: &str) -> impl Iterator<Item = String> + 'a {
    headers
        .get_all(header)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// The first value of the first of `names` whose first value is not empty.
fn first_value(headers: &HeaderMap, names: &[String]) -> Option<String> {
    names
        .iter()
        .filter_map(|name| headers.get(name.as_str())?.to_str().ok())
        .find(|value| !value.is_empty())
        .map(str::to_owned)
}

/// `encoded` with its `%XX` escapes decoded (as Kubernetes decodes extra keys); unchanged when
/// an escape is malformed or the result is not UTF-8.
fn percent_decoded(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|pair| std::str::from_utf8(pair).ok())
                .and_then(|pair| u8::from_str_radix(pair, 16).ok());
            let Some(byte) = hex else {
                return encoded.to_owned();
            };
            decoded.push(byte);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).unwrap_or_else(|_| encoded.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Trusts(bool);

    impl CertificateAuthority for Trusts {
        fn verify(&self, _certificate: &[u8]) -> Result<(), String> {
            if self.0 {
                Ok(())
            } else {
                Err("signed by an unknown authority".to_owned())
            }
        }
    }

    fn authenticator(trusted: bool, allowed: &[&str]) -> RequestHeaderAuthenticator {
        let names = RequestHeaderNames {
            username: vec!["X-Remote-User".to_owned(), "X-Other-User".to_owned()],
            uid: vec!["X-Remote-Uid".to_owned()],
            group: vec!["X-Remote-Group".to_owned(), "X-Other-Group".to_owned()],
            extra_prefixes: vec!["X-Remote-Extra-".to_owned()],
            allowed_names: allowed.iter().map(|name| (*name).to_owned()).collect(),
        };
        RequestHeaderAuthenticator::new(names, Arc::new(Trusts(trusted)))
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                http::HeaderValue::from_str(value).expect("value"),
            );
        }
        map
    }

    // R-ACC-128: the username headers are read in order, case-insensitively; the first
    // non-empty one wins, and none means no proxy credentials.
    #[test]
    fn first_non_empty_username_header_wins() {
        let auth = authenticator(true, &[]);
        let user = |pairs| auth.user_of(&headers(pairs)).map(|user| user.name);
        assert_eq!(
            user(&[("x-other-user", "bob"), ("X-REMOTE-USER", "alice")]),
            Some("alice".to_owned())
        );
        assert_eq!(
            user(&[("x-remote-user", ""), ("x-other-user", "bob")]),
            Some("bob".to_owned())
        );
        assert_eq!(user(&[("x-remote-group", "dev")]), None);
        let with_uid = auth.user_of(&headers(&[("x-remote-user", "a"), ("x-remote-uid", "42")]));
        assert_eq!(with_uid.expect("user").uid, "42");
    }

    // R-ACC-129: every value of every group header is a group.
    #[test]
    fn every_group_header_value_is_a_group() {
        let auth = authenticator(true, &[]);
        let user = auth
            .user_of(&headers(&[
                ("x-remote-user", "alice"),
                ("x-remote-group", "one"),
                ("x-remote-group", "two"),
                ("x-other-group", "three"),
            ]))
            .expect("user");
        assert_eq!(user.groups, vec!["one", "two", "three"]);
    }

    // R-ACC-130: an extra header's suffix, lower-cased and percent-decoded, is the key.
    #[test]
    fn extra_keys_are_lower_cased_and_percent_decoded() {
        let auth = authenticator(true, &[]);
        let user = auth
            .user_of(&headers(&[
                ("x-remote-user", "alice"),
                ("X-Remote-Extra-Scopes", "read"),
                ("x-remote-extra-scopes", "write"),
                ("x-remote-extra-example.org%2Fteam", "blue"),
                ("x-remote-extra-bad%zz", "kept"),
            ]))
            .expect("user");
        assert_eq!(user.extra["scopes"], vec!["read", "write"]);
        assert_eq!(user.extra["example.org/team"], vec!["blue"]);
        assert_eq!(user.extra["bad%zz"], vec!["kept"]);
    }

    fn proxy_cert(cn: &str) -> Vec<u8> {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        let key = rcgen::KeyPair::generate().expect("key");
        params.self_signed(&key).expect("cert").der().to_vec()
    }

    // R-ACC-131, R-ACC-132: the headers count only with a certificate the request-header CA
    // verifies and, with an allow-list, of an allowed common name.
    #[test]
    fn headers_count_only_from_a_verified_allowed_proxy() {
        let cert = proxy_cert("front-proxy");
        assert!(authenticator(true, &[]).check_proxy(&cert).is_ok());
        assert!(
            authenticator(true, &["front-proxy"])
                .check_proxy(&cert)
                .is_ok()
        );
        assert!(authenticator(false, &[]).check_proxy(&cert).is_err());
        assert!(
            authenticator(false, &["front-proxy"])
                .check_proxy(&cert)
                .is_err()
        );
        assert!(
            authenticator(true, &["other-proxy"])
                .check_proxy(&cert)
                .is_err()
        );
    }

    // R-ACC-128: once read, the proxy's headers are removed from the request.
    #[test]
    fn clear_removes_every_header_read() {
        let auth = authenticator(true, &[]);
        let mut map = headers(&[
            ("x-remote-user", "alice"),
            ("x-remote-uid", "1"),
            ("x-other-group", "g"),
            ("x-remote-extra-k", "v"),
            ("accept", "application/json"),
        ]);
        auth.clear(&mut map);
        assert_eq!(map.len(), 1);
        assert!(map.contains_key("accept"));
    }
}

//! Client-certificate authentication (R-ACC-113, R-ACC-115): the subject's common name is the
//! user, each organization a group. The TLS layer verified the certificate against every CA it
//! accepts (the client CAs and the authenticating proxy's); a configured [`CertificateAuthority`]
//! checks here that the client CAs signed it, so a proxy's certificate is not a user's.

use std::sync::Arc;

use x509_parser::prelude::FromDer;
use x509_parser::prelude::X509Certificate;

use super::AuthContext;
use super::Authenticator;
use super::AuthnOutcome;
use super::ClientCertificate;
use super::UserInfo;

/// The certificate authorities a client certificate must chain to, as they are now (the node's
/// implementation follows its CA file when it changes).
pub trait CertificateAuthority: Send + Sync + 'static {
    /// `Ok` when the DER client certificate `certificate` is signed by one of the CAs and valid
    /// now for client authentication; `Err` with why otherwise.
    fn verify(&self, certificate: &[u8]) -> Result<(), String>;
}

/// Authenticates requests whose connection presented a client certificate.
#[derive(Clone, Default)]
pub struct X509Authenticator {
    /// The CAs a certificate must chain to; `None`: the TLS layer trusts the client CAs only,
    /// so every certificate it let through authenticates.
    ca: Option<Arc<dyn CertificateAuthority>>,
}

impl X509Authenticator {
    /// Authenticates certificates that `ca` verifies, and no other.
    pub fn verifying(ca: Arc<dyn CertificateAuthority>) -> Self {
        Self { ca: Some(ca) }
    }

    /// The user a DER certificate names; `Err` with why when it cannot be read or names none.
    pub fn user_of(der: &[u8]) -> Result<UserInfo, String> {
        let (_, cert) = X509Certificate::from_der(der).map_err(|e| e.to_string())?;
        let subject = cert.subject();
        let name = subject
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .unwrap_or_default()
            .to_owned();
        if name.is_empty() {
            return Err("client certificate has no common name".to_owned());
        }
        let groups = subject
            .iter_organization()
            .filter_map(|o| o.as_str().ok())
            .map(str::to_owned)
            .collect();
        Ok(UserInfo {
            name,
            groups,
            ..UserInfo::default()
        })
    }
}

#[async_trait::async_trait]
impl Authenticator for X509Authenticator {
    async fn authenticate(
        &self,
        request: &http::request::Parts,
        _context: &AuthContext<'_>,
    ) -> AuthnOutcome {
        let Some(certificate) = request.extensions.get::<ClientCertificate>() else {
            return AuthnOutcome::NoCredentials;
        };
        // Verified on every request (the time and the CA file may have moved on since the
        // connection's handshake); the names are read from it once per connection.
        if let Some(ca) = &self.ca
            && let Err(reason) = ca.verify(certificate.der())
        {
            return AuthnOutcome::Rejected(format!("client certificate not verified: {reason}"));
        }
        match certificate.identity(Self::user_of) {
            Ok(user) => AuthnOutcome::Authenticated(user.clone()),
            Err(reason) => AuthnOutcome::Rejected(reason.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use rcgen::CertificateParams;
    use rcgen::DnType;
    use rcgen::KeyPair;

    use super::*;

    fn cert(cn: Option<&str>, org: Option<&str>) -> Vec<u8> {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        // rcgen's default subject has a common name of its own.
        params.distinguished_name = rcgen::DistinguishedName::new();
        if let Some(cn) = cn {
            params.distinguished_name.push(DnType::CommonName, cn);
        }
        if let Some(org) = org {
            params
                .distinguished_name
                .push(DnType::OrganizationName, org);
        }
        let key = KeyPair::generate().expect("key");
        params.self_signed(&key).expect("cert").der().to_vec()
    }

    // R-ACC-113
    #[test]
    fn common_name_is_user_and_organizations_are_groups() {
        let user = X509Authenticator::user_of(&cert(Some("alice"), Some("dev"))).expect("user");
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, vec!["dev".to_owned()]);
        assert!(X509Authenticator::user_of(&cert(None, Some("dev"))).is_err());
        assert!(X509Authenticator::user_of(b"not a certificate").is_err());
    }
}

//! Bootstrap tokens (spec 001 "Bootstrap token secret", R-ACC-018..026, R-ACC-080, R-ACC-119):
//! a bearer token `<id>.<secret>` is valid while the Secret `bootstrap-token-<id>` of type
//! `bootstrap.<domain>/token` in the system namespace holds the same id and secret, has not
//! expired, is not being deleted and allows `usage-bootstrap-authentication`. The Secret is
//! read as this replica applied it ([`AuthContext::stored`]), never with a quorum read. The
//! token-cleaner and bootstrap-signer controllers read the same Secrets through
//! [`BootstrapTokenSecret`].

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use base64::Engine;
use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;
use subtle::ConstantTimeEq;

use super::AuthContext;
use super::TokenAuthenticator;
use super::TokenOutcome;
use super::TokenUser;
use super::UserInfo;
use crate::flavor::Flavor;

/// The user name prefix of a bootstrap token's user (`system:bootstrap:<id>`).
pub const BOOTSTRAP_USER_PREFIX: &str = "system:bootstrap:";

/// The group of every bootstrap token's user; extra groups must start with it and a colon.
pub const BOOTSTRAPPERS_GROUP: &str = "system:bootstrappers";

/// The name prefix of bootstrap token Secrets (`bootstrap-token-<id>`).
pub const SECRET_NAME_PREFIX: &str = "bootstrap-token-";

/// The Secret key holding the token id.
pub const TOKEN_ID_KEY: &str = "token-id";

/// The Secret key holding the token secret.
pub const TOKEN_SECRET_KEY: &str = "token-secret";

/// The Secret key holding the expiry (RFC 3339).
pub const EXPIRATION_KEY: &str = "expiration";

/// The usage that lets a token authenticate as a bearer token.
pub const USAGE_AUTHENTICATION: &str = "usage-bootstrap-authentication";

/// The usage that lets a token sign `cluster-info`.
pub const USAGE_SIGNING: &str = "usage-bootstrap-signing";

/// The Secret key holding the comma-separated extra groups.
pub const EXTRA_GROUPS_KEY: &str = "auth-extra-groups";

/// The type of bootstrap token Secrets in `flavor` (`bootstrap.<domain>/token`).
pub fn secret_type(flavor: Flavor) -> String {
    format!("bootstrap.{}/token", flavor.label_domain())
}

/// The id and secret of a bootstrap token `<id>.<secret>` (six and sixteen characters from
/// `[a-z0-9]`, R-ACC-019, R-ACC-020, R-ACC-026); `None` for anything else.
pub fn parse_token(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    (is_token_part(id, 6) && is_token_part(secret, 16)).then_some((id, secret))
}

fn is_token_part(part: &str, len: usize) -> bool {
    part.len() == len
        && part
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// Whether `group` may be an extra group: `system:bootstrappers:` then `[a-z0-9:-]`, ending in
/// `[a-z0-9]`, as Kubernetes' bootstrap token groups pattern has it.
fn is_extra_group(group: &str) -> bool {
    let Some(rest) = group
        .strip_prefix(BOOTSTRAPPERS_GROUP)
        .and_then(|r| r.strip_prefix(':'))
    else {
        return false;
    };
    let allowed = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b':' || b == b'-';
    !rest.is_empty()
        && rest.len() <= 256
        && rest.bytes().all(allowed)
        && rest
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// A bootstrap token Secret as stored, its `data` decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapTokenSecret {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
    /// Whether `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    data: BTreeMap<String, String>,
}

impl BootstrapTokenSecret {
    /// The Secret `object` if it is a bootstrap token Secret of `flavor` (its type) with data;
    /// `None` otherwise. Values that are not base64 of UTF-8 read as absent.
    pub fn from_object(object: &Value, flavor: Flavor) -> Option<Self> {
        if object.get("type").and_then(Value::as_str) != Some(secret_type(flavor).as_str()) {
            return None;
        }
        let metadata = object.get("metadata");
        let field = |key: &str| {
            metadata
                .and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let data = object
            .get("data")?
            .as_object()?
            .iter()
            .filter_map(|(key, value)| {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(value.as_str()?)
                    .ok()?;
                Some((key.clone(), String::from_utf8(bytes).ok()?))
            })
            .collect();
        Some(Self {
            name: field("name"),
            uid: field("uid"),
            deleting: metadata.is_some_and(|m| !m["deletionTimestamp"].is_null()),
            data,
        })
    }

    /// The value of `key` in the data (empty when absent).
    pub fn get(&self, key: &str) -> &str {
        self.data.get(key).map_or("", String::as_str)
    }

    /// The token id if the Secret is named after it (`bootstrap-token-<id>`) and the id is
    /// well formed.
    pub fn token_id(&self) -> Option<&str> {
        let id = self.get(TOKEN_ID_KEY);
        (is_token_part(id, 6) && self.name.strip_prefix(SECRET_NAME_PREFIX) == Some(id))
            .then_some(id)
    }

    /// When the token expires: `Ok(None)` without an expiration, `Err` when it is not RFC 3339.
    pub fn expiration(&self) -> Result<Option<DateTime<Utc>>, chrono::ParseError> {
        match self.get(EXPIRATION_KEY) {
            "" => Ok(None),
            value => DateTime::parse_from_rfc3339(value).map(|t| Some(t.with_timezone(&Utc))),
        }
    }

    /// Whether the token has expired at `now` (R-ACC-080): its expiration is reached, or is
    /// unreadable (as Kubernetes treats it).
    pub fn has_expired(&self, now: DateTime<Utc>) -> bool {
        match self.expiration() {
            Ok(Some(at)) => now >= at,
            Ok(None) => false,
            Err(_) => true,
        }
    }

    /// Whether the token is marked for `usage` (`true`, exactly).
    pub fn allows(&self, usage: &str) -> bool {
        self.get(usage) == "true"
    }

    /// The token's groups: `system:bootstrappers` and its extra groups, sorted and without
    /// repeats (R-ACC-025, R-ACC-119); `Err` names an extra group that is not allowed.
    pub fn groups(&self) -> Result<Vec<String>, String> {
        let mut groups = BTreeSet::from([BOOTSTRAPPERS_GROUP.to_owned()]);
        for group in self.get(EXTRA_GROUPS_KEY).split(',') {
            if group.is_empty() {
                continue;
            }
            if !is_extra_group(group) {
                return Err(format!(
                    "{EXTRA_GROUPS_KEY} group {group:?} does not start with {BOOTSTRAPPERS_GROUP}:"
                ));
            }
            groups.insert(group.to_owned());
        }
        Ok(groups.into_iter().collect())
    }

    /// The id and secret of a token that may sign `cluster-info` at `now` (R-ACC-024,
    /// R-ACC-081): well formed, not being deleted, not expired, marked for signing.
    pub fn signing_token(&self, now: DateTime<Utc>) -> Option<(&str, &str)> {
        let id = self.token_id()?;
        let secret = self.get(TOKEN_SECRET_KEY);
        let usable = is_token_part(secret, 16)
            && !self.deleting
            && !self.has_expired(now)
            && self.allows(USAGE_SIGNING);
        usable.then_some((id, secret))
    }
}

/// Authenticates bootstrap tokens against their Secrets (`--enable-bootstrap-token-auth`).
#[derive(Debug, Clone, Copy, Default)]
pub struct BootstrapTokenAuthenticator;

#[async_trait::async_trait]
impl TokenAuthenticator for BootstrapTokenAuthenticator {
    async fn authenticate_token(&self, token: &str, context: &AuthContext<'_>) -> TokenOutcome {
        let Some((id, secret)) = parse_token(token) else {
            return TokenOutcome::NotMine;
        };
        let name = format!("{SECRET_NAME_PREFIX}{id}");
        let namespace = context.flavor.system_namespace();
        let object = match context.stored("", "v1", "secrets", namespace, &name).await {
            Ok(Some(object)) => object,
            Ok(None) => return TokenOutcome::NotMine,
            Err(error) => {
                tracing::warn!(%error, "bootstrap token Secret could not be read");
                return TokenOutcome::Rejected("bootstrap token could not be checked".to_owned());
            }
        };
        match check(&object, id, secret, context) {
            Ok(user) => TokenOutcome::Authenticated(TokenUser {
                user,
                audiences: Vec::new(),
            }),
            Err(reason) => TokenOutcome::Rejected(reason),
        }
    }
}

/// The user of the token `id.secret` whose Secret is `object`, or why it is refused (the
/// reason names neither the id nor the secret).
fn check(
    object: &Value,
    id: &str,
    secret: &str,
    context: &AuthContext<'_>,
) -> Result<UserInfo, String> {
    let invalid = |why: &str| format!("invalid bootstrap token: {why}");
    let Some(stored) = BootstrapTokenSecret::from_object(object, context.flavor) else {
        return Err(invalid("its Secret has the wrong type or no data"));
    };
    if stored.deleting {
        return Err(invalid("its Secret is being deleted"));
    }
    let matches: bool = stored
        .get(TOKEN_SECRET_KEY)
        .as_bytes()
        .ct_eq(secret.as_bytes())
        .into();
    if !matches || stored.get(TOKEN_ID_KEY) != id {
        return Err(invalid("the token does not match its Secret"));
    }
    if stored.has_expired(context.now) {
        return Err(invalid("the token has expired"));
    }
    if !stored.allows(USAGE_AUTHENTICATION) {
        return Err(invalid("the token is not marked for authentication"));
    }
    let groups = stored.groups().map_err(|why| invalid(&why))?;
    Ok(UserInfo {
        name: format!("{BOOTSTRAP_USER_PREFIX}{id}"),
        groups,
        ..UserInfo::default()
    })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::*;

    fn secret(data: &[(&str, &str)]) -> Value {
        let encoded: serde_json::Map<String, Value> = data
            .iter()
            .map(|(k, v)| {
                let value = base64::engine::general_purpose::STANDARD.encode(v);
                ((*k).to_owned(), Value::String(value))
            })
            .collect();
        json!({
            "metadata": {"name": "bootstrap-token-abcdef", "uid": "u1"},
            "type": "bootstrap.kubernetes.io/token",
            "data": encoded,
        })
    }

    fn at(hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2030, 1, 1, hour, 0, 0).unwrap()
    }

    // R-ACC-019, R-ACC-020, R-ACC-026: a token is six then sixteen characters of [a-z0-9]
    // joined by a dot; anything else is not a bootstrap token.
    #[test]
    fn tokens_are_six_dot_sixteen_lower_case_alphanumerics() {
        assert_eq!(
            parse_token("abcdef.0123456789abcdef"),
            Some(("abcdef", "0123456789abcdef"))
        );
        for bad in [
            "abcdef0123456789abcdef",
            "abcde.0123456789abcdef",
            "abcdefg.0123456789abcdef",
            "abcdef.0123456789abcde",
            "ABCDEF.0123456789abcdef",
            "abcdef.0123456789abcdeF",
            "abcdef.0123456789abcdef.x",
            "abc_ef.0123456789abcdef",
        ] {
            assert_eq!(parse_token(bad), None, "{bad}");
        }
    }

    // R-ACC-018: only Secrets of the flavor's bootstrap type are bootstrap token Secrets.
    #[test]
    fn only_the_flavors_secret_type_counts() {
        let object = secret(&[(TOKEN_ID_KEY, "abcdef")]);
        assert!(BootstrapTokenSecret::from_object(&object, Flavor::Kubernetes).is_some());
        assert!(BootstrapTokenSecret::from_object(&object, Flavor::Platform).is_none());
        let mut opaque = object.clone();
        opaque["type"] = json!("Opaque");
        assert!(BootstrapTokenSecret::from_object(&opaque, Flavor::Kubernetes).is_none());
    }

    // R-ACC-022, R-ACC-080, R-ACC-081: an expiration is RFC 3339; reached means expired, and an
    // unreadable one counts as expired.
    #[test]
    fn expiry_is_reached_at_the_expiration_time() {
        let parse = |value: &str| {
            BootstrapTokenSecret::from_object(
                &secret(&[(EXPIRATION_KEY, value)]),
                Flavor::Kubernetes,
            )
            .unwrap()
        };
        let token = parse("2030-01-01T05:00:00Z");
        assert!(!token.has_expired(at(4)));
        assert!(token.has_expired(at(5)));
        assert!(token.has_expired(at(6)));
        assert!(parse("tomorrow").has_expired(at(4)));
        assert!(!parse("").has_expired(at(4)));
    }

    // R-ACC-025, R-ACC-119: the groups are system:bootstrappers plus extras, each of which
    // must start with system:bootstrappers:.
    #[test]
    fn extra_groups_must_start_with_system_bootstrappers() {
        let groups = |extra: &str| {
            BootstrapTokenSecret::from_object(
                &secret(&[(EXTRA_GROUPS_KEY, extra)]),
                Flavor::Kubernetes,
            )
            .unwrap()
            .groups()
        };
        assert_eq!(groups(""), Ok(vec!["system:bootstrappers".to_owned()]));
        assert_eq!(
            groups("system:bootstrappers:nodes,system:bootstrappers:a-b:c"),
            Ok(vec![
                "system:bootstrappers".to_owned(),
                "system:bootstrappers:a-b:c".to_owned(),
                "system:bootstrappers:nodes".to_owned(),
            ])
        );
        for bad in [
            "system:masters",
            "system:bootstrappers:",
            "system:bootstrappers:Nodes",
            "system:bootstrappers:nodes-",
            "system:bootstrappersx",
        ] {
            assert!(groups(bad).is_err(), "{bad}");
        }
    }

    // R-ACC-024, R-ACC-081: only a well-formed, live, unexpired token marked for signing signs.
    #[test]
    fn only_live_signing_tokens_sign() {
        let base = [
            (TOKEN_ID_KEY, "abcdef"),
            (TOKEN_SECRET_KEY, "0123456789abcdef"),
            (USAGE_SIGNING, "true"),
            (EXPIRATION_KEY, "2030-01-01T05:00:00Z"),
        ];
        let token =
            |object: Value| BootstrapTokenSecret::from_object(&object, Flavor::Kubernetes).unwrap();
        let signing = token(secret(&base));
        assert_eq!(
            signing.signing_token(at(4)),
            Some(("abcdef", "0123456789abcdef"))
        );
        assert_eq!(signing.signing_token(at(5)), None);
        let mut not_signing = base;
        not_signing[2] = (USAGE_SIGNING, "false");
        assert_eq!(token(secret(&not_signing)).signing_token(at(4)), None);
        let mut other_id = base;
        other_id[0] = (TOKEN_ID_KEY, "zzzzzz");
        assert_eq!(token(secret(&other_id)).signing_token(at(4)), None);
        let mut deleting = secret(&base);
        deleting["metadata"]["deletionTimestamp"] = json!("2030-01-01T00:00:00Z");
        assert_eq!(token(deleting).signing_token(at(4)), None);
    }
}

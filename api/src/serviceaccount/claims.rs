//! The claims of a service account token: what a TokenRequest issues (upstream's
//! `serviceaccount.Claims`, lifetime bounds of `ValidateTokenRequest`); the authenticator in
//! [`crate::auth`] checks them.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;
use serde_json::json;

use crate::flavor::Flavor;
use crate::validation::FieldError;

/// `expirationSeconds` when the request has none.
pub(crate) const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// The shortest lifetime a token may ask for (upstream's `MinTokenAgeSec`).
const MIN_EXPIRATION_SECONDS: i64 = 600;
/// The longest (upstream's `MaxTokenAgeSec`, 2^32 seconds).
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;
/// The lifetime the node agent asks for pods' tokens (upstream's
/// `WarnOnlyBoundTokenExpirationSeconds`, one hour and seven seconds): with
/// `--service-account-extend-token-expiration` such a token lives [`EXTENDED_EXPIRATION_SECONDS`]
/// and carries `warnafter` instead.
pub(crate) const WARN_ONLY_EXPIRATION_SECONDS: i64 = 3607;
/// The extended lifetime (upstream's `ExpirationExtensionSeconds`, one year).
pub(crate) const EXTENDED_EXPIRATION_SECONDS: i64 = 365 * 24 * 3600;

/// A name and uid the private claims carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ObjectRef {
    /// The object's name.
    pub(crate) name: String,
    /// The object's uid (empty when unknown).
    pub(crate) uid: String,
}

impl ObjectRef {
    fn claim(&self) -> Value {
        json!({"name": self.name, "uid": self.uid})
    }
}

/// What a token is bound to, besides its service account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Binding {
    /// The pod (and the node it runs on, when scheduled).
    pub(crate) pod: Option<ObjectRef>,
    /// The secret.
    pub(crate) secret: Option<ObjectRef>,
    /// The node: of the pod, or the object itself.
    pub(crate) node: Option<ObjectRef>,
}

/// What a token is issued for.
pub(crate) struct Grant<'a> {
    /// The service account's namespace.
    pub(crate) namespace: &'a str,
    /// The service account's name.
    pub(crate) name: &'a str,
    /// The service account's uid.
    pub(crate) uid: &'a str,
    /// The `aud` claim.
    pub(crate) audiences: Vec<String>,
    /// `iat` and `nbf`.
    pub(crate) issued: DateTime<Utc>,
    /// The lifetime: `exp` is this many seconds after `iat`.
    pub(crate) expiration_seconds: i64,
    /// What the token is bound to.
    pub(crate) binding: Binding,
    /// With an extended lifetime, the seconds after `iat` from which the token is stale.
    pub(crate) warn_after_seconds: Option<i64>,
}

/// The claims of `grant` signed by `issuer` (upstream's `serviceaccount.Claims`); `jti` is
/// the token's unique id.
pub(crate) fn claims(grant: &Grant<'_>, issuer: &str, jti: &str, flavor: Flavor) -> Value {
    let iat = grant.issued.timestamp();
    let mut private = json!({"namespace": grant.namespace});
    let binding = &grant.binding;
    for (key, reference) in [
        ("node", &binding.node),
        ("pod", &binding.pod),
        ("secret", &binding.secret),
    ] {
        if let Some(reference) = reference {
            private[key] = reference.claim();
        }
    }
    private["serviceaccount"] = json!({"name": grant.name, "uid": grant.uid});
    if let Some(seconds) = grant.warn_after_seconds {
        private["warnafter"] = json!(iat + seconds);
    }
    json!({
        "aud": grant.audiences,
        "exp": iat + grant.expiration_seconds,
        "iat": iat,
        "iss": issuer,
        "jti": jti,
        flavor.label_domain(): private,
        "nbf": iat,
        "sub": format!("system:serviceaccount:{}:{}", grant.namespace, grant.name),
    })
}

/// Upstream's `ValidateTokenRequest` of the lifetime.
pub(crate) fn validate_expiration(seconds: i64) -> Vec<FieldError> {
    let field = "spec.expirationSeconds";
    if seconds < MIN_EXPIRATION_SECONDS {
        vec![FieldError::invalid(
            field,
            seconds,
            "may not specify a duration less than 10 minutes",
        )]
    } else if seconds > MAX_EXPIRATION_SECONDS {
        vec![FieldError::invalid(
            field,
            seconds,
            "may not specify a duration larger than 2^32 seconds",
        )]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_name_the_service_account() {
        let grant = Grant {
            namespace: "ns",
            name: "sa",
            uid: "u1",
            audiences: vec!["api".to_owned()],
            issued: DateTime::from_timestamp(1_000, 0).expect("a time"),
            expiration_seconds: 600,
            binding: Binding::default(),
            warn_after_seconds: None,
        };
        assert_eq!(
            claims(&grant, "iss", "j", Flavor::Kubernetes),
            json!({"aud": ["api"], "exp": 1600, "iat": 1000, "iss": "iss", "jti": "j",
                "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "sa", "uid": "u1"}},
                "nbf": 1000, "sub": "system:serviceaccount:ns:sa"})
        );
        let platform = claims(&grant, "iss", "j", Flavor::Platform);
        assert_eq!(platform["platform.io"]["serviceaccount"]["uid"], "u1");
        let bound = Grant {
            binding: Binding {
                pod: Some(ObjectRef {
                    name: "p".into(),
                    uid: "pu".into(),
                }),
                secret: None,
                node: Some(ObjectRef {
                    name: "n".into(),
                    uid: "nu".into(),
                }),
            },
            warn_after_seconds: Some(3607),
            ..grant
        };
        let private = &claims(&bound, "iss", "j", Flavor::Kubernetes)["kubernetes.io"];
        assert_eq!(private["pod"], json!({"name": "p", "uid": "pu"}));
        assert_eq!(private["node"], json!({"name": "n", "uid": "nu"}));
        assert_eq!(private["warnafter"], 4607);
        assert!(private.get("secret").is_none());
    }

    #[test]
    fn lifetimes_are_bounded() {
        assert!(validate_expiration(600).is_empty());
        assert!(validate_expiration(1 << 32).is_empty());
        assert_eq!(
            validate_expiration(599)[0].to_string(),
            "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"
        );
        assert_eq!(validate_expiration((1 << 32) + 1).len(), 1);
    }
}

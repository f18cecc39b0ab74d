//! The claims of a service account token: what a TokenRequest issues (upstream's
//! `serviceaccount.Claims`, lifetime bounds of `ValidateTokenRequest`) and what a TokenReview
//! accepts (signature, times against the request's clock, audiences, the subject naming the
//! service account the private claims name).

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;
use serde_json::json;

use super::TokenSigner;
use crate::auth::SYSTEM_AUTHENTICATED;
use crate::auth::UserInfo;
use crate::flavor::Flavor;
use crate::validation::FieldError;

/// The group of every service account.
const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";

/// `expirationSeconds` when the request has none.
pub(crate) const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// The shortest lifetime a token may ask for (upstream's `MinTokenAgeSec`).
const MIN_EXPIRATION_SECONDS: i64 = 600;
/// The longest (upstream's `MaxTokenAgeSec`, 2^32 seconds).
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;

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
}

/// The claims of `grant` signed by `issuer` (upstream's `serviceaccount.Claims`); `jti` is
/// the token's unique id.
pub(crate) fn claims(grant: &Grant<'_>, issuer: &str, jti: &str, flavor: Flavor) -> Value {
    let iat = grant.issued.timestamp();
    json!({
        "aud": grant.audiences,
        "exp": iat + grant.expiration_seconds,
        "iat": iat,
        "iss": issuer,
        "jti": jti,
        flavor.label_domain(): {
            "namespace": grant.namespace,
            "serviceaccount": {"name": grant.name, "uid": grant.uid},
        },
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

/// A token that verified: its user, service account and matching audiences.
#[derive(Debug, PartialEq)]
pub(crate) struct Verified {
    /// The user the token authenticates.
    pub(crate) user: UserInfo,
    /// The service account's namespace.
    pub(crate) namespace: String,
    /// The service account's name.
    pub(crate) name: String,
    /// The token's audiences that were asked for.
    pub(crate) audiences: Vec<String>,
}

/// Checks `token` against `signer` at `now` for one of `wanted`; the reason otherwise.
pub(crate) fn verify(
    signer: &dyn TokenSigner,
    token: &str,
    wanted: &[String],
    now: DateTime<Utc>,
    flavor: Flavor,
) -> Result<Verified, String> {
    let claims = signer.verify(token).map_err(|e| e.to_string())?;
    let time = |name: &str| claims.get(name).and_then(Value::as_i64);
    match time("exp") {
        Some(exp) if exp < now.timestamp() => return Err("token has expired".to_owned()),
        Some(_) => {}
        None => return Err("token has no expiry".to_owned()),
    }
    if time("nbf").is_some_and(|nbf| nbf > now.timestamp()) {
        return Err("token is not valid yet".to_owned());
    }
    let audiences: Vec<String> = match claims.get("aud") {
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let matching: Vec<String> = wanted
        .iter()
        .filter(|a| audiences.contains(a))
        .cloned()
        .collect();
    if matching.is_empty() {
        return Err(format!(
            "token audiences {audiences:?} is invalid for the target audiences {wanted:?}"
        ));
    }
    let private = &claims[flavor.label_domain()];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let namespace = text(&private["namespace"]);
    let name = text(&private["serviceaccount"]["name"]);
    let username = format!("system:serviceaccount:{namespace}:{name}");
    if namespace.is_empty() || name.is_empty() || claims["sub"] != username.as_str() {
        return Err("token does not name a service account".to_owned());
    }
    let mut user = UserInfo {
        name: username,
        uid: text(&private["serviceaccount"]["uid"]),
        groups: vec![
            SERVICE_ACCOUNTS.to_owned(),
            format!("{SERVICE_ACCOUNTS}:{namespace}"),
            SYSTEM_AUTHENTICATED.to_owned(),
        ],
        ..UserInfo::default()
    };
    if let Some(jti) = claims.get("jti").and_then(Value::as_str) {
        let key = format!("authentication.{}/credential-id", flavor.label_domain());
        user.extra.insert(key, vec![format!("JTI={jti}")]);
    }
    Ok(Verified {
        user,
        namespace,
        name,
        audiences: matching,
    })
}

#[cfg(test)]
mod tests {
    use rsa::RsaPrivateKey;
    use rsa::pkcs8::EncodePrivateKey;
    use rsa::pkcs8::LineEnding;

    use super::*;
    use crate::serviceaccount::RsaTokenSigner;

    #[test]
    fn claims_name_the_service_account() {
        let grant = Grant {
            namespace: "ns",
            name: "sa",
            uid: "u1",
            audiences: vec!["api".to_owned()],
            issued: DateTime::from_timestamp(1_000, 0).expect("a time"),
            expiration_seconds: 600,
        };
        assert_eq!(
            claims(&grant, "iss", "j", Flavor::Kubernetes),
            json!({"aud": ["api"], "exp": 1600, "iat": 1000, "iss": "iss", "jti": "j",
                "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "sa", "uid": "u1"}},
                "nbf": 1000, "sub": "system:serviceaccount:ns:sa"})
        );
        let platform = claims(&grant, "iss", "j", Flavor::Platform);
        assert_eq!(platform["platform.io"]["serviceaccount"]["uid"], "u1");
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

    fn review_claims(exp: i64, nbf: i64, sub: &str) -> Value {
        json!({
            "iss": "i", "aud": ["api"], "exp": exp, "nbf": nbf, "jti": "j", "sub": sub,
            "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "sa", "uid": "u"}},
        })
    }

    // R-ACC-011, R-ACC-012, R-ACC-013: times are checked against the request's clock, the
    // audiences must meet, and the subject must be the service account the claims name.
    #[test]
    fn tokens_are_checked_against_the_request_time_and_audiences() {
        let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("key");
        let pem = key.to_pkcs8_pem(LineEnding::LF).expect("pem");
        let signer = RsaTokenSigner::from_pem(pem.as_bytes(), "i", vec![]).expect("signer");
        let now = DateTime::from_timestamp(1_000, 0).expect("a time");
        let api = vec!["api".to_owned()];
        let check = |claims: Value, wanted: &[String]| {
            let token = signer.sign(&claims).expect("signed");
            verify(&signer, &token, wanted, now, Flavor::Kubernetes)
        };
        let sa = "system:serviceaccount:ns:sa";
        let ok = check(review_claims(2_000, 500, sa), &api).expect("valid");
        assert_eq!(ok.user.name, sa);
        assert_eq!(ok.user.uid, "u");
        assert_eq!(
            ok.user.extra["authentication.kubernetes.io/credential-id"],
            vec!["JTI=j".to_owned()]
        );
        assert_eq!(ok.audiences, api);
        let expired = check(review_claims(999, 500, sa), &api);
        assert_eq!(expired, Err("token has expired".to_owned()));
        let early = check(review_claims(2_000, 1_001, sa), &api);
        assert_eq!(early, Err("token is not valid yet".to_owned()));
        let elsewhere = check(review_claims(2_000, 500, sa), &["other".to_owned()]);
        assert!(elsewhere.is_err_and(|e| e.contains("target audiences")));
        let impostor = check(
            review_claims(2_000, 500, "system:serviceaccount:ns:other"),
            &api,
        );
        assert_eq!(
            impostor,
            Err("token does not name a service account".to_owned())
        );
    }
}

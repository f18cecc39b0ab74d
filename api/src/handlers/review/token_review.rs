//! `tokenreviews` (authentication/v1 TokenReview): whether `spec.token` is one of our
//! service account tokens (signed by the configured signer, valid at the request time, for
//! one of the audiences asked for, its service account still there with the same uid), and
//! the user it authenticates. A token that fails answers `authenticated: false` with
//! `status.error`, never an HTTP error.

use chrono::DateTime;
use chrono::Utc;
use k8s_openapi::api::authentication::v1::TokenReview;
use serde_json::Value;
use serde_json::json;

use super::Review;
use super::user_info;
use crate::auth::SYSTEM_AUTHENTICATED;
use crate::auth::UserInfo;
use crate::config::TokenSigner;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::Registry;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// The group of every service account.
const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";

/// The request and its `status`; 400 without a token (upstream's wording).
pub(super) async fn review(
    review: &Review<'_>,
    storage: &dyn Storage,
    registry: &Registry,
) -> Result<(Value, Value), ApiError> {
    let (value, typed): (Value, TokenReview) = review.body()?;
    let spec = typed.spec;
    let token = spec.token;
    if token.is_empty() {
        return Err(ApiError::BadRequest(
            "token is required for TokenReview in authentication".to_owned(),
        ));
    }
    let req = review.req;
    let Some(signer) = req.token_signer.as_deref() else {
        return Ok((
            value,
            refused("no service account token signer is configured"),
        ));
    };
    let wanted = match spec.audiences {
        Some(audiences) if !audiences.is_empty() => audiences,
        _ => signer.default_audiences().to_vec(),
    };
    let status = match verify(signer, &token, &wanted, req.now, req.flavor) {
        Ok(verified) => match account_is_current(&verified, storage, registry).await {
            Ok(()) => json!({
                "authenticated": true,
                "user": user_info(&verified.user),
                "audiences": verified.audiences,
            }),
            Err(reason) => refused(&reason),
        },
        Err(reason) => refused(&reason),
    };
    Ok((value, status))
}

/// The status of a token that does not authenticate.
fn refused(reason: &str) -> Value {
    json!({
        "authenticated": false,
        "user": {},
        "error": format!("[invalid bearer token, {reason}]"),
    })
}

/// A token that verified: its user, service account and matching audiences.
#[derive(Debug, PartialEq)]
struct Verified {
    user: UserInfo,
    namespace: String,
    name: String,
    audiences: Vec<String>,
}

/// Checks `token` against `signer` at `now` for one of `wanted`; the reason otherwise.
fn verify(
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

/// A token outlives nothing: its service account must still exist with the uid it names.
async fn account_is_current(
    verified: &Verified,
    storage: &dyn Storage,
    registry: &Registry,
) -> Result<(), String> {
    let accounts = registry
        .lookup("", "v1", "serviceaccounts")
        .ok_or("service accounts are not served")?;
    let who = format!("{}/{}", verified.namespace, verified.name);
    let stored = accounts
        .get(
            storage,
            &verified.namespace,
            &verified.name,
            ReadConsistency::Linearizable,
        )
        .await
        .map_err(|_| format!("service account {who} has been deleted"))?;
    let account: Value = serde_json::from_slice(&stored).map_err(|e| e.to_string())?;
    let uid = account
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if uid != verified.user.uid {
        return Err(format!(
            "service account UID ({uid}) does not match claim ({})",
            verified.user.uid
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rsa::RsaPrivateKey;
    use rsa::pkcs8::EncodePrivateKey;
    use rsa::pkcs8::LineEnding;

    use super::*;
    use crate::RsaTokenSigner;

    fn claims(exp: i64, nbf: i64, sub: &str) -> Value {
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
        let ok = check(claims(2_000, 500, sa), &api).expect("valid");
        assert_eq!(ok.user.name, sa);
        assert_eq!(ok.user.uid, "u");
        assert_eq!(
            ok.user.extra["authentication.kubernetes.io/credential-id"],
            vec!["JTI=j".to_owned()]
        );
        assert_eq!(ok.audiences, api);
        let expired = check(claims(999, 500, sa), &api);
        assert_eq!(expired, Err("token has expired".to_owned()));
        let early = check(claims(2_000, 1_001, sa), &api);
        assert_eq!(early, Err("token is not valid yet".to_owned()));
        let elsewhere = check(claims(2_000, 500, sa), &["other".to_owned()]);
        assert!(elsewhere.is_err_and(|e| e.contains("target audiences")));
        let impostor = check(claims(2_000, 500, "system:serviceaccount:ns:other"), &api);
        assert_eq!(
            impostor,
            Err("token does not name a service account".to_owned())
        );
    }
}

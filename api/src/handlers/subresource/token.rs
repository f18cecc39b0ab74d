//! `serviceaccounts/<name>/token`: POST of an `authentication.<d>/v1` TokenRequest answers
//! it with a signed JWT for the service account (upstream's `TokenREST`): `sub`
//! `system:serviceaccount:<ns>:<name>`, the audiences asked for (default: the API server's),
//! `iat`/`nbf` the request time, `exp` `expirationSeconds` later (default one hour, at least
//! ten minutes), a fresh `jti`, and the `<label domain>` claim naming the namespace and the
//! service account. The request time is the handler's; the key is the configured signer's.

use chrono::DateTime;
use chrono::Duration;
use chrono::SecondsFormat;
use chrono::Utc;
use k8s_openapi::api::authentication::v1::TokenRequest;
use serde_json::Value;
use serde_json::json;

use super::Parent;
use super::ResourceRequest;
use super::body;
use crate::error::ApiError;
use crate::error::GroupKind;
use crate::error::excerpt;
use crate::flavor::Flavor;
use crate::validation::FieldError;

/// `expirationSeconds` when the request has none.
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// The shortest lifetime a token may ask for (upstream's `MinTokenAgeSec`).
const MIN_EXPIRATION_SECONDS: i64 = 600;
/// The longest (upstream's `MaxTokenAgeSec`, 2^32 seconds).
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;

/// What a token is issued for.
struct Grant<'a> {
    namespace: &'a str,
    name: &'a str,
    uid: &'a str,
    audiences: Vec<String>,
    issued: DateTime<Utc>,
    expiration_seconds: i64,
}

/// The claims of `grant` signed by `issuer` (upstream's `serviceaccount.Claims`); `jti` is
/// the token's unique id.
fn claims(grant: &Grant<'_>, issuer: &str, jti: &str, flavor: Flavor) -> Value {
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

fn invalid(flavor: Flavor, causes: Vec<FieldError>) -> ApiError {
    ApiError::Invalid {
        kind: GroupKind {
            group: format!("authentication.{}", flavor.group_domain()),
            kind: "TokenRequest".to_owned(),
        },
        name: String::new(),
        causes,
    }
}

/// Upstream's `ValidateTokenRequest` of the lifetime.
fn validate_expiration(seconds: i64) -> Vec<FieldError> {
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

/// Issues a token for the service account `parent`: 400 for a body naming another service
/// account or asking for a bound token (not served yet), 422 for a lifetime out of range,
/// 404 for a missing service account, 500 without a signer. Answers the TokenRequest with
/// its defaults filled in and `status.token` and `status.expirationTimestamp` set.
pub(super) async fn issue(
    parent: &Parent<'_>,
    req: &ResourceRequest<'_>,
) -> Result<Vec<u8>, ApiError> {
    let flavor = req.flavor;
    let api_version = format!("authentication.{}/v1", flavor.group_domain());
    let value = body::parse(&req.body)?;
    let request: TokenRequest = body::typed(&value, &[&api_version], "TokenRequest")?;
    let spec = request.spec.unwrap_or_default();
    for (field, given, want) in [
        ("name", &request.metadata.name, parent.name),
        ("namespace", &request.metadata.namespace, parent.namespace),
    ] {
        if let Some(given) = given.as_deref().filter(|g| !g.is_empty())
            && given != want
        {
            return Err(ApiError::BadRequest(format!(
                "the {field} of the TokenRequest ({}) does not match the service account's ({want})",
                excerpt(given)
            )));
        }
    }
    if spec.bound_object_ref.is_some() {
        return Err(ApiError::BadRequest(
            "spec.boundObjectRef: tokens bound to an object are not served yet".to_owned(),
        ));
    }
    let expiration_seconds = spec
        .expiration_seconds
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    let errs = validate_expiration(expiration_seconds);
    if !errs.is_empty() {
        return Err(invalid(flavor, errs));
    }
    let account = parent.read().await?;
    let signer = req.token_signer.as_deref().ok_or_else(|| {
        ApiError::Internal("no service account signing key is configured".to_owned())
    })?;
    let audiences = match spec.audiences {
        Some(audiences) if !audiences.is_empty() => audiences,
        _ => signer.default_audiences().to_vec(),
    };
    let grant = Grant {
        namespace: parent.namespace,
        name: parent.name,
        uid: account
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default(),
        audiences,
        issued: req.now,
        expiration_seconds,
    };
    let jti = req.random.uuid();
    let token = signer
        .sign(&claims(&grant, signer.issuer(), &jti, flavor))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let expires = req.now + Duration::seconds(expiration_seconds);
    let response = json!({
        "kind": "TokenRequest",
        "apiVersion": api_version,
        "metadata": {"name": parent.name, "namespace": parent.namespace},
        "spec": {"audiences": grant.audiences, "expirationSeconds": expiration_seconds},
        "status": {
            "token": token,
            "expirationTimestamp": expires.to_rfc3339_opts(SecondsFormat::Secs, true),
        },
    });
    Ok(response.to_string().into_bytes())
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
}

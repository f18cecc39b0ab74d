//! `serviceaccounts/<name>/token`: POST of an `authentication.<d>/v1` TokenRequest answers
//! it with a signed JWT for the service account (upstream's `TokenREST`): `sub`
//! `system:serviceaccount:<ns>:<name>`, the audiences asked for (default: the API server's),
//! `iat`/`nbf` the request time, `exp` `expirationSeconds` later (default one hour, at least
//! ten minutes), a fresh `jti`, and the `<label domain>` claim naming the namespace and the
//! service account. The request time is the caller's; the key is the configured signer's;
//! the claims are built and bounded in [`crate::serviceaccount`].

use chrono::DateTime;
use chrono::Duration;
use chrono::SecondsFormat;
use chrono::Utc;
use k8s_openapi::api::authentication::v1::TokenRequest;
use serde_json::Value;
use serde_json::json;

use super::Parent;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::flavor::Flavor;
use crate::group::GroupKind;
use crate::random::RandomSource;
use crate::serviceaccount::DEFAULT_EXPIRATION_SECONDS;
use crate::serviceaccount::Grant;
use crate::serviceaccount::TokenSigner;
use crate::serviceaccount::claims;
use crate::serviceaccount::validate_expiration;
use crate::validation::FieldError;

/// 422 on `TokenRequest` for `causes`.
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

/// Issues a token for the service account `parent` as the TokenRequest `request` asks, signed
/// by `signer` at `now`, its `jti` drawn from `random`: 400 for a request naming another service account or asking for a
/// bound token (not served yet), 422 for a lifetime out of range, 404 for a missing service
/// account, 500 without a signer. Answers the TokenRequest with
/// its defaults filled in and `status.token` and `status.expirationTimestamp` set.
pub(crate) async fn issue(
    parent: &Parent<'_>,
    request: TokenRequest,
    signer: Option<&dyn TokenSigner>,
    now: DateTime<Utc>,
    flavor: Flavor,
    random: &RandomSource,
) -> Result<Vec<u8>, ApiError> {
    let api_version = format!("authentication.{}/v1", flavor.group_domain());
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
    let signer = signer.ok_or_else(|| {
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
        issued: now,
        expiration_seconds,
    };
    let jti = random.uuid();
    let token = signer
        .sign(&claims(&grant, signer.issuer(), &jti, flavor))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let expires = now + Duration::seconds(expiration_seconds);
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

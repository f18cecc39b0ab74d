//! `tokenreviews` (authentication/v1 TokenReview): whether `spec.token` is one of our
//! service account tokens (signed by the configured signer, valid at the request time, for
//! one of the audiences asked for, its service account still there with the same uid), and
//! the user it authenticates. A token that fails answers `authenticated: false` with
//! `status.error`, never an HTTP error. The claims are checked in [`crate::serviceaccount`].

use chrono::DateTime;
use chrono::Utc;
use k8s_openapi::api::authentication::v1::TokenReviewSpec;
use serde_json::Value;
use serde_json::json;

use super::user_info;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::Registry;
use crate::serviceaccount::TokenSigner;
use crate::serviceaccount::Verified;
use crate::serviceaccount::verify;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// The status of a TokenReview of `spec` at `now`, checked with `signer`; 400 without a
/// token (upstream's wording).
pub(crate) async fn status(
    spec: TokenReviewSpec,
    signer: Option<&dyn TokenSigner>,
    now: DateTime<Utc>,
    flavor: Flavor,
    storage: &dyn Storage,
    registry: &Registry,
) -> Result<Value, ApiError> {
    let token = spec.token;
    if token.is_empty() {
        return Err(ApiError::BadRequest(
            "token is required for TokenReview in authentication".to_owned(),
        ));
    }
    let Some(signer) = signer else {
        return Ok(refused("no service account token signer is configured"));
    };
    let wanted = match spec.audiences {
        Some(audiences) if !audiences.is_empty() => audiences,
        _ => signer.default_audiences().to_vec(),
    };
    let status = match verify(signer, &token, &wanted, now, flavor) {
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
    Ok(status)
}

/// The status of a token that does not authenticate.
fn refused(reason: &str) -> Value {
    json!({
        "authenticated": false,
        "user": {},
        "error": format!("[invalid bearer token, {reason}]"),
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

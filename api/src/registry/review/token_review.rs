//! `tokenreviews` (authentication/v1 TokenReview): whether `spec.token` authenticates, asked
//! of the same token authenticators as a request's bearer token ([`TokenChain`]), for
//! `spec.audiences` (by default the API's), and the user and audiences it authenticates. A
//! token that fails answers `authenticated: false` with `status.error`, never an HTTP error.

use k8s_openapi::api::authentication::v1::TokenReviewSpec;
use serde_json::Value;
use serde_json::json;

use super::user_info;
use crate::auth::AuthContext;
use crate::auth::SYSTEM_AUTHENTICATED;
use crate::auth::TokenChain;
use crate::error::ApiError;

/// The status of a TokenReview of `spec`, asked of `tokens` in `context` (whose audiences are
/// the API's); 400 without a token (upstream's wording).
pub(crate) async fn status(
    spec: TokenReviewSpec,
    tokens: &TokenChain,
    context: &AuthContext<'_>,
) -> Result<Value, ApiError> {
    let token = spec.token;
    if token.is_empty() {
        return Err(ApiError::BadRequest(
            "token is required for TokenReview in authentication".to_owned(),
        ));
    }
    let asked = spec.audiences.unwrap_or_default();
    let context = if asked.is_empty() {
        *context
    } else {
        context.for_audiences(&asked)
    };
    let status = match tokens.authenticate(&token, &context).await {
        Ok(found) => {
            let mut user = found.user;
            if !user.in_group(SYSTEM_AUTHENTICATED) {
                user.groups.push(SYSTEM_AUTHENTICATED.to_owned());
            }
            let audiences = if found.audiences.is_empty() {
                context.audiences.to_vec()
            } else {
                found.audiences
            };
            json!({
                "authenticated": true,
                "user": user_info(&user),
                "audiences": audiences,
            })
        }
        Err(reasons) if reasons.is_empty() => refused("the token is not recognised"),
        Err(reasons) => refused(&reasons.join(", ")),
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

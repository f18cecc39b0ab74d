//! `selfsubjectrulesreviews` (authorization/v1 SelfSubjectRulesReview, `kubectl auth can-i
//! --list`): what the authorizer chain lets the caller do in `spec.namespace`, incomplete
//! when some authorizer cannot list its rules.

use k8s_openapi::api::authorization::v1::SelfSubjectRulesReview;
use serde_json::Value;
use serde_json::json;

use super::Review;
use crate::error::ApiError;

/// The request and its `status`.
pub(super) async fn review(review: &Review<'_>) -> Result<(Value, Value), ApiError> {
    let (value, typed): (Value, SelfSubjectRulesReview) = review.body()?;
    let namespace = typed.spec.namespace.unwrap_or_default();
    let rules = review.req.authz.rules(review.req.user, &namespace).await;
    let status = json!({
        "resourceRules": rules.resource,
        "nonResourceRules": rules.non_resource,
        "incomplete": rules.incomplete,
    });
    Ok((value, status))
}

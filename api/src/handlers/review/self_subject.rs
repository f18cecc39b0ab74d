//! `selfsubjectreviews` (authentication/v1 SelfSubjectReview, `kubectl auth whoami`): the
//! requesting user as authentication found it.

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use serde_json::Value;
use serde_json::json;

use super::Review;
use super::user_info;
use crate::error::ApiError;

/// The request and the `status` naming the caller in `userInfo`.
pub(super) fn review(review: &Review<'_>) -> Result<(Value, Value), ApiError> {
    let (value, _): (Value, SelfSubjectReview) = review.body()?;
    Ok((value, json!({"userInfo": user_info(review.req.user)})))
}

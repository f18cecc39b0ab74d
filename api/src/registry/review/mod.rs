//! The authentication and authorization reviews (upstream's virtual resources under
//! `registry/authentication` and `registry/authorization`): each decides a review's `status`
//! from its spec, the caller, the authorizer chain, the token signer and storage. Nothing is
//! stored; the HTTP handlers decode the review and echo it back with this status.

pub(crate) mod access;
pub(crate) mod rules;
mod selectors;
pub(crate) mod token_review;

use serde_json::Value;
use serde_json::json;

use crate::auth::UserInfo;
use crate::error::ApiError;
use crate::group::GroupKind;
use crate::registry::ResourceType;
use crate::validation::FieldError;

/// The status of a SelfSubjectReview (`kubectl auth whoami`): the caller as authentication
/// found them.
pub(crate) fn self_subject_status(user: &UserInfo) -> Value {
    json!({"userInfo": user_info(user)})
}

/// A user as the reviews spell one (`UserInfo` of authentication/v1): empty fields left out.
fn user_info(user: &UserInfo) -> Value {
    let mut out = json!({"username": user.name, "groups": user.groups});
    if !user.uid.is_empty() {
        out["uid"] = user.uid.clone().into();
    }
    if !user.extra.is_empty() {
        out["extra"] = json!(user.extra);
    }
    out
}

/// 422 for `causes`, naming the review's kind `rt`.
fn invalid(rt: &ResourceType, causes: Vec<FieldError>) -> ApiError {
    ApiError::Invalid {
        kind: GroupKind {
            group: rt.group.clone(),
            kind: rt.kind.clone(),
        },
        name: String::new(),
        causes,
    }
}

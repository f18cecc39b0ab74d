//! `selfsubjectrulesreviews` (authorization/v1 SelfSubjectRulesReview, `kubectl auth can-i
//! --list`): what the authorizer chain lets the caller do in `spec.namespace`, incomplete
//! when some authorizer cannot list its rules.

use serde_json::Value;
use serde_json::json;

use crate::auth::AuthorizerChain;
use crate::auth::UserInfo;

/// The status of a SelfSubjectRulesReview of `user` in `namespace`.
pub(crate) async fn status(authz: &AuthorizerChain, user: &UserInfo, namespace: &str) -> Value {
    let rules = authz.rules(user, namespace).await;
    json!({
        "resourceRules": rules.resource,
        "nonResourceRules": rules.non_resource,
        "incomplete": rules.incomplete,
    })
}

//! `selfsubjectrulesreviews` (authorization/v1 SelfSubjectRulesReview, `kubectl auth can-i
//! --list`): what the authorizer chain lets the caller do in `spec.namespace`, incomplete
//! when some authorizer cannot list its rules (`evaluationError` says why, when it says).

use serde_json::Value;
use serde_json::json;

use crate::auth::AuthorizerChain;
use crate::auth::UserInfo;

/// The status of a SelfSubjectRulesReview of `user` in `namespace`.
pub(crate) async fn status(authz: &AuthorizerChain, user: &UserInfo, namespace: &str) -> Value {
    let rules = authz.rules(user, namespace).await;
    let mut status = json!({
        "resourceRules": rules.resource,
        "nonResourceRules": rules.non_resource,
        "incomplete": rules.incomplete,
    });
    if let Some(error) = aggregate(&rules.evaluation_errors) {
        status["evaluationError"] = error.into();
    }
    status
}

/// Several errors as one text, as Kubernetes aggregates them: one as it is, more in brackets.
fn aggregate(errors: &[String]) -> Option<String> {
    match errors {
        [] => None,
        [one] => Some(one.clone()),
        many => Some(format!("[{}]", many.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::aggregate;

    // R-ACC-095: evaluationError joins the modes' errors as Kubernetes' aggregate error does.
    #[test]
    fn evaluation_errors_aggregate_as_kubernetes_writes_them() {
        assert_eq!(aggregate(&[]), None);
        assert_eq!(aggregate(&["a".into()]), Some("a".into()));
        assert_eq!(aggregate(&["a".into(), "b".into()]), Some("[a, b]".into()));
    }
}

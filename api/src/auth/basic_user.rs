//! What every authenticated user may do before RBAC grants anything (the rules of Kubernetes'
//! `system:basic-user` ClusterRole, R-ACC-017): ask who they are (SelfSubjectReview) and what
//! they may do (SelfSubjectAccessReview, SelfSubjectRulesReview).

use k8s_openapi::api::authorization::v1::ResourceRule;

use super::Attributes;
use super::Authorizer;
use super::Decision;
use super::Rules;
use super::SYSTEM_AUTHENTICATED;
use super::UserInfo;
use crate::flavor::Flavor;
use crate::request::Verb;

/// Allows members of `system:authenticated` to create the self reviews; no opinion otherwise.
#[derive(Debug, Clone)]
pub struct BasicUserAuthorizer {
    authentication: String,
    authorization: String,
}

impl BasicUserAuthorizer {
    /// The authorizer of the self reviews in `flavor`'s API groups.
    pub fn new(flavor: Flavor) -> Self {
        Self {
            authentication: format!("authentication.{}", flavor.group_domain()),
            authorization: format!("authorization.{}", flavor.group_domain()),
        }
    }

    fn grants(&self, group: &str, resource: &str) -> bool {
        (group == self.authentication && resource == "selfsubjectreviews")
            || (group == self.authorization
                && matches!(
                    resource,
                    "selfsubjectaccessreviews" | "selfsubjectrulesreviews"
                ))
    }
}

#[async_trait::async_trait]
impl Authorizer for BasicUserAuthorizer {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let request = attributes.request;
        let granted = attributes.user.in_group(SYSTEM_AUTHENTICATED)
            && request.is_resource_request
            && request.verb == Verb::Create
            && request.subresource.is_empty()
            && self.grants(&request.api_group, &request.resource);
        if granted {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    }

    async fn rules(&self, user: &UserInfo, _namespace: &str) -> Option<Rules> {
        if !user.in_group(SYSTEM_AUTHENTICATED) {
            return Some(Rules::default());
        }
        let rule = |group: &str, resources: &[&str]| ResourceRule {
            verbs: vec!["create".to_owned()],
            api_groups: Some(vec![group.to_owned()]),
            resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
            resource_names: None,
        };
        Some(Rules {
            resource: vec![
                rule(&self.authentication, &["selfsubjectreviews"]),
                rule(
                    &self.authorization,
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
            ],
            ..Rules::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::*;
    use crate::request::QueryParams;
    use crate::request::RequestInfo;

    async fn decide(groups: &[&str], method: Method, path: &str) -> Decision {
        let user = UserInfo {
            name: "bob".into(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        };
        let request = RequestInfo::parse(&method, path, &QueryParams::default());
        let attributes = Attributes {
            user: &user,
            request: &request,
        };
        BasicUserAuthorizer::new(Flavor::Kubernetes)
            .authorize(&attributes)
            .await
    }

    // R-ACC-017: every authenticated user may create SelfSubjectReviews, and nothing else
    // through this rule.
    #[tokio::test]
    async fn authenticated_users_may_create_self_reviews_only() {
        let authenticated = [SYSTEM_AUTHENTICATED];
        let whoami = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
        let access = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
        assert_eq!(
            decide(&authenticated, Method::POST, whoami).await,
            Decision::Allow
        );
        assert_eq!(
            decide(&authenticated, Method::POST, access).await,
            Decision::Allow
        );
        for (groups, method, path) in [
            (&[][..], Method::POST, whoami),
            (&authenticated[..], Method::GET, whoami),
            (
                &authenticated[..],
                Method::POST,
                "/apis/authentication.k8s.io/v1/tokenreviews",
            ),
            (
                &authenticated[..],
                Method::POST,
                "/apis/authentication.platform.io/v1/selfsubjectreviews",
            ),
        ] {
            assert!(
                matches!(
                    decide(groups, method.clone(), path).await,
                    Decision::NoOpinion(_)
                ),
                "{method} {path} for {groups:?}"
            );
        }
    }
}

//! Who may read the service account issuer discovery documents before RBAC grants anything:
//! service accounts (Kubernetes binds `system:service-account-issuer-discovery` to
//! `system:serviceaccounts`).

use k8s_openapi::api::authorization::v1::NonResourceRule;

use super::Attributes;
use super::Authorizer;
use super::Decision;
use super::Rules;
use super::SERVICE_ACCOUNTS;
use super::UserInfo;
use crate::request::Verb;

/// The non-resource paths of the discovery documents, with and without a trailing slash.
const PATHS: [&str; 4] = [
    "/.well-known/openid-configuration",
    "/.well-known/openid-configuration/",
    "/openid/v1/jwks",
    "/openid/v1/jwks/",
];

/// Allows service accounts to GET the issuer discovery documents; no opinion otherwise.
#[derive(Debug, Clone, Copy, Default)]
pub struct IssuerDiscoveryAuthorizer;

#[async_trait::async_trait]
impl Authorizer for IssuerDiscoveryAuthorizer {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let request = attributes.request;
        if attributes.user.in_group(SERVICE_ACCOUNTS)
            && !request.is_resource_request
            && request.verb == Verb::Other("get".to_owned())
            && PATHS.contains(&request.path.as_str())
        {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    }

    async fn rules(&self, user: &UserInfo, _namespace: &str) -> Option<Rules> {
        if !user.in_group(SERVICE_ACCOUNTS) {
            return Some(Rules::default());
        }
        Some(Rules {
            non_resource: vec![NonResourceRule {
                verbs: vec!["get".to_owned()],
                non_resource_urls: Some(PATHS.iter().map(|p| (*p).to_owned()).collect()),
            }],
            ..Rules::default()
        })
    }
}

//! The `system:monitoring` authorizer (R-ACC-191): members of that group may read the health
//! and metrics endpoints, as Kubernetes' bootstrap `system:monitoring` role allows them
//! (`get` on `/metrics`, `/metrics/slis`, `/livez`, `/readyz`, `/healthz` and their checks).

use k8s_openapi::api::authorization::v1::NonResourceRule;

use crate::auth::Attributes;
use crate::auth::Authorizer;
use crate::auth::Decision;
use crate::auth::Rules;
use crate::auth::UserInfo;
use crate::request::Verb;

/// The group allowed to read the health and metrics endpoints.
pub const SYSTEM_MONITORING: &str = "system:monitoring";

/// The paths the role grants, as its non-resource URLs spell them.
const URLS: [&str; 8] = [
    "/healthz",
    "/healthz/*",
    "/livez",
    "/livez/*",
    "/metrics",
    "/metrics/slis",
    "/readyz",
    "/readyz/*",
];

/// Allows members of `system:monitoring` to `get` the health and metrics paths; no opinion
/// on anything else.
#[derive(Debug, Clone, Copy, Default)]
pub struct MonitoringAuthorizer;

#[async_trait::async_trait]
impl Authorizer for MonitoringAuthorizer {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let request = attributes.request;
        let granted = attributes.user.in_group(SYSTEM_MONITORING)
            && !request.is_resource_request
            && request.verb == Verb::Other("get".to_owned())
            && URLS.iter().any(|url| matches(url, &request.path));
        if granted {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    }

    async fn rules(&self, user: &UserInfo, _namespace: &str) -> Option<Rules> {
        if !user.in_group(SYSTEM_MONITORING) {
            return Some(Rules::default());
        }
        Some(Rules {
            non_resource: vec![NonResourceRule {
                verbs: vec!["get".to_owned()],
                non_resource_urls: Some(URLS.iter().map(|u| (*u).to_owned()).collect()),
            }],
            ..Rules::default()
        })
    }
}

/// A non-resource URL rule: exact, or a prefix ending in `*`.
fn matches(rule: &str, path: &str) -> bool {
    match rule.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => rule == path,
    }
}

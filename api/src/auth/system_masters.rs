//! The `system:masters` authorizer: members of that group may do everything (R-ACC-168),
//! whatever later modes would answer.

use k8s_openapi::api::authorization::v1::NonResourceRule;
use k8s_openapi::api::authorization::v1::ResourceRule;

use super::Attributes;
use super::Authorizer;
use super::Decision;
use super::Rules;
use super::UserInfo;

/// The group with unrestricted access.
pub const SYSTEM_MASTERS: &str = "system:masters";

/// Allows members of `system:masters`; no opinion on everyone else.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemMastersAuthorizer;

#[async_trait::async_trait]
impl Authorizer for SystemMastersAuthorizer {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        if attributes.user.in_group(SYSTEM_MASTERS) {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    }

    /// Everything for members, nothing for anyone else: this mode knows all it grants.
    async fn rules(&self, user: &UserInfo, _namespace: &str) -> Option<Rules> {
        if !user.in_group(SYSTEM_MASTERS) {
            return Some(Rules::default());
        }
        let all = || Some(vec!["*".to_owned()]);
        Some(Rules {
            resource: vec![ResourceRule {
                verbs: vec!["*".to_owned()],
                api_groups: all(),
                resources: all(),
                resource_names: None,
            }],
            non_resource: vec![NonResourceRule {
                verbs: vec!["*".to_owned()],
                non_resource_urls: all(),
            }],
            incomplete: false,
        })
    }
}

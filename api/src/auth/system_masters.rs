//! The `system:masters` authorizer: members of that group may do everything (R-ACC-168),
//! whatever later modes would answer.

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
        Some(Rules::everything())
    }
}

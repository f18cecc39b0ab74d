//! The `system:masters` authorizer: members of that group may do everything (R-ACC-168),
//! whatever later modes would answer.

use super::Attributes;
use super::Authorizer;
use super::Decision;

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
}

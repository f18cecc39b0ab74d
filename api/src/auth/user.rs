//! The authenticated user (spec 001 "User attributes", R-ACC-005).

use std::collections::BTreeMap;

/// The group every authenticated user belongs to (R-ACC-006).
pub const SYSTEM_AUTHENTICATED: &str = "system:authenticated";

/// Who a request is from, as authentication found it; authorizers interpret it (R-ACC-007).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name.
    pub name: String,
    /// A unique id of the user (may be empty).
    pub uid: String,
    /// The user's groups.
    pub groups: Vec<String>,
    /// Further attributes.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

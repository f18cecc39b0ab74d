//! ServiceAccount: no rules beyond the generic metadata checks.

use crate::registry::Strategy;

/// The strategy of `v1` ServiceAccount.
#[derive(Debug, Default)]
pub struct ServiceAccountStrategy;

impl Strategy for ServiceAccountStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }
}

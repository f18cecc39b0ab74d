//! ServiceAccount: no rules beyond the generic metadata checks.

use k8s_openapi::api::core::v1::ServiceAccount;
use serde_json::Value;

use crate::registry::Strategy;
use crate::registry::strategy::decode_typed;

/// The strategy of `v1` ServiceAccount.
#[derive(Debug, Default)]
pub struct ServiceAccountStrategy;

impl Strategy for ServiceAccountStrategy {
    fn decode(&self, body: &[u8]) -> Result<Value, serde_json::Error> {
        decode_typed::<ServiceAccount>(body)
    }

    fn tracks_generation(&self) -> bool {
        false
    }
}

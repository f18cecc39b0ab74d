//! What one version of a definition compiles to, once per generation of the definition:
//! requests and status-only changes of the definition (its conditions) reuse it, so nothing
//! is compiled per request.

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

/// One version's compiled parts.
pub(super) struct Compiled {
    /// The version's `openAPIV3Schema`, as its definition gives it.
    pub schema: Arc<Value>,
}

impl Compiled {
    /// Compiles `version` (one of a definition's `spec.versions`).
    pub fn new(version: &Value) -> Self {
        let schema = version.pointer("/schema/openAPIV3Schema").cloned();
        Self {
            schema: Arc::new(schema.unwrap_or_else(|| json!({"type": "object"}))),
        }
    }
}

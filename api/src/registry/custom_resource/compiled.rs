//! What one version of a definition compiles to, once per generation of the definition:
//! requests and status-only changes of the definition (its conditions) reuse it, so nothing
//! is compiled per request.

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use crate::cel::ValidationRules;
use crate::codec::CustomColumns;
use crate::schema::structural::StructuralSchema;

/// One version's compiled parts.
pub(super) struct Compiled {
    /// The version's `openAPIV3Schema`, as its definition gives it.
    pub schema: Arc<Value>,
    /// Its structural schema: the body's decode tree, pruning, defaults, value validation.
    pub structural: Option<Arc<StructuralSchema>>,
    /// Its `x-kubernetes-validations` rules, if it has any.
    pub rules: Option<Arc<ValidationRules>>,
    /// Its printer columns.
    pub columns: Arc<CustomColumns>,
}

impl Compiled {
    /// Compiles `version` (one of a definition's `spec.versions`).
    pub fn new(version: &Value) -> Self {
        let schema = version.pointer("/schema/openAPIV3Schema").cloned();
        let schema = Arc::new(schema.unwrap_or_else(|| json!({"type": "object"})));
        // CRD validation bounds what these compile from; a failure here is a bug.
        let structural = match StructuralSchema::compile(&schema) {
            Ok(structural) => Some(Arc::new(structural)),
            Err(error) => {
                tracing::error!(%error, "a validated definition's schema does not compile");
                None
            }
        };
        let rules = match ValidationRules::compile(&schema) {
            Ok(rules) => (!rules.is_empty()).then(|| Arc::new(rules)),
            Err(error) => {
                tracing::error!(%error, "a validated definition's rules do not compile");
                None
            }
        };
        let columns = (version
            .get("additionalPrinterColumns")
            .and_then(Value::as_array))
        .map_or(&[][..], Vec::as_slice);
        Self {
            schema,
            structural,
            rules,
            columns: Arc::new(CustomColumns::compile(columns)),
        }
    }
}

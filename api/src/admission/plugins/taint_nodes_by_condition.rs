//! `TaintNodesByCondition`: a new Node gets the `node.<domain>/not-ready:NoSchedule` taint,
//! so nothing is scheduled onto it before its conditions say it is ready (Kubernetes' plugin
//! of that name; the node lifecycle controller removes the taint).

use serde_json::Value;
use serde_json::json;

use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// Taints Nodes on create.
pub struct TaintNodesByCondition {
    /// `node.<domain>/not-ready`.
    not_ready: String,
}

impl TaintNodesByCondition {
    /// The plugin for `flavor`'s taint name.
    pub fn new(flavor: Flavor) -> Self {
        Self {
            not_ready: format!("node.{}/not-ready", flavor.label_domain()),
        }
    }
}

#[async_trait::async_trait]
impl Plugin for TaintNodesByCondition {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        if attributes.operation != Operation::Create
            || !attributes.resource.group.is_empty()
            || attributes.resource.plural != "nodes"
            || !attributes.subresource.is_empty()
        {
            return Ok(());
        }
        let Some(node) = object.and_then(Value::as_object_mut) else {
            return Ok(());
        };
        let spec = node.entry("spec").or_insert_with(|| json!({}));
        let Some(spec) = spec.as_object_mut() else {
            return Ok(());
        };
        let taints = spec.entry("taints").or_insert_with(|| json!([]));
        if !taints.is_array() {
            *taints = json!([]);
        }
        let Some(taints) = taints.as_array_mut() else {
            return Ok(());
        };
        let tainted = taints.iter().any(|t| {
            t.get("key").and_then(Value::as_str) == Some(&self.not_ready)
                && t.get("effect").and_then(Value::as_str) == Some("NoSchedule")
        });
        if !tainted {
            taints.push(json!({"key": self.not_ready, "effect": "NoSchedule"}));
        }
        Ok(())
    }
}

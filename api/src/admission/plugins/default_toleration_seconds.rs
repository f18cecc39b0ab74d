//! `DefaultTolerationSeconds`: a pod that does not tolerate the `not-ready` and
//! `unreachable` NoExecute taints of nodes gets tolerations of them for 300 seconds, so a
//! node's short outage does not evict it at once (Kubernetes' plugin of that name).

use serde_json::Value;
use serde_json::json;

use super::pods::is_pod;
use super::tolerations;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// Kubernetes' `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds` default.
const DEFAULT_SECONDS: i64 = 300;

/// Adds the default NoExecute tolerations to pods on create and update.
pub struct DefaultTolerationSeconds {
    /// `node.<domain>/not-ready` and `node.<domain>/unreachable`.
    taints: [String; 2],
}

impl DefaultTolerationSeconds {
    /// The plugin for `flavor`'s taint names.
    pub fn new(flavor: Flavor) -> Self {
        let domain = flavor.label_domain();
        Self {
            taints: [
                format!("node.{domain}/not-ready"),
                format!("node.{domain}/unreachable"),
            ],
        }
    }
}

#[async_trait::async_trait]
impl Plugin for DefaultTolerationSeconds {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        if !matches!(attributes.operation, Operation::Create | Operation::Update)
            || !is_pod(attributes)
        {
            return Ok(());
        }
        let Some(spec) = object
            .and_then(|pod| pod.get_mut("spec"))
            .and_then(Value::as_object_mut)
        else {
            return Ok(());
        };
        let present = spec.get("tolerations").and_then(Value::as_array);
        let missing: Vec<&String> = (self.taints.iter())
            .filter(|taint| {
                !(present.into_iter().flatten()).any(|t| tolerations::covers(t, taint, "NoExecute"))
            })
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let list = spec.entry("tolerations").or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        if let Some(list) = list.as_array_mut() {
            list.extend(missing.into_iter().map(|key| {
                json!({
                    "key": key,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": DEFAULT_SECONDS,
                })
            }));
        }
        Ok(())
    }
}

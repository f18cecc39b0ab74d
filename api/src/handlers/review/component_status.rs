//! `componentstatuses` (core v1, deprecated upstream): one item per component this server
//! has. There is no scheduler or controller manager to probe and no etcd members, so the one
//! component is the replicated store as this replica reaches it, healthy when the readiness
//! seam says the replica can serve reads and writes (its reason stays in the logs).

use serde_json::Value;
use serde_json::json;

use crate::error::ApiError;
use crate::registry::ResourceType;
use crate::request::RequestInfo;
use crate::request::Verb;

/// The one component's name.
const STORE: &str = "store";

/// Whether `rt` is `componentstatuses`.
pub(super) fn serves(rt: &ResourceType) -> bool {
    rt.group.is_empty() && rt.plural == "componentstatuses"
}

/// The item named in `info`, or the list; `ready` is the replica's readiness.
pub(super) fn serve(rt: &ResourceType, info: &RequestInfo, ready: bool) -> Result<Value, ApiError> {
    match info.verb {
        Verb::Get if info.name == STORE => {
            let mut item = component(ready);
            item["kind"] = rt.kind.clone().into();
            item["apiVersion"] = rt.api_version().into();
            Ok(item)
        }
        Verb::Get => Err(ApiError::NotFound {
            resource: rt.group_resource(),
            name: info.name.clone(),
        }),
        Verb::List => Ok(json!({
            "kind": rt.list_kind,
            "apiVersion": rt.api_version(),
            "metadata": {},
            "items": [component(ready)],
        })),
        _ => Err(ApiError::MethodNotAllowed {
            resource: rt.group_resource(),
            name: info.name.clone(),
        }),
    }
}

/// The store's ComponentStatus.
fn component(ready: bool) -> Value {
    let condition = if ready {
        json!({"type": "Healthy", "status": "True", "message": "ok"})
    } else {
        json!({"type": "Healthy", "status": "False", "error": "the replica cannot serve reads and writes"})
    };
    json!({"metadata": {"name": STORE}, "conditions": [condition]})
}

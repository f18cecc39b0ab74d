//! What both document versions render alike: the `paths` object around the operations (each
//! version renders parameters and operations its own way), the status code texts, the end of
//! every operation (the 401 answer and Kubernetes' extensions) and the bearer-token security
//! scheme.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::params::Param;
use super::paths::Operation;
use super::paths::PathItem;

/// The `description` Kubernetes gives each status code.
pub fn status_text(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        _ => "Unauthorized",
    }
}

/// Ends the rendered operation `v` of `op`: its `responses` (those given, then the 401 every
/// operation can answer), then `x-kubernetes-action` and `x-kubernetes-group-version-kind`
/// when `op` has them.
pub fn finish_operation(v: &mut Value, op: &Operation, mut responses: Map<String, Value>) {
    responses.insert("401".into(), json!({"description": status_text(401)}));
    v["responses"] = responses.into();
    if let Some(action) = op.action {
        v["x-kubernetes-action"] = action.into();
    }
    if let Some(gvk) = &op.gvk {
        v["x-kubernetes-group-version-kind"] = gvk.clone();
    }
}

/// The `BearerToken` security scheme (v2 `securityDefinitions`, v3
/// `components.securitySchemes`), which every document's `security` names.
pub fn bearer_token_scheme() -> Value {
    json!({
        "type": "apiKey",
        "description": "Bearer Token authentication",
        "name": "authorization",
        "in": "header",
    })
}

/// The `paths` object of `items`, with `param` and `operation` rendering the parts.
pub fn paths_object(
    items: &[PathItem],
    param: fn(&Param) -> Value,
    operation: fn(&Operation) -> Value,
) -> Value {
    let mut paths = Map::new();
    for item in items {
        let mut entry = Map::new();
        for op in &item.ops {
            entry.insert(op.method.to_owned(), operation(op));
        }
        entry.insert("parameters".into(), item.params.iter().map(param).collect());
        paths.insert(item.path.clone(), entry.into());
    }
    paths.into()
}

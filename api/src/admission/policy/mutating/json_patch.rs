//! `patchType: JSONPatch`: the expression's list of `JSONPatch{op, path, from, value}`
//! applied to the object by the project's RFC 6902 engine ([`crate::patch`]); a failed
//! `test` operation leaves the object as it was, as Kubernetes' patcher does.

use serde_json::Map;
use serde_json::Value;

use crate::admission::policy::validator::type_name;
use crate::patch::PatchType;
use crate::patch::Shape;

/// `object` with the operations `result` applied, or Kubernetes' message for why they
/// cannot be.
pub fn apply(object: &Value, result: &cel::Value) -> Result<Value, String> {
    let cel::Value::List(items) = result else {
        return Err("type mismatch: JSONPatchType.expression should evaluate to array".to_owned());
    };
    let mut operations = Vec::with_capacity(items.len());
    for item in items.iter() {
        if !matches!(item, cel::Value::Map(_)) {
            return Err(format!(
                "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of {}",
                type_name(item)
            ));
        }
        let fields = item.json().map_err(|e| {
            format!(
                "JSONPath valueExpression evaluated to a type that could not marshal to JSON: {e}"
            )
        })?;
        let text = |name: &str| fields.get(name).and_then(Value::as_str).unwrap_or_default();
        let mut operation = Map::new();
        operation.insert("op".to_owned(), text("op").into());
        operation.insert("path".to_owned(), text("path").into());
        if !text("from").is_empty() {
            operation.insert("from".to_owned(), text("from").into());
        }
        if let Some(value) = fields.get("value") {
            operation.insert("value".to_owned(), value.clone());
        }
        operations.push(Value::Object(operation));
    }
    let body =
        serde_json::to_vec(&Value::Array(operations)).map_err(|e| format!("JSON Patch: {e}"))?;
    match crate::patch::apply(PatchType::Json, object.clone(), &body, Shape::untyped()) {
        Ok(patched) => Ok(patched),
        Err(e) if e.to_string().ends_with("test failed") => Ok(object.clone()),
        Err(e) => Err(format!("JSON Patch: {e}")),
    }
}

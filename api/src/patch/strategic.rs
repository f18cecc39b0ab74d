//! Kubernetes' strategic merge patch of objects (R-RES-117): a JSON merge patch whose lists
//! follow the markers of the built-in types (merged by key, unioned, or replaced) and whose
//! directives kubectl sends: `$patch: replace | delete`, `$retainKeys`,
//! `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`. Lists are in
//! [`super::strategic_list`]. Wording of the errors is upstream's (`mergepatch` package).
//!
//! Every value of the result is the current object's or the patch's at the same path (list
//! items keep their list's path), so the result nests no deeper than the deeper of the two;
//! the merge recurses only where the patch has a map or a list of maps, so no deeper than
//! the patch, which parsed within [`crate::limits::MAX_NESTING_DEPTH`]. Each map and list is
//! merged in one pass (keys removed together, sets and indexes instead of searches).

use std::collections::HashSet;

use serde_json::Map;
use serde_json::Value;

use super::PatchError;
use super::Shape;
use super::parse;
use super::strategic_list::merge_list;
use super::strategic_list::server_identities;
use super::strategic_list::set_element_order;
use super::value_hash::Hashed;
use crate::error::excerpt_json;
use crate::schema::markers::PatchStrategy;

/// The directive key of a map or list item.
pub(super) const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";

/// A malformed patch (400) in upstream's words.
pub(super) fn malformed(text: &str) -> PatchError {
    PatchError::Malformed(text.to_owned())
}

/// `current` with the strategic merge patch `body` applied; `shape` is where `current` is
/// in its kind's schema.
pub(super) fn apply(current: Value, body: &[u8], shape: Shape<'_>) -> Result<Value, PatchError> {
    let patch = parse(body, |e| PatchError::Malformed(e.to_string()))?;
    let patch = match patch {
        Value::Object(patch) => patch,
        Value::Null => Map::new(),
        other => {
            return Err(PatchError::Malformed(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                go_kind(&other)
            )));
        }
    };
    let Value::Object(original) = current else {
        return Err(malformed("invalid JSON document"));
    };
    merge_map(original, patch, shape).map(Value::Object)
}

/// How Go's JSON decoder names a value it cannot put into a map.
fn go_kind(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null | Value::Object(_) => "object",
    }
}

/// An error naming a directive value upstream does not know.
pub(super) fn unknown_directive(value: &Value, at: &Map<String, Value>) -> PatchError {
    PatchError::Malformed(format!(
        "Unknown patch type: {}, in map: {}",
        excerpt_json(value),
        excerpt_json(at)
    ))
}

/// Merges the field's object value: replaced whole when the field says so.
fn merge_field_map(
    original: Map<String, Value>,
    patch: Map<String, Value>,
    shape: Shape<'_>,
    strategy: Option<PatchStrategy>,
) -> Result<Map<String, Value>, PatchError> {
    if strategy == Some(PatchStrategy::Replace) {
        return Ok(patch);
    }
    merge_map(original, patch, shape)
}

/// `original` with `patch` merged in, key by key.
pub(super) fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    shape: Shape<'_>,
) -> Result<Map<String, Value>, PatchError> {
    if let Some(directive) = patch.shift_remove(DIRECTIVE) {
        return match directive.as_str() {
            Some("replace") => Ok(patch),
            Some("delete") => Ok(Map::new()),
            _ => Err(unknown_directive(&directive, &patch)),
        };
    }
    if let Some(keys) = patch.shift_remove(RETAIN_KEYS) {
        retain_keys(&mut original, &patch, &keys)?;
    }
    // Deletions from primitive lists come first, so the same field's additions are kept.
    for (key, values) in &patch {
        if let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            delete_from_primitive_list(&mut original, field, values)?;
        }
    }
    // The server's order of each list an order directive names, before it is merged.
    let mut orders = Vec::new();
    for (key, order) in &patch {
        if let Some(field) = key.strip_prefix(SET_ELEMENT_ORDER) {
            let server = server_identities(original.get(field), shape.field(field).1);
            orders.push((field.to_owned(), order.clone(), server));
        }
    }
    let mut removed = HashSet::new();
    for (key, value) in patch {
        if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) || key.starts_with(SET_ELEMENT_ORDER) {
            continue;
        }
        if value.is_null() {
            removed.insert(key);
            continue;
        }
        let (child, markers) = shape.field(&key);
        let slot = original.entry(key).or_insert(Value::Null);
        let merged = match (std::mem::take(slot), value) {
            (Value::Object(old), Value::Object(new)) => Value::Object(merge_field_map(
                old,
                new,
                child,
                markers.and_then(|m| m.patch_strategy),
            )?),
            (Value::Null, Value::Object(new)) => Value::Object(merge_field_map(
                Map::new(),
                new,
                child,
                markers.and_then(|m| m.patch_strategy),
            )?),
            (Value::Array(old), Value::Array(new)) => {
                Value::Array(merge_list(old, new, child.item(), markers)?)
            }
            (Value::Null, Value::Array(new)) => {
                Value::Array(merge_list(Vec::new(), new, child.item(), markers)?)
            }
            (_, new) => new,
        };
        *slot = merged;
    }
    if !removed.is_empty() {
        original.retain(|key, _| !removed.contains(key));
    }
    for (field, order, server) in orders {
        let (_, markers) = shape.field(&field);
        if let Some(Value::Array(list)) = original.get_mut(&field) {
            let merged = std::mem::take(list);
            *list = set_element_order(merged, &order, &server, markers)?;
        } else if !order.is_array() {
            return Err(malformed("invalid patch format of setElementOrder list"));
        }
    }
    Ok(original)
}

/// `$retainKeys`: every field of the patch must be listed, and the original keeps only the
/// listed fields (a union's other members are cleared).
fn retain_keys(
    original: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    keys: &Value,
) -> Result<(), PatchError> {
    let bad = || malformed("invalid patch format of retainKeys");
    let keys: HashSet<&str> = keys
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|k| k.as_str().ok_or_else(bad))
        .collect::<Result<_, _>>()?;
    for (key, value) in patch {
        let directive =
            key.starts_with(DELETE_FROM_PRIMITIVE_LIST) || key.starts_with(SET_ELEMENT_ORDER);
        if !value.is_null() && !directive && !keys.contains(&key.as_str()) {
            return Err(bad());
        }
    }
    original.retain(|key, _| keys.contains(&key.as_str()));
    Ok(())
}

/// `$deleteFromPrimitiveList/<field>`: the listed values leave the original's list.
fn delete_from_primitive_list(
    original: &mut Map<String, Value>,
    field: &str,
    values: &Value,
) -> Result<(), PatchError> {
    let values: HashSet<Hashed<'_>> = values
        .as_array()
        .ok_or_else(|| malformed("invalid patch format of primitive list"))?
        .iter()
        .map(Hashed)
        .collect();
    if let Some(Value::Array(list)) = original.get_mut(field) {
        list.retain(|item| !values.contains(&Hashed(item)));
    }
    Ok(())
}

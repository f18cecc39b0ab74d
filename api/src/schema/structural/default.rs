//! Structural defaulting (apiextensions' `defaulting`): `null` of a non-nullable field
//! without a default is dropped, then every unset property with a `default` gets a copy of
//! it (so does a non-nullable `null`), in objects, map values and list items alike.

use serde_json::Value;

use super::node::Id;
use super::node::Node;
use crate::limits::MAX_NESTING_DEPTH;

/// Whether `v` is a `null` that node `id` does not allow.
fn non_nullable_null<'n>(nodes: &'n [Node], v: &Value, id: Option<Id>) -> Option<&'n Node> {
    let node = nodes.get(id?)?;
    (v.is_null() && !node.nullable).then_some(node)
}

/// Drops the object fields holding a `null` their node neither allows nor defaults.
pub(super) fn drop_nulls(nodes: &[Node], v: &mut Value, id: Option<Id>, depth: usize) {
    if depth > MAX_NESTING_DEPTH {
        return;
    }
    let node = id.and_then(|id| nodes.get(id));
    match v {
        Value::Object(map) => map.retain(|k, child| {
            let sub = node.and_then(|n| n.field(k));
            if non_nullable_null(nodes, child, sub).is_some_and(|n| n.default.is_none()) {
                return false;
            }
            drop_nulls(nodes, child, sub, depth + 1);
            true
        }),
        Value::Array(list) => {
            let items = node.and_then(|n| n.items);
            for item in list {
                drop_nulls(nodes, item, items, depth + 1);
            }
        }
        _ => {}
    }
}

/// Fills the defaults of `v` at node `id`.
pub(super) fn fill(nodes: &[Node], v: &mut Value, id: Id, depth: usize) {
    let Some(node) = nodes.get(id) else {
        return;
    };
    if depth > MAX_NESTING_DEPTH {
        return;
    }
    match v {
        Value::Object(map) => {
            for (name, &prop) in &node.properties {
                let Some(default) = nodes.get(prop).and_then(|p| p.default.as_ref()) else {
                    continue;
                };
                let unset = match map.get(name) {
                    None => true,
                    Some(current) => non_nullable_null(nodes, current, Some(prop)).is_some(),
                };
                if unset {
                    map.insert(name.clone(), default.clone());
                }
            }
            for (k, child) in map.iter_mut() {
                if let Some(&prop) = node.properties.get(k) {
                    fill(nodes, child, prop, depth + 1);
                } else if let Some(values) = node.additional {
                    default_null(nodes, child, values);
                    fill(nodes, child, values, depth + 1);
                }
            }
        }
        Value::Array(list) => {
            if let Some(items) = node.items {
                for item in list {
                    default_null(nodes, item, items);
                    fill(nodes, item, items, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Replaces a non-nullable `null` by node `id`'s default, if it has one.
fn default_null(nodes: &[Node], v: &mut Value, id: Id) {
    if let Some(default) = non_nullable_null(nodes, v, Some(id)).and_then(|n| n.default.clone()) {
        *v = default;
    }
}

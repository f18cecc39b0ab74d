//! Lists in a strategic merge patch: replaced unless their field says `patchStrategy=merge`;
//! then object items merge by their merge key (`$patch: delete` removes one, `$patch:
//! replace` replaces the list) and scalar items are unioned. The result is ordered as
//! upstream orders it: the patch's items in the patch's order (or `$setElementOrder`'s), the
//! server-only items woven in at their places in the server's list.

use serde_json::Map;
use serde_json::Value;

use super::PatchError;
use super::Shape;
use super::strategic::DIRECTIVE;
use super::strategic::malformed;
use super::strategic::merge_map;
use super::strategic::unknown_directive;
use crate::schema::markers::Markers;

/// What identifies an item: its merge key's value (objects), or itself (scalars).
fn identity<'v>(item: &'v Value, merge_key: Option<&str>) -> Option<&'v Value> {
    match (item, merge_key) {
        (Value::Object(m), Some(key)) => m.get(key),
        (Value::Object(_), None) => None,
        (scalar, _) => Some(scalar),
    }
}

fn position(list: &[Option<&Value>], id: Option<&Value>) -> Option<usize> {
    id.and_then(|id| list.iter().position(|x| *x == Some(id)))
}

/// `original` merged with `patch` as the field's `markers` say.
pub(super) fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    items: Shape<'_>,
    markers: Option<&Markers>,
) -> Result<Vec<Value>, PatchError> {
    let merges = markers
        .and_then(|m| m.patch_strategy)
        .is_some_and(|s| s.merges());
    if !merges {
        return Ok(patch);
    }
    if original.iter().chain(&patch).any(Value::is_array) {
        return Err(PatchError::NotApplicable(
            "lists of lists are not supported".to_owned(),
        ));
    }
    let objects = original.iter().chain(&patch).any(Value::is_object);
    if !objects {
        let server = original.clone();
        let mut merged = original;
        for item in &patch {
            if !merged.contains(item) {
                merged.push(item.clone());
            }
        }
        return Ok(normalize(merged, &patch, &server, None));
    }
    let Some(key) = markers.and_then(|m| m.patch_merge_key) else {
        return Err(PatchError::Malformed(
            "cannot merge lists without merge key".to_owned(),
        ));
    };
    merge_objects(original, patch, items, key)
}

fn as_item(item: Value) -> Result<Map<String, Value>, PatchError> {
    match item {
        Value::Object(m) => Ok(m),
        other => Err(PatchError::Malformed(format!(
            "a list of objects holds a {other}"
        ))),
    }
}

fn no_merge_key(item: &Map<String, Value>, key: &str) -> PatchError {
    PatchError::Malformed(format!(
        "map: {} does not contain declared merge key: {key}",
        Value::Object(item.clone())
    ))
}

/// Object items merged by `key`, after the items' own directives.
fn merge_objects(
    original: Vec<Value>,
    patch: Vec<Value>,
    items: Shape<'_>,
    key: &str,
) -> Result<Vec<Value>, PatchError> {
    let server = original.clone();
    let mut merged = original;
    let mut updates = Vec::new();
    let mut replace = false;
    for item in patch {
        let mut item = as_item(item)?;
        match item.shift_remove(DIRECTIVE) {
            None => updates.push(item),
            Some(d) if d == "delete" => {
                let id = item.get(key).ok_or_else(|| no_merge_key(&item, key))?;
                merged.retain(|m| m.get(key) != Some(id));
            }
            Some(d) if d == "replace" => replace = true,
            Some(d) if d == "merge" => {
                return Err(malformed(
                    "merging lists cannot yet be specified in the patch",
                ));
            }
            Some(d) => return Err(unknown_directive(&d, &item)),
        }
    }
    if replace {
        return Ok(updates.into_iter().map(Value::Object).collect());
    }
    let mut order = Vec::with_capacity(updates.len());
    for update in updates {
        let id = update
            .get(key)
            .cloned()
            .ok_or_else(|| no_merge_key(&update, key))?;
        match merged.iter_mut().find(|m| m.get(key) == Some(&id)) {
            Some(slot) => {
                let old = as_item(std::mem::take(slot))?;
                *slot = Value::Object(merge_map(old, update, items)?);
            }
            None => merged.push(Value::Object(merge_map(Map::new(), update, items)?)),
        }
        order.push(Value::Object(Map::from_iter([(key.to_owned(), id)])));
    }
    Ok(normalize(merged, &order, &server, Some(key)))
}

/// `$setElementOrder/<field>`: `merged` reordered by `order`, the server-only items at their
/// places in `server` (the list before the patch).
pub(super) fn set_element_order(
    merged: Vec<Value>,
    order: &Value,
    server: &Value,
    markers: Option<&Markers>,
) -> Result<Vec<Value>, PatchError> {
    let Some(order) = order.as_array() else {
        return Err(malformed("invalid patch format of setElementOrder list"));
    };
    let merges = markers
        .and_then(|m| m.patch_strategy)
        .is_some_and(|s| s.merges());
    if !merges {
        return Ok(merged);
    }
    let key = markers.and_then(|m| m.patch_merge_key);
    let server = server.as_array().map(Vec::as_slice).unwrap_or_default();
    Ok(normalize(merged, order, server, key))
}

/// Upstream's `normalizeElementOrder`: the items named in `order` in that order, woven with
/// the others in their `server` order.
fn normalize(
    merged: Vec<Value>,
    order: &[Value],
    server: &[Value],
    key: Option<&str>,
) -> Vec<Value> {
    let order_ids: Vec<Option<&Value>> = order.iter().map(|o| identity(o, key)).collect();
    let server_ids: Vec<Option<&Value>> = server.iter().map(|s| identity(s, key)).collect();
    let (mut patched, mut server_only): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|m| position(&order_ids, identity(m, key)).is_some());
    patched.sort_by_key(|m| position(&order_ids, identity(m, key)));
    server_only.sort_by_key(|m| position(&server_ids, identity(m, key)).unwrap_or(usize::MAX));
    let mut out = Vec::with_capacity(patched.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patched.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                let li = position(&server_ids, identity(l, key));
                let ri = position(&server_ids, identity(r, key));
                matches!((li, ri), (Some(li), Some(ri)) if li < ri)
            }
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out
}

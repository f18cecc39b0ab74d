//! Lists in a strategic merge patch: replaced unless their field says `patchStrategy=merge`;
//! then object items merge by their merge key (`$patch: delete` removes one, `$patch:
//! replace` replaces the list) and scalar items are unioned. The result is ordered as
//! upstream orders it: the patch's items in the patch's order (or `$setElementOrder`'s), the
//! server-only items woven in at their places in the server's list.
//!
//! Items are found through hash indexes of their identities, so a merge costs time in
//! proportion to the lists' lengths (and a sort), not to their product.

use std::collections::HashMap;
use std::collections::HashSet;

use serde_json::Map;
use serde_json::Value;

use super::PatchError;
use super::Shape;
use super::strategic::DIRECTIVE;
use super::strategic::malformed;
use super::strategic::merge_map;
use super::strategic::unknown_directive;
use super::value_hash::Hashed;
use super::value_hash::fingerprint;
use crate::error::excerpt_json;
use crate::schema::markers::Markers;

/// What identifies an item: its merge key's value (objects), or itself (scalars).
fn identity<'v>(item: &'v Value, merge_key: Option<&str>) -> Option<&'v Value> {
    match (item, merge_key) {
        (Value::Object(m), Some(key)) => m.get(key),
        (Value::Object(_), None) => None,
        (scalar, _) => Some(scalar),
    }
}

/// The identities of `list`'s items in order: what ordering the merged list needs of the
/// server's list, which the merge consumes.
fn identities(list: &[Value], key: Option<&str>) -> Vec<Option<Value>> {
    list.iter()
        .map(|item| identity(item, key).cloned())
        .collect()
}

/// The identities of the server's `list` (a field's value, if it is a list) as the field's
/// `markers` identify its items, for [`set_element_order`].
pub(super) fn server_identities(
    list: Option<&Value>,
    markers: Option<&Markers>,
) -> Vec<Option<Value>> {
    let key = markers.and_then(|m| m.patch_merge_key);
    match list {
        Some(Value::Array(items)) => identities(items, key),
        _ => Vec::new(),
    }
}

/// Where each identity first appears among `ids`.
fn first_positions<'v>(ids: impl Iterator<Item = Option<&'v Value>>) -> HashMap<Hashed<'v>, usize> {
    let mut positions = HashMap::new();
    for (at, id) in ids.enumerate() {
        if let Some(id) = id {
            positions.entry(Hashed(id)).or_insert(at);
        }
    }
    positions
}

/// The items of a list being merged, found by the fingerprint of their merge key's value;
/// a hit is confirmed against the item, as the item's key may have changed since.
#[derive(Default)]
struct ItemIndex {
    at: HashMap<u64, Vec<usize>>,
}

impl ItemIndex {
    fn add(&mut self, id: &Value, at: usize) {
        self.at.entry(fingerprint(id)).or_default().push(at);
    }

    /// The first item of `list` whose `key` is `id`.
    fn find(&self, list: &[Value], key: &str, id: &Value) -> Option<usize> {
        let candidates = self.at.get(&fingerprint(id))?;
        candidates
            .iter()
            .copied()
            .find(|&at| list[at].get(key) == Some(id))
    }
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
        let mut seen: HashSet<Hashed<'_>> = original.iter().map(Hashed).collect();
        let added: Vec<Value> = patch
            .iter()
            .filter(|item| seen.insert(Hashed(item)))
            .cloned()
            .collect();
        drop(seen);
        let server = identities(&original, None);
        let mut merged = original;
        merged.extend(added);
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
            "a list of objects holds a {}",
            excerpt_json(&other)
        ))),
    }
}

fn no_merge_key(item: &Map<String, Value>, key: &str) -> PatchError {
    PatchError::Malformed(format!(
        "map: {} does not contain declared merge key: {key}",
        excerpt_json(item)
    ))
}

/// Object items merged by `key`, after the items' own directives.
fn merge_objects(
    original: Vec<Value>,
    patch: Vec<Value>,
    items: Shape<'_>,
    key: &str,
) -> Result<Vec<Value>, PatchError> {
    let mut deleted = Vec::new();
    let mut updates = Vec::new();
    let mut replace = false;
    for item in patch {
        let mut item = as_item(item)?;
        match item.shift_remove(DIRECTIVE) {
            None => updates.push(item),
            Some(d) if d == "delete" => {
                let id = item.get(key).ok_or_else(|| no_merge_key(&item, key))?;
                deleted.push(id.clone());
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
    let server = identities(&original, Some(key));
    let mut merged = original;
    if !deleted.is_empty() {
        let deleted: HashSet<Hashed<'_>> = deleted.iter().map(Hashed).collect();
        merged.retain(|m| m.get(key).is_none_or(|id| !deleted.contains(&Hashed(id))));
    }
    let mut index = ItemIndex::default();
    for (at, item) in merged.iter().enumerate() {
        if let Some(id) = item.get(key) {
            index.add(id, at);
        }
    }
    let mut order = Vec::with_capacity(updates.len());
    for update in updates {
        let id = update
            .get(key)
            .cloned()
            .ok_or_else(|| no_merge_key(&update, key))?;
        match index.find(&merged, key, &id) {
            Some(at) => {
                let old = as_item(std::mem::take(&mut merged[at]))?;
                merged[at] = Value::Object(merge_map(old, update, items)?);
            }
            None => {
                index.add(&id, merged.len());
                merged.push(Value::Object(merge_map(Map::new(), update, items)?));
            }
        }
        order.push(Value::Object(Map::from_iter([(key.to_owned(), id)])));
    }
    Ok(normalize(merged, &order, &server, Some(key)))
}

/// `$setElementOrder/<field>`: `merged` reordered by `order`, the server-only items at their
/// places in `server` (the identities of the list before the patch).
pub(super) fn set_element_order(
    merged: Vec<Value>,
    order: &Value,
    server: &[Option<Value>],
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
    Ok(normalize(merged, order, server, key))
}

/// Upstream's `normalizeElementOrder`: the items named in `order` in that order, woven with
/// the others in their order in the server's list (of which `server` are the identities).
fn normalize(
    merged: Vec<Value>,
    order: &[Value],
    server: &[Option<Value>],
    key: Option<&str>,
) -> Vec<Value> {
    let in_order = first_positions(order.iter().map(|o| identity(o, key)));
    let in_server = first_positions(server.iter().map(Option::as_ref));
    // (place in the order, place in the server's list, item)
    let mut patched: Vec<(usize, Option<usize>, Value)> = Vec::new();
    let mut server_only: Vec<(Option<usize>, Value)> = Vec::new();
    for item in merged {
        let id = identity(&item, key).map(Hashed);
        let ordered = id.and_then(|id| in_order.get(&id).copied());
        let served = id.and_then(|id| in_server.get(&id).copied());
        match ordered {
            Some(ordered) => patched.push((ordered, served, item)),
            None => server_only.push((served, item)),
        }
    }
    patched.sort_by_key(|(ordered, _, _)| *ordered);
    server_only.sort_by_key(|(served, _)| served.unwrap_or(usize::MAX));
    let mut out = Vec::with_capacity(patched.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patched.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((li, _)), Some((_, ri, _))) => {
                matches!((li, ri), (Some(li), Some(ri)) if li < ri)
            }
        };
        if take_left {
            out.extend(left.next().map(|(_, item)| item));
        } else {
            out.extend(right.next().map(|(_, _, item)| item));
        }
    }
    out
}

//! The merge of an applied configuration into the live object (structured-merge-diff's
//! `TypedValue.Merge`), following what [`Shape::structure`] makes of each place: granular
//! structs and maps merge key by key, atomic values, scalars and atomic lists take the
//! configuration's value whole, sets and map lists merge their items by identity (value, or
//! list map keys) in structured-merge-diff's order.
//!
//! The recursion follows the configuration, which parsed within
//! [`crate::limits::MAX_NESTING_DEPTH`], so it is no deeper than the parser allowed.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use serde_json::Map;
use serde_json::Value;

use crate::patch::ListKind;
use crate::patch::Shape;
use crate::patch::Structure;
use crate::patch::fieldpath::DisplayPath;
use crate::patch::fieldpath::PathElement;
use crate::patch::fieldpath::item_element;
use crate::schema::markers::Markers;

/// `config` merged into `live` at `shape` (the root of a kind's schema, or untyped); the
/// error names the path of a list item that cannot be identified or is in `config` twice.
pub fn merge(live: &Value, config: &Value, shape: Shape<'_>) -> Result<Value, String> {
    merge_value(Some(live), config, shape, None, &mut Vec::new())
}

/// The error of `why` at `path`, worded as structured-merge-diff words validation errors.
fn at(path: &[PathElement], why: impl std::fmt::Display) -> String {
    format!("{}: {why}", DisplayPath(path))
}

fn merge_value(
    live: Option<&Value>,
    config: &Value,
    shape: Shape<'_>,
    markers: Option<&'static Markers>,
    path: &mut Vec<PathElement>,
) -> Result<Value, String> {
    match shape.structure(markers, config) {
        Structure::Struct { atomic: false } | Structure::Map { atomic: false } => {
            let Value::Object(config) = config else {
                return Ok(config.clone());
            };
            let mut out = match live {
                Some(Value::Object(live)) => live.clone(),
                _ => Map::new(),
            };
            for (name, value) in config {
                if value.is_null() {
                    out.remove(name);
                    continue;
                }
                let (child, marked) = shape.field(name);
                path.push(PathElement::Field(name.clone()));
                let merged = merge_value(out.get(name), value, child, marked, path)?;
                path.pop();
                out.insert(name.clone(), merged);
            }
            Ok(Value::Object(out))
        }
        Structure::List(list_type @ (ListKind::Set | ListKind::Map(_))) => {
            let Value::Array(config) = config else {
                return Ok(config.clone());
            };
            let live = match live {
                Some(Value::Array(live)) => live.as_slice(),
                _ => &[],
            };
            merge_list(live, config, list_type, shape.item(), path).map(Value::Array)
        }
        Structure::Scalar
        | Structure::Struct { atomic: true }
        | Structure::Map { atomic: true }
        | Structure::List(ListKind::Atomic) => Ok(config.clone()),
    }
}

/// Each element of a list and its item (`None`: the element is there twice).
type Observed<'v> = BTreeMap<PathElement, Option<&'v Value>>;

/// The elements of `items`, and each element's item (`None` for an element that is there
/// twice: such live items are not merged, only replaced). Twice in the configuration is an
/// error.
fn index<'v>(
    items: &'v [Value],
    list_type: ListKind<'_>,
    item_shape: Shape<'_>,
    duplicates_allowed: bool,
    path: &[PathElement],
) -> Result<(Vec<PathElement>, Observed<'v>), String> {
    let mut elements = Vec::with_capacity(items.len());
    let mut observed = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let element = item_element(list_type, item, item_shape, path, i)?;
        match observed.get_mut(&element) {
            None => {
                observed.insert(element.clone(), Some(item));
            }
            Some(_) if !duplicates_allowed => {
                return Err(at(path, format!("duplicate entries for key {element}")));
            }
            Some(seen) => *seen = None,
        }
        elements.push(element);
    }
    Ok((elements, observed))
}

/// A set or map list merged item by item. The order is structured-merge-diff's: the live
/// items in their order, the configuration's items placed where the configuration puts them
/// among the items both lists have, new configuration items after the shared item before them.
fn merge_list(
    live: &[Value],
    config: &[Value],
    list_type: ListKind<'_>,
    item_shape: Shape<'_>,
    path: &mut Vec<PathElement>,
) -> Result<Vec<Value>, String> {
    let (config_ids, in_config) = index(config, list_type, item_shape, false, path)?;
    let (live_ids, in_live) = index(live, list_type, item_shape, true, path)?;
    let mut shared = config_ids.iter().filter(|id| in_live.contains_key(*id));
    let mut next_shared = shared.next();
    let mut merged: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let mut merge_item = |id: &PathElement, live: Option<&Value>, config: Option<&Value>| {
        path.push(id.clone());
        let item = match config {
            Some(config) => merge_value(live, config, item_shape, None, path),
            None => Ok(live.cloned().unwrap_or(Value::Null)),
        };
        path.pop();
        item
    };
    let (mut l, mut r) = (0, 0);
    while l < live_ids.len() || r < config_ids.len() {
        if l < live_ids.len() && r < config_ids.len() {
            let id = &live_ids[l];
            if *id == config_ids[r] {
                merged.insert(id);
                let live_item = in_live.get(id).copied().flatten();
                out.push(merge_item(id, live_item, in_config[id])?);
                l += 1;
                r += 1;
                next_shared = shared.next();
                continue;
            }
            if in_config.contains_key(id) && next_shared.is_some_and(|next| next != id) {
                l += 1;
                continue;
            }
        }
        if l < live_ids.len() {
            let id = &live_ids[l];
            if !in_config.contains_key(id) {
                out.push(merge_item(id, Some(&live[l]), None)?);
                l += 1;
                continue;
            }
            if merged.contains(id) {
                l += 1;
                continue;
            }
        }
        if r < config_ids.len() {
            let id = &config_ids[r];
            merged.insert(id);
            let live_item = in_live.get(id).copied().flatten();
            out.push(merge_item(id, live_item, in_config[id])?);
            r += 1;
            if next_shared == Some(id) {
                next_shared = shared.next();
            }
        }
    }
    Ok(out)
}

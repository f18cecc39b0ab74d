//! What changed between two versions of an object, as field sets (structured-merge-diff's
//! `Compare`): the fields added, modified and removed. A field manager's Update entry is built
//! from it.
//!
//! The walk follows both values level by level, so it is as deep as the deeper of them.

use std::collections::BTreeMap;

use serde_json::Map;
use serde_json::Value;

use super::PathElement;
use super::Set;
use super::typed::item_element;
use crate::patch::ListKind;
use crate::patch::Shape;
use crate::patch::Structure;
use crate::schema::markers::Markers;

/// The fields that differ between two versions of an object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// In the new version only; a map, struct or list item that appeared is listed itself as
    /// well as its fields.
    pub added: Set,
    /// In both, with different values (leaves only: scalars and atomic values).
    pub modified: Set,
    /// In the old version only, listed as [`Comparison::added`] lists.
    pub removed: Set,
}

impl Comparison {
    /// Whether the versions are the same.
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }
}

/// The comparison of `old` and `new`, both objects at `shape`. The old version of a created
/// object is the empty object `{}`. List items that cannot be identified (a map-list item
/// without its key) are compared by position.
pub fn compare(old: &Value, new: &Value, shape: Shape<'_>) -> Comparison {
    let mut comparison = Comparison::default();
    compare_at(
        Some(old),
        Some(new),
        shape,
        None,
        &mut Vec::new(),
        &mut comparison,
    );
    comparison
}

fn compare_at(
    old: Option<&Value>,
    new: Option<&Value>,
    shape: Shape<'_>,
    markers: Option<&'static Markers>,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) {
    let Some(either) = new.or(old) else {
        return;
    };
    let structure = shape.structure(markers, either);
    let same_structure = match (old, new) {
        (Some(o), Some(n)) => shape.structure(markers, o) == shape.structure(markers, n),
        _ => true,
    };
    let is_empty = |v: Option<&Value>| match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(items)) => items.is_empty(),
        Some(_) => false,
    };
    let leaf = !same_structure
        || match structure {
            Structure::Scalar
            | Structure::Struct { atomic: true }
            | Structure::Map { atomic: true }
            | Structure::List(ListKind::Atomic) => true,
            _ => is_empty(old) && is_empty(new),
        };
    if leaf {
        match (old, new) {
            (None, _) => out.added.insert(path),
            (_, None) => out.removed.insert(path),
            (Some(o), Some(n)) if o != n => out.modified.insert(path),
            _ => {}
        }
        return;
    }
    match structure {
        Structure::List(list_type) => {
            compare_items(list_type, items(old), items(new), shape.item(), path, out);
        }
        _ => {
            let (old_map, new_map) = (fields(old), fields(new));
            let keys = old_map
                .keys()
                .chain(new_map.keys().filter(|k| !old_map.contains_key(*k)));
            for key in keys {
                let (child_shape, child_markers) = shape.field(key);
                path.push(PathElement::Field(key.clone()));
                compare_at(
                    old_map.get(key),
                    new_map.get(key),
                    child_shape,
                    child_markers,
                    path,
                    out,
                );
                path.pop();
            }
        }
    }
    match (old, new) {
        (None, _) => out.added.insert(path),
        (_, None) => out.removed.insert(path),
        _ => {}
    }
}

fn fields(value: Option<&Value>) -> &Map<String, Value> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    value.and_then(Value::as_object).unwrap_or(&EMPTY)
}

fn items(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The items of two versions of a list, paired by their elements; an element that names
/// several items on one side is compared as a whole.
fn compare_items(
    list_type: ListKind<'_>,
    old: &[Value],
    new: &[Value],
    item_shape: Shape<'_>,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) {
    let mut order: Vec<PathElement> = Vec::new();
    let mut sides: BTreeMap<PathElement, (Vec<&Value>, Vec<&Value>)> = BTreeMap::new();
    for (side, list) in [(0, old), (1, new)] {
        for (i, item) in list.iter().enumerate() {
            let element =
                item_element(list_type, item, item_shape, path, i).unwrap_or(PathElement::Index(i));
            let entry = sides.entry(element.clone()).or_insert_with(|| {
                order.push(element);
                (Vec::new(), Vec::new())
            });
            if side == 0 {
                entry.0.push(item);
            } else {
                entry.1.push(item);
            }
        }
    }
    for element in order {
        let Some((old_items, new_items)) = sides.get(&element) else {
            continue;
        };
        path.push(element);
        match (old_items.len(), new_items.len()) {
            (0..=1, 0..=1) => compare_at(
                old_items.first().copied(),
                new_items.first().copied(),
                item_shape,
                None,
                path,
                out,
            ),
            (o, n) if o >= 2 && n >= 2 => {
                if old_items != new_items {
                    out.modified.insert(path);
                }
            }
            (o, _) if o >= 2 => {
                if let Some(first) = new_items.first() {
                    compare_at(None, Some(first), item_shape, None, path, out);
                }
                out.removed.insert(path);
            }
            _ => {
                if let Some(first) = old_items.first() {
                    compare_at(Some(first), None, item_shape, None, path, out);
                }
                out.added.insert(path);
            }
        }
        path.pop();
    }
}

//! Field sets of objects and the parts of objects a field set names, as structured-merge-diff
//! computes them from a typed value (`ToFieldSet`, `RemoveItems`, `ExtractItems`): the
//! structure of each place comes from [`Shape::structure`].
//!
//! Every walk follows the value (or the set, which was computed from a value) and recurses once
//! per level, so it is as deep as the parser allowed and no deeper.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use serde_json::Map;
use serde_json::Value;

use super::PathElement;
use super::Set;
use crate::patch::ListKind;
use crate::patch::Shape;
use crate::patch::Structure;
use crate::schema::markers::Markers;

/// The fields of `value` (an object at `shape`): every scalar, every atomic value as one
/// field, every list item and map entry, and struct fields that are null or empty objects.
/// The error names an item that cannot be identified (a map-list item without its key field,
/// a set item that is not a scalar).
pub fn of_value(value: &Value, shape: Shape<'_>) -> Result<Set, String> {
    let mut set = Set::new();
    to_set(value, shape, None, &mut Vec::new(), &mut set)?;
    Ok(set)
}

fn to_set(
    value: &Value,
    shape: Shape<'_>,
    markers: Option<&'static Markers>,
    path: &mut Vec<PathElement>,
    set: &mut Set,
) -> Result<(), String> {
    match shape.structure(markers, value) {
        Structure::Scalar
        | Structure::Struct { atomic: true }
        | Structure::Map { atomic: true }
        | Structure::List(ListKind::Atomic) => set.insert(path),
        Structure::Struct { atomic: false } | Structure::Map { atomic: false } => {
            let Value::Object(map) = value else {
                return Ok(());
            };
            for (key, child) in map {
                let (child_shape, child_markers) = shape.field(key);
                path.push(PathElement::Field(key.clone()));
                to_set(child, child_shape, child_markers, path, set)?;
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || !shape.declares(key) {
                    set.insert(path);
                }
                path.pop();
            }
        }
        Structure::List(list_type) => {
            let Value::Array(items) = value else {
                return Ok(());
            };
            let item_shape = shape.item();
            let elements = items
                .iter()
                .enumerate()
                .map(|(i, item)| item_element(list_type, item, item_shape, path, i))
                .collect::<Result<Vec<_>, _>>()?;
            let mut counts: BTreeMap<&PathElement, usize> = BTreeMap::new();
            for element in &elements {
                *counts.entry(element).or_default() += 1;
            }
            let mut seen = BTreeSet::new();
            for (item, element) in items.iter().zip(&elements) {
                if !seen.insert(element) {
                    continue;
                }
                path.push(element.clone());
                // A duplicated item is owned as a whole, once.
                if counts.get(element).is_some_and(|n| *n == 1) {
                    to_set(item, item_shape, None, path, set)?;
                }
                set.insert(path);
                path.pop();
            }
        }
    }
    Ok(())
}

/// The element naming `item`, the `index`th item of a list of type `list_type` at `path`.
pub fn item_element(
    list_type: ListKind<'_>,
    item: &Value,
    item_shape: Shape<'_>,
    path: &[PathElement],
    index: usize,
) -> Result<PathElement, String> {
    let at = || format!("{}: element {index}", super::DisplayPath(path));
    match list_type {
        ListKind::Map(keys) => {
            let Value::Object(fields) = item else {
                return Err(format!("{}: expected a map, got {item}", at()));
            };
            let mut key = Vec::new();
            for name in keys.names() {
                let value = match fields.get(name) {
                    Some(value) => value.clone(),
                    None => item_shape.key_default(name).ok_or_else(|| {
                        format!(
                            "{}: associative list with keys has an element that omits key \
                                 field {name:?} (and doesn't have default value)",
                            at()
                        )
                    })?,
                };
                key.push((name.to_owned(), value));
            }
            key.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(key))
        }
        ListKind::Set => match item {
            Value::Object(_) | Value::Array(_) => {
                Err(format!("{}: sets may only contain primitive values", at()))
            }
            scalar => Ok(PathElement::Value(scalar.clone())),
        },
        ListKind::Atomic => Ok(PathElement::Index(index)),
    }
}

/// `value` without the paths of `set` (a path takes everything below it along); a map or list
/// left with nothing is dropped from its parent.
pub fn remove(value: Value, set: &Set, shape: Shape<'_>) -> Value {
    walk(value, set, shape, None, false).unwrap_or(Value::Object(Map::new()))
}

/// The parts of `value` that `set` names (a path takes everything below it along).
pub fn extract(value: &Value, set: &Set, shape: Shape<'_>) -> Value {
    walk(value.clone(), set, shape, None, true).unwrap_or(Value::Object(Map::new()))
}

/// What is left of `value` after removing (or, with `extract`, keeping only) the paths of
/// `set`, which is relative to `value`; `None` when nothing is left.
fn walk(
    value: Value,
    set: &Set,
    shape: Shape<'_>,
    markers: Option<&'static Markers>,
    extract: bool,
) -> Option<Value> {
    match (shape.structure(markers, &value), value) {
        (Structure::Scalar, value) => Some(value),
        (Structure::Struct { atomic: true } | Structure::Map { atomic: true }, value)
        | (Structure::List(ListKind::Atomic), value) => extract.then_some(value),
        (_, Value::Object(map)) if map.is_empty() => extract.then(|| Value::Object(map)),
        (_, Value::Array(items)) if items.is_empty() => extract.then(|| Value::Array(items)),
        (Structure::Struct { .. } | Structure::Map { .. }, Value::Object(map)) => {
            let mut out = Map::new();
            for (key, child) in map {
                let element = PathElement::Field(key.clone());
                let (child_shape, child_markers) = shape.field(&key);
                let below = set.child(&element).filter(|s| !s.is_empty());
                let kept = match (set.is_member(&element), below) {
                    (true, None) if extract => Some(child),
                    (true, Some(below)) if extract => {
                        walk(child, below, child_shape, child_markers, extract)
                    }
                    (true, _) => None,
                    (false, Some(below)) => walk(child, below, child_shape, child_markers, extract),
                    (false, None) => (!extract).then_some(child),
                };
                if let Some(kept) = kept {
                    out.insert(key, kept);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        (Structure::List(list_type), Value::Array(items)) => {
            let item_shape = shape.item();
            let mut out = Vec::new();
            for (i, item) in items.into_iter().enumerate() {
                let Ok(element) = item_element(list_type, &item, item_shape, &[], i) else {
                    if !extract {
                        out.push(item);
                    }
                    continue;
                };
                let exact = set.is_member(&element);
                let below = set.child(&element).filter(|s| !s.is_empty());
                let item = match below {
                    Some(below) => walk(item, below, item_shape, None, extract),
                    None => Some(item),
                };
                let keep = if extract {
                    exact || below.is_some()
                } else {
                    !exact
                };
                if let (true, Some(item)) = (keep, item) {
                    out.push(item);
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        (_, value) => (!extract).then_some(value),
    }
}

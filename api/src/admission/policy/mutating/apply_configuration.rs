//! `patchType: ApplyConfiguration`: the expression's `Object{...}` merged into the object as
//! server-side apply merges a configuration ([`crate::patch::apply::merge`]: list types and
//! map keys honoured), after Kubernetes' check that it sets no atomic list, map or struct.

use serde_json::Value;

use crate::admission::policy::validator::type_name;
use crate::limits::MAX_NESTING_DEPTH;
use crate::limits::nesting_depth;
use crate::patch::ListKind;
use crate::patch::Shape;
use crate::patch::Structure;
use crate::patch::apply::merge::merge;
use crate::patch::fieldpath::DisplayPath;
use crate::patch::fieldpath::PathElement;
use crate::schema::markers::Markers;

/// `object` with the apply configuration `result` merged at `shape`, or Kubernetes' message
/// for why it cannot be.
pub fn apply(object: &Value, result: &cel::Value, shape: Shape<'_>) -> Result<Value, String> {
    if !matches!(result, cel::Value::Map(_)) {
        return Err(format!(
            "unsupported return type from ApplyConfiguration expression: {}",
            type_name(result)
        ));
    }
    let config = result
        .json()
        .map_err(|e| format!("invalid return type: {e}"))?;
    if nesting_depth(&config) > MAX_NESTING_DEPTH {
        return Err(format!(
            "error applying patch: the apply configuration would exceed the maximum nesting depth of {MAX_NESTING_DEPTH}"
        ));
    }
    let mut found = Vec::new();
    atomics(&config, shape, None, &mut Vec::new(), &mut found);
    if !found.is_empty() {
        return Err(format!(
            "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {}",
            found.join(", ")
        ));
    }
    merge(object, &config, shape)
        .map_err(|e| format!("error applying patch: failed to merge patch: {e}"))
}

/// The paths of `value`'s atomic lists, maps and structs, following the fields its schema
/// declares and the items of its lists (structured-merge-diff's walk; the depth is bounded
/// by the caller).
fn atomics(
    value: &Value,
    shape: Shape<'_>,
    markers: Option<&'static Markers>,
    path: &mut Vec<PathElement>,
    found: &mut Vec<String>,
) {
    match (shape.structure(markers, value), value) {
        (Structure::Struct { atomic } | Structure::Map { atomic }, Value::Object(fields)) => {
            if atomic {
                found.push(DisplayPath(path).to_string());
            }
            for (name, child) in fields.iter().filter(|(name, _)| shape.declares(name)) {
                let (place, marked) = shape.field(name);
                path.push(PathElement::Field(name.clone()));
                atomics(child, place, marked, path, found);
                path.pop();
            }
        }
        (Structure::List(kind), Value::Array(items)) => {
            if kind == ListKind::Atomic {
                found.push(DisplayPath(path).to_string());
            }
            for (i, item) in items.iter().enumerate() {
                path.push(PathElement::Index(i));
                atomics(item, shape.item(), None, path, found);
                path.pop();
            }
        }
        _ => {}
    }
}

//! How ownership moves on a write (structured-merge-diff's `merge.Updater`): the managers'
//! sets read against the live object's schema, a write's changes taken from the other
//! managers (or refused as conflicts), the fields no apply asks for any more, the Update
//! managers capped, and the object metadata nobody owns.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::Value;

use super::Conflict;
use super::Operation;
use super::managed_fields::Identity;
use super::managed_fields::Managers;
use super::managed_fields::Owned;
use super::managed_fields::format_time;
use crate::patch::ListKind;
use crate::patch::Shape;
use crate::patch::Structure;
use crate::patch::fieldpath;
use crate::patch::fieldpath::PathElement;
use crate::patch::fieldpath::Set;
use crate::patch::fieldpath::item_element;
use crate::schema::markers::Markers;

/// The most Update managers an object keeps; older ones are folded into
/// [`ANCIENT_CHANGES`] (Kubernetes' `DefaultMaxUpdateManagers`).
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// The manager that holds the fields of the Update managers past [`MAX_UPDATE_MANAGERS`].
pub const ANCIENT_CHANGES: &str = "ancient-changes";

/// The object fields no manager owns (Kubernetes' `stripMetaManager`): set by the server or
/// naming the object rather than holding its data.
const STRIPPED: [&[&str]; 12] = [
    &["apiVersion"],
    &["kind"],
    &["metadata"],
    &["metadata", "name"],
    &["metadata", "namespace"],
    &["metadata", "creationTimestamp"],
    &["metadata", "selfLink"],
    &["metadata", "uid"],
    &["metadata", "clusterName"],
    &["metadata", "generation"],
    &["metadata", "managedFields"],
    &["metadata", "resourceVersion"],
];

/// `set` without the fields of [`STRIPPED`].
pub fn strip_meta(mut set: Set) -> Set {
    static STRIPPED_SET: LazyLock<Set> = LazyLock::new(|| {
        let mut stripped = Set::new();
        for path in STRIPPED {
            let path: Vec<PathElement> = path
                .iter()
                .map(|name| PathElement::Field((*name).to_owned()))
                .collect();
            stripped.insert(&path);
        }
        stripped
    });
    set.subtract(&STRIPPED_SET);
    set
}

/// Whether a value of `structure` is owned whole.
fn is_whole(structure: Structure<'_>) -> bool {
    matches!(
        structure,
        Structure::Scalar
            | Structure::Struct { atomic: true }
            | Structure::Map { atomic: true }
            | Structure::List(ListKind::Atomic)
    )
}

/// What a walk of a set along a value adds to the set.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// A path into a value owned whole becomes the path of the value.
    Atomic,
    /// A struct field with paths below it becomes a member too.
    NamedFields,
}

/// `set` read along `value` at `shape` as `reading` says, into `out` under `prefix`. Paths the
/// value does not have are kept as they are. The walk follows the set, which was decoded or
/// computed from a value within the nesting limit.
fn read_along(
    set: &Set,
    (value, shape, markers): (&Value, Shape<'_>, Option<&'static Markers>),
    reading: Reading,
    prefix: &mut Vec<PathElement>,
    out: &mut Set,
) {
    for member in set.members() {
        prefix.push(member.clone());
        out.insert(prefix);
        prefix.pop();
    }
    let structure = shape.structure(markers, value);
    let items = list_items(value, structure, shape, prefix);
    for (element, below) in set.children().filter(|(_, below)| !below.is_empty()) {
        prefix.push(element.clone());
        let child = match (element, value) {
            (PathElement::Field(name), Value::Object(fields)) => fields.get(name).map(|v| {
                let (child_shape, marked) = shape.field(name);
                (v, child_shape, marked)
            }),
            _ => items.get(element).map(|v| (*v, shape.item(), None)),
        };
        match child {
            Some((v, s, m)) if reading == Reading::Atomic && is_whole(s.structure(m, v)) => {
                out.insert(prefix);
            }
            Some(child) => {
                if reading == Reading::NamedFields
                    && matches!(structure, Structure::Struct { .. })
                    && matches!(element, PathElement::Field(_))
                {
                    out.insert(prefix);
                }
                read_along(below, child, reading, prefix, out);
            }
            None => {
                for path in below.paths() {
                    let full: Vec<PathElement> = prefix.iter().cloned().chain(path).collect();
                    out.insert(&full);
                }
            }
        }
        prefix.pop();
    }
}

/// The items of `value` (a list at `shape` of `structure`, reached by `path`) by their
/// elements; empty for anything else.
fn list_items<'v>(
    value: &'v Value,
    structure: Structure<'_>,
    shape: Shape<'_>,
    path: &[PathElement],
) -> BTreeMap<PathElement, &'v Value> {
    let (Value::Array(items), Structure::List(list_type)) = (value, structure) else {
        return BTreeMap::new();
    };
    let item_shape = shape.item();
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let element = item_element(list_type, item, item_shape, path, i).ok()?;
            Some((element, item))
        })
        .collect()
}

/// `set` read against `value`'s schema now (structured-merge-diff's
/// `ReconcileFieldSetWithSchema`): a path into a value that is now atomic becomes the path of
/// the whole value, so its owner owns all of it (R-RES-222); a path to a value that is now
/// granular stays as it is, which owns none of its parts (R-RES-223).
pub fn reconcile(set: &Set, value: &Value, shape: Shape<'_>) -> Set {
    let mut out = Set::new();
    read_along(
        set,
        (value, shape, None),
        Reading::Atomic,
        &mut Vec::new(),
        &mut out,
    );
    out
}

/// `set` with every struct field that has paths below it a member too (structured-merge-diff's
/// `EnsureNamedFieldsAreMembers`), so that removing what nobody owns removes a struct nobody
/// owns anything of.
fn with_named_fields(set: &Set, value: &Value, shape: Shape<'_>) -> Set {
    let mut out = Set::new();
    read_along(
        set,
        (value, shape, None),
        Reading::NamedFields,
        &mut Vec::new(),
        &mut out,
    );
    out
}

/// The fields of `last` (what the applier applied before) that `merged` loses because no
/// manager, the applier's new set included, owns them any more (R-RES-210, R-RES-211).
pub fn unowned_since(last: &Set, managers: &Managers, merged: &Value, shape: Shape<'_>) -> Set {
    let owned = managers
        .values()
        .fold(Set::new(), |all, owned| all.union(&owned.set));
    let last = with_named_fields(last, merged, shape);
    last.difference(&with_named_fields(&owned, merged, shape))
}

/// The fields each manager other than `writer` owns that the change `changed` (fields added
/// or modified) touches.
pub fn conflicts(managers: &Managers, writer: &Identity, changed: &Set) -> Vec<Conflict> {
    let mut out = Vec::new();
    for (identity, owned) in managers {
        if identity == writer {
            continue;
        }
        for path in owned.set.intersection(changed).paths() {
            out.push(Conflict {
                manager: identity.manager.clone(),
                operation: identity.operation,
                api_version: owned.api_version.clone(),
                time: owned.time.as_ref().map(format_time),
                subresource: identity.subresource.clone(),
                path,
            });
        }
    }
    out
}

/// Every manager but `writer` (None: every manager) loses `changed` and `removed`; managers
/// left with nothing go.
pub fn take_from_others(
    managers: &mut Managers,
    writer: Option<&Identity>,
    changed: &Set,
    removed: &Set,
) {
    for (identity, owned) in managers.iter_mut() {
        if Some(identity) != writer {
            owned.set = owned.set.difference(changed).difference(removed);
        }
    }
    managers.retain(|_, owned| !owned.set.is_empty());
}

/// At most [`MAX_UPDATE_MANAGERS`] Update managers: the oldest (by time, then identity) are
/// folded into an [`ANCIENT_CHANGES`] manager of their API version, which takes their time.
pub fn cap_update_managers(managers: &mut Managers) {
    let updaters = |managers: &Managers| {
        managers
            .keys()
            .filter(|i| i.operation == Operation::Update)
            .count()
    };
    while updaters(managers) > MAX_UPDATE_MANAGERS {
        let oldest = managers
            .iter()
            .filter(|(i, _)| i.operation == Operation::Update && i.manager != ANCIENT_CHANGES)
            .min_by(|(a, x), (b, y)| {
                let seconds = |o: &Owned| o.time.map_or(0, |t| t.timestamp());
                seconds(x).cmp(&seconds(y)).then_with(|| a.cmp(b))
            })
            .map(|(identity, _)| identity.clone());
        let Some(oldest) = oldest else {
            return;
        };
        let Some(folded) = managers.remove(&oldest) else {
            return;
        };
        let bucket = Identity::new(ANCIENT_CHANGES, Operation::Update, &folded.api_version, "");
        let merged = match managers.remove(&bucket) {
            Some(bucket) => bucket.set.union(&folded.set),
            None => folded.set,
        };
        managers.insert(
            bucket,
            Owned {
                api_version: folded.api_version,
                time: folded.time,
                set: merged,
            },
        );
    }
}

/// The changes from `old` to `new`: the fields added or modified, and those removed.
pub fn changes(old: &Value, new: &Value, shape: Shape<'_>) -> (Set, Set) {
    let comparison = fieldpath::compare(old, new, shape);
    let mut changed = comparison.added;
    changed.absorb(comparison.modified);
    (changed, comparison.removed)
}

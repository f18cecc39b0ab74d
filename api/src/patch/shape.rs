//! Where a patch or an apply is in the object's schema. A built-in kind's place is a node of
//! its compiled [`Schema`], whose markers come through the definition it was compiled from
//! ([`crate::schema::markers`]); a custom kind's place is a node of its version's
//! [`StructuralSchema`], whose `x-kubernetes-*` markers are its own
//! ([`crate::schema::structural::ApplyType`]). Both answer the same questions here.

use serde_json::Value;

use crate::schema::Node;
use crate::schema::NodeId;
use crate::schema::Schema;
use crate::schema::markers::ListType;
use crate::schema::markers::MapType;
use crate::schema::markers::Markers;
use crate::schema::markers::atomic_type;
use crate::schema::markers::key_default;
use crate::schema::markers::markers;
use crate::schema::structural::ApplyType;
use crate::schema::structural::FieldType;
use crate::schema::structural::StructuralSchema;

/// A place in an object's schema; untyped places (free-form objects, kinds without a schema)
/// have no markers, so their lists are replaced and their objects merged.
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    at: At<'a>,
}

/// The schema a [`Shape`] walks, and where in it.
#[derive(Debug, Clone, Copy)]
enum At<'a> {
    /// No schema.
    Untyped,
    /// A node of a built-in kind's schema (or of `ObjectMeta`'s, in a custom resource).
    Builtin(&'a Schema, NodeId),
    /// A node of a custom resource version's structural schema.
    Structural(ApplyType<'a>),
}

impl<'a> Shape<'a> {
    /// The root of `schema`.
    pub fn of(schema: &'a Schema) -> Self {
        Self {
            at: At::Builtin(schema, schema.root()),
        }
    }

    /// The root of a custom resource version's structural schema.
    pub fn structural(schema: &'a StructuralSchema) -> Self {
        Self {
            at: At::Structural(schema.apply_type()),
        }
    }

    /// A place with no schema.
    pub fn untyped() -> Self {
        Self { at: At::Untyped }
    }

    fn builtin(schema: &'a Schema, id: NodeId) -> Self {
        Self {
            at: At::Builtin(schema, id),
        }
    }

    /// The place of the field `name` of this object, and the field's markers (a structural
    /// schema's markers are its nodes', which [`Shape::structure`] reads itself).
    pub fn field(self, name: &str) -> (Self, Option<&'static Markers>) {
        match self.at {
            At::Untyped => (self, None),
            At::Builtin(schema, id) => match schema.node(id) {
                Node::Object(object) => match object.property(name) {
                    Some((_, child)) => {
                        let marked = schema.definition(id).and_then(|d| markers(d, name));
                        (Self::builtin(schema, child), marked)
                    }
                    None => (Self::untyped(), None),
                },
                Node::Map(values) => (Self::builtin(schema, *values), None),
                Node::Array(_) | Node::Scalar(_) | Node::Any | Node::Unstructured(_) => {
                    (Self::untyped(), None)
                }
            },
            At::Structural(node) => {
                let child = match node.field(name) {
                    FieldType::Node(child) => At::Structural(child),
                    FieldType::ObjectMeta(schema) => At::Builtin(schema, schema.root()),
                    FieldType::Untyped => At::Untyped,
                };
                (Self { at: child }, None)
            }
        }
    }

    /// Whether this place is an object that declares the field `name` (a struct field rather
    /// than a map key or an unknown field).
    pub fn declares(self, name: &str) -> bool {
        match self.at {
            At::Untyped => false,
            At::Builtin(schema, id) => match schema.node(id) {
                Node::Object(object) => object.property(name).is_some(),
                _ => false,
            },
            At::Structural(node) => node.declares(name),
        }
    }

    /// The value a map list's item at this place takes for its key field `name` when it
    /// omits it: the field's default, if the schema gives one.
    pub fn key_default(self, name: &str) -> Option<Value> {
        match self.at {
            At::Untyped => None,
            At::Builtin(schema, id) => schema
                .definition(id)
                .and_then(|d| key_default(d, name))
                .map(Value::from),
            At::Structural(node) => node.key_default(name).cloned(),
        }
    }

    /// The place of this list's items.
    pub fn item(self) -> Self {
        match self.at {
            At::Builtin(schema, id) => match schema.node(id) {
                Node::Array(items) => Self::builtin(schema, *items),
                _ => Self::untyped(),
            },
            At::Structural(node) => match node.items() {
                Some(items) => Self {
                    at: At::Structural(items),
                },
                None => Self::untyped(),
            },
            At::Untyped => self,
        }
    }
}

/// What server-side apply makes of a value at a place (structured-merge-diff's element
/// relationships): how it merges and how its ownership is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structure<'a> {
    /// A value without parts, replaced and owned whole.
    Scalar,
    /// An object with declared fields (`f:` per field); `atomic` replaces and owns it whole.
    Struct {
        /// `+structType=atomic` (on the field or on its type), `x-kubernetes-map-type:
        /// atomic` on a custom resource's object with properties.
        atomic: bool,
    },
    /// An object whose keys are data (`f:` per key, each key owned as a member too);
    /// `atomic` replaces and owns it whole. Untyped objects are maps.
    Map {
        /// `+mapType=atomic` (`x-kubernetes-map-type: atomic`).
        atomic: bool,
    },
    /// A list, merged and owned by its list type.
    List(ListKind<'a>),
}

/// How server-side apply merges a list and names its items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind<'a> {
    /// Replaced whole.
    Atomic,
    /// Scalar items, each named by its value (`v:`).
    Set,
    /// Object items, each named by the values of these key fields (`k:`).
    Map(MapKeys<'a>),
}

/// The key fields of a map list: a built-in kind's `+listMapKey`s (or `+patchMergeKey`), or a
/// custom resource's `x-kubernetes-list-map-keys`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKeys<'a> {
    /// A built-in kind's, from the marker table.
    Builtin(&'static [&'static str]),
    /// A custom resource's, from its structural schema.
    Structural(&'a [String]),
}

impl<'a> MapKeys<'a> {
    /// The key fields, in the order the schema lists them.
    pub fn names(self) -> impl Iterator<Item = &'a str> {
        let (builtin, structural) = match self {
            Self::Builtin(keys) => (keys, &[][..]),
            Self::Structural(keys) => (&[][..], keys),
        };
        (builtin.iter().copied()).chain(structural.iter().map(String::as_str))
    }
}

impl<'a> Shape<'a> {
    /// The structure of `value` at this place, reached through a field marked `markers`.
    /// Without a schema (or under a free-form field) objects are granular maps and lists
    /// atomic (R-RES-221); a list without a list type but with the merge patch strategy is a
    /// map keyed by its merge key, or a set without one (R-RES-220). A structural schema's
    /// node says itself what its value is.
    pub fn structure(self, markers: Option<&'static Markers>, value: &Value) -> Structure<'a> {
        let atomic_map = markers.is_some_and(|m| m.map_type == Some(MapType::Atomic));
        let node = match self.at {
            At::Builtin(schema, id) => Some((schema.node(id), schema.definition(id))),
            At::Structural(node) => return node.structure(value),
            At::Untyped => None,
        };
        match (node, value) {
            (Some((Node::Object(_), definition)), _) => Structure::Struct {
                atomic: atomic_map || definition.is_some_and(atomic_type),
            },
            (Some((Node::Map(_), _)), _) => Structure::Map { atomic: atomic_map },
            (Some((Node::Array(_), _)), _) => Structure::List(list_type(markers)),
            (Some((Node::Scalar(_), _)), _) => Structure::Scalar,
            (_, value) => untyped(value, atomic_map),
        }
    }
}

/// The structure of `value` where no schema says more: objects are maps (`atomic` ones
/// replaced whole), lists atomic.
fn untyped(value: &Value, atomic: bool) -> Structure<'static> {
    match value {
        Value::Object(_) => Structure::Map { atomic },
        Value::Array(_) => Structure::List(ListKind::Atomic),
        _ => Structure::Scalar,
    }
}

/// The list type of a list field marked `markers`.
fn list_type(markers: Option<&'static Markers>) -> ListKind<'static> {
    let Some(markers) = markers else {
        return ListKind::Atomic;
    };
    let list_type = match (markers.list_type, markers.patch_strategy) {
        (Some(list_type), _) => list_type,
        (None, Some(strategy)) if strategy.merges() => match &markers.patch_merge_key {
            Some(key) => ListType::Map(std::slice::from_ref(key)),
            None => ListType::Set,
        },
        _ => ListType::Atomic,
    };
    match list_type {
        ListType::Atomic => ListKind::Atomic,
        ListType::Set => ListKind::Set,
        ListType::Map(keys) => ListKind::Map(MapKeys::Builtin(keys)),
    }
}

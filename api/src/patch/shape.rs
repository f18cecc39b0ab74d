//! Where a strategic merge patch is in the object's schema: the compiled node, and through
//! the definition it was compiled from, the markers of its fields ([`crate::schema::markers`]).

use serde_json::Value;

use crate::schema::Node;
use crate::schema::NodeId;
use crate::schema::Schema;
use crate::schema::markers::ListType;
use crate::schema::markers::MapType;
use crate::schema::markers::Markers;
use crate::schema::markers::atomic_type;
use crate::schema::markers::markers;

/// A place in an object's schema; untyped places (free-form objects, kinds without a schema)
/// have no markers, so their lists are replaced and their objects merged.
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    at: Option<(&'a Schema, NodeId)>,
}

impl<'a> Shape<'a> {
    /// The root of `schema`.
    pub fn of(schema: &'a Schema) -> Self {
        Self {
            at: Some((schema, schema.root())),
        }
    }

    /// A place with no schema.
    pub fn untyped() -> Self {
        Self { at: None }
    }

    fn to(self, id: NodeId) -> Self {
        Self {
            at: self.at.map(|(schema, _)| (schema, id)),
        }
    }

    /// The place of the field `name` of this object, and the field's markers.
    pub fn field(self, name: &str) -> (Self, Option<&'static Markers>) {
        let Some((schema, id)) = self.at else {
            return (self, None);
        };
        match schema.node(id) {
            Node::Object(object) => match object.property(name) {
                Some((_, child)) => {
                    let marked = schema.definition(id).and_then(|d| markers(d, name));
                    (self.to(child), marked)
                }
                None => (Self::untyped(), None),
            },
            Node::Map(values) => (self.to(*values), None),
            Node::Array(_) | Node::Scalar(_) | Node::Any | Node::Unstructured(_) => {
                (Self::untyped(), None)
            }
        }
    }

    /// Whether this place is an object that declares the field `name` (a struct field rather
    /// than a map key or an unknown field).
    pub fn declares(self, name: &str) -> bool {
        self.at.is_some_and(|(schema, id)| match schema.node(id) {
            Node::Object(object) => object.property(name).is_some(),
            _ => false,
        })
    }

    /// The definition this place was compiled from, if any.
    pub fn definition(self) -> Option<&'a str> {
        self.at.and_then(|(schema, id)| schema.definition(id))
    }

    /// The place of this list's items.
    pub fn item(self) -> Self {
        match self.at {
            Some((schema, id)) => match schema.node(id) {
                Node::Array(items) => self.to(*items),
                _ => Self::untyped(),
            },
            None => self,
        }
    }
}

/// What server-side apply makes of a value at a place (structured-merge-diff's element
/// relationships): how it merges and how its ownership is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structure {
    /// A value without parts, replaced and owned whole.
    Scalar,
    /// An object with declared fields (`f:` per field); `atomic` replaces and owns it whole.
    Struct {
        /// `+structType=atomic` (on the field or on its type).
        atomic: bool,
    },
    /// An object whose keys are data (`f:` per key, each key owned as a member too);
    /// `atomic` replaces and owns it whole. Untyped objects are maps.
    Map {
        /// `+mapType=atomic`.
        atomic: bool,
    },
    /// A list, merged and owned by its list type.
    List(ListType),
}

impl Shape<'_> {
    /// The structure of `value` at this place, reached through a field marked `markers`.
    /// Without a schema (or under a free-form field) objects are granular maps and lists
    /// atomic (R-RES-221); a list without a list type but with the merge patch strategy is a
    /// map keyed by its merge key, or a set without one (R-RES-220).
    pub fn structure(self, markers: Option<&'static Markers>, value: &Value) -> Structure {
        let atomic_map = markers.is_some_and(|m| m.map_type == Some(MapType::Atomic));
        let node = self
            .at
            .map(|(schema, id)| (schema.node(id), schema.definition(id)));
        match (node, value) {
            (Some((Node::Object(_), definition)), _) => Structure::Struct {
                atomic: atomic_map || definition.is_some_and(atomic_type),
            },
            (Some((Node::Map(_), _)), _) => Structure::Map { atomic: atomic_map },
            (Some((Node::Array(_), _)), _) => Structure::List(list_type(markers)),
            (Some((Node::Scalar(_), _)), _) => Structure::Scalar,
            (_, Value::Object(_)) => Structure::Map { atomic: atomic_map },
            (_, Value::Array(_)) => Structure::List(ListType::Atomic),
            _ => Structure::Scalar,
        }
    }
}

/// The list type of a list field marked `markers`.
fn list_type(markers: Option<&'static Markers>) -> ListType {
    let Some(markers) = markers else {
        return ListType::Atomic;
    };
    if let Some(list_type) = markers.list_type {
        return list_type;
    }
    match (markers.patch_strategy, &markers.patch_merge_key) {
        (Some(strategy), Some(key)) if strategy.merges() => {
            ListType::Map(std::slice::from_ref(key))
        }
        (Some(strategy), None) if strategy.merges() => ListType::Set,
        _ => ListType::Atomic,
    }
}

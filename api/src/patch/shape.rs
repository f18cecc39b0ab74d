//! Where a strategic merge patch is in the object's schema: the compiled node, and through
//! the definition it was compiled from, the markers of its fields ([`crate::schema::markers`]).

use crate::schema::Node;
use crate::schema::NodeId;
use crate::schema::Schema;
use crate::schema::markers::Markers;
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
    pub(super) fn field(self, name: &str) -> (Self, Option<&'static Markers>) {
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
            Node::Array(_) | Node::Scalar(_) | Node::Any => (Self::untyped(), None),
        }
    }

    /// The place of this list's items.
    pub(super) fn item(self) -> Self {
        match self.at {
            Some((schema, id)) => match schema.node(id) {
                Node::Array(items) => self.to(*items),
                _ => Self::untyped(),
            },
            None => self,
        }
    }
}

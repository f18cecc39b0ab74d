//! The type server-side apply gives a custom resource: what kube-openapi's `schemaconv` makes
//! of the schema apiextensions publishes for the version. Objects with properties are
//! structs and objects with `additionalProperties` (or neither) maps, both granular unless
//! `x-kubernetes-map-type: atomic`; lists follow `x-kubernetes-list-type` (atomic when unset);
//! a node without a type (`x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`)
//! takes its value's; the root and every embedded resource declare `apiVersion`, `kind` and
//! `metadata`, which is `ObjectMeta`; a field no schema describes is untyped. Nothing is
//! compiled per request: this walks the nodes compiled with the CRD generation.

use serde_json::Value;

use super::StructuralSchema;
use super::node::Id;
use super::node::ListType;
use super::node::Node;
use crate::patch::ListKind;
use crate::patch::MapKeys;
use crate::patch::Structure;
use crate::schema::Schema;

/// The fields every resource declares besides `metadata` (`TypeMeta`'s), plain strings.
const TYPE_META: [&str; 2] = ["apiVersion", "kind"];

/// A node of a structural schema, as server-side apply types it.
#[derive(Debug, Clone, Copy)]
pub struct ApplyType<'a> {
    schema: &'a StructuralSchema,
    id: Id,
}

/// What describes a field of an object at an [`ApplyType`].
#[derive(Debug, Clone, Copy)]
pub enum FieldType<'a> {
    /// A node of the structural schema.
    Node(ApplyType<'a>),
    /// The `metadata` of the root or of an embedded resource: `ObjectMeta`'s compiled schema.
    ObjectMeta(&'a Schema),
    /// Nothing: the field is untyped.
    Untyped,
}

impl StructuralSchema {
    /// The root of this schema, as server-side apply types it.
    pub fn apply_type(&self) -> ApplyType<'_> {
        ApplyType {
            schema: self,
            id: self.root,
        }
    }
}

impl<'a> ApplyType<'a> {
    fn node(self) -> Option<&'a Node> {
        self.schema.nodes.get(self.id)
    }

    fn at(self, id: Id) -> Self {
        Self {
            schema: self.schema,
            id,
        }
    }

    /// Whether this node is a resource (the root or an embedded one), which declares
    /// `apiVersion`, `kind` and `metadata` whatever its properties say.
    fn resource(self) -> bool {
        self.id == self.schema.root || self.node().is_some_and(|n| n.embedded)
    }

    /// What describes the field `name` of an object at this node.
    pub fn field(self, name: &str) -> FieldType<'a> {
        if self.resource() {
            if name == "metadata" {
                return FieldType::ObjectMeta(&self.schema.object_meta);
            }
            if TYPE_META.contains(&name) {
                return FieldType::Untyped;
            }
        }
        match self.node().and_then(|n| n.field(name)) {
            Some(id) => FieldType::Node(self.at(id)),
            None => FieldType::Untyped,
        }
    }

    /// Whether an object at this node declares the field `name` (a property, not a key of
    /// its `additionalProperties` nor an unknown field).
    pub fn declares(self, name: &str) -> bool {
        (self.resource() && (name == "metadata" || TYPE_META.contains(&name)))
            || self.node().is_some_and(|n| n.properties.contains_key(name))
    }

    /// The node of a list's items at this node, if the schema has one.
    pub fn items(self) -> Option<Self> {
        self.node().and_then(|n| n.items).map(|id| self.at(id))
    }

    /// The default of the property `name` of an object at this node (what a map list's item
    /// that omits that key field is keyed by), already pruned by its schema.
    pub fn key_default(self, name: &str) -> Option<&'a Value> {
        let node = self.node()?;
        let id = node.properties.get(name)?;
        self.schema.nodes.get(*id)?.default.as_ref()
    }

    /// The structure of `value` at this node.
    pub fn structure(self, value: &Value) -> Structure<'a> {
        let node = self.node();
        let kind = node.map_or("", |n| n.kind.as_str());
        let atomic = node.is_some_and(|n| n.map_atomic);
        let has_fields = self.resource() || node.is_some_and(|n| !n.properties.is_empty());
        match (kind, value) {
            ("object", _) | ("", Value::Object(_)) if has_fields => Structure::Struct { atomic },
            ("object", _) | ("", Value::Object(_)) => Structure::Map { atomic },
            ("array", _) | ("", Value::Array(_)) => Structure::List(match node {
                Some(node) => list_kind(&node.list_type),
                None => ListKind::Atomic,
            }),
            _ => Structure::Scalar,
        }
    }
}

/// How server-side apply merges a list of `list_type`.
fn list_kind(list_type: &ListType) -> ListKind<'_> {
    match list_type {
        ListType::Atomic => ListKind::Atomic,
        ListType::Set => ListKind::Set,
        ListType::Map(keys) => ListKind::Map(MapKeys::Structural(keys)),
    }
}

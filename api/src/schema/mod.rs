//! Compiled schemas of the built-in kinds: k8s-openapi's schemars schemas turned once into a
//! small node tree ([`Schema`]) that the one-pass body decoder ([`decode`]) follows to type-check
//! a JSON or YAML body and find unknown and duplicate fields (spec 000 "Field validation",
//! R-RES-185..190), and that [`missing_required`] follows to find required fields left unset.
//! Custom resources' schemas ([`structural`]) compile to the same tree, with their own
//! unstructured nodes.

mod compile;
mod decode;
mod excerpt;
mod field_validation;
mod finding;
pub mod markers;
mod required;
mod scalar;
mod skip;
pub mod structural;
mod surrogates;
mod yaml;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::PoisonError;

pub use compile::CompileError;
pub use decode::Decoded;
pub use decode::Format;
pub use decode::MAX_FINDINGS;
pub use decode::SyntaxError;
pub use decode::TypeError;
pub use decode::decode;
pub use decode::decode_partial;
pub use excerpt::MAX_EXCERPT_BYTES;
pub use field_validation::FIELD_VALIDATION_VALUES;
pub use field_validation::FieldValidation;
pub use field_validation::StrictDecodingError;
pub use field_validation::UnsupportedLevel;
pub use finding::Finding;
pub use required::missing_required;
pub use scalar::Scalar;
use schemars::JsonSchema;

/// An index into a [`Schema`]'s nodes (schemas are recursive, so nodes refer to each other
/// by index rather than by ownership).
pub type NodeId = usize;

/// What the decoder needs to know of one place in an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// An object with named properties; any other name is an unknown field.
    Object(Object),
    /// An object whose every key holds the same kind of value (`additionalProperties`).
    Map(NodeId),
    /// An array of the same kind of item.
    Array(NodeId),
    /// A value without parts: string, number, boolean, int-or-string, quantity, time, bytes.
    Scalar(Scalar),
    /// Anything goes and nothing is reported (RawExtension, FieldsV1, apiextensions JSON:
    /// Kubernetes decodes those without strict checks).
    Any,
    /// A place in a custom resource, decoded as Kubernetes decodes unstructured JSON and then
    /// prunes it: any value is kept as sent (`null` too, fields in the order sent, no type
    /// checks); an object's fields no node claims are dropped and reported.
    Unstructured(Unstructured),
}

/// A place in a custom resource's body ([`Node::Unstructured`]), compiled from its
/// structural schema ([`structural::StructuralSchema::decode_schema`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unstructured {
    /// The node of each named field of an object value (`properties`).
    pub properties: BTreeMap<String, NodeId>,
    /// The node of every other field (`additionalProperties`).
    pub additional: Option<NodeId>,
    /// The node of fields known to neither (kept under
    /// `x-kubernetes-preserve-unknown-fields`); `None`: they are dropped and reported.
    pub unknown: Option<NodeId>,
    /// The node of an array value's items.
    pub items: NodeId,
}

impl Unstructured {
    /// The node of an object value's field `name`; `None`: the field is unknown.
    pub fn field(&self, name: &str) -> Option<NodeId> {
        self.properties
            .get(name)
            .copied()
            .or(self.additional)
            .or(self.unknown)
    }
}

/// An object type: its Go name, its properties in schema order and the required ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Object {
    /// The definition's name (`io.k8s.api.core.v1.Container`); empty for an inline object.
    pub name: String,
    /// The properties, in the schema's order (the order the decoder writes them in).
    pub properties: Vec<(String, NodeId)>,
    /// The names of the properties the schema requires.
    pub required: Vec<String>,
}

impl Object {
    /// The position and node of property `name`.
    pub fn property(&self, name: &str) -> Option<(usize, NodeId)> {
        self.properties
            .iter()
            .position(|(n, _)| n == name)
            .map(|i| (i, self.properties[i].1))
    }

    /// The Go struct name Kubernetes' decoder prints in its errors (`Container`).
    pub fn struct_name(&self) -> &str {
        self.name.rsplit('.').next().unwrap_or_default()
    }

    /// The Go type name with its package (`v1.Container`), or `struct` for an inline object.
    pub fn go_type(&self) -> String {
        let mut parts = self.name.rsplit('.');
        match (parts.next(), parts.next()) {
            (Some(name), Some(package)) => format!("{package}.{name}"),
            _ => "struct".to_owned(),
        }
    }
}

/// One kind's compiled schema: an arena of nodes and the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    nodes: Vec<Node>,
    root: NodeId,
}

impl Schema {
    /// The schema of a kind without one: the body is taken as sent, only parsed.
    pub fn any() -> Self {
        Self {
            nodes: vec![Node::Any],
            root: 0,
        }
    }

    /// The root node (the kind itself).
    pub fn root(&self) -> NodeId {
        self.root
    }

    /// The node `id` (an id this schema handed out; any other reads as [`Node::Any`]).
    pub fn node(&self, id: NodeId) -> &Node {
        self.nodes.get(id).unwrap_or(&Node::Any)
    }

    /// The definition node `id` was compiled from (`io.k8s.api.core.v1.PodSpec`), if any.
    pub fn definition(&self, id: NodeId) -> Option<&str> {
        match self.node(id) {
            Node::Object(o) if !o.name.is_empty() => Some(&o.name),
            _ => None,
        }
    }

    /// The Go type name of node `id` as Kubernetes' decoder prints it in a type error
    /// (`int32`, `[]string`, `map[string]string`, `v1.Container`).
    pub fn go_type(&self, id: NodeId) -> String {
        match self.node(id) {
            Node::Object(o) => o.go_type(),
            Node::Map(values) => format!("map[string]{}", self.go_type(*values)),
            Node::Array(items) => format!("[]{}", self.go_type(*items)),
            Node::Scalar(s) => s.go_type().to_owned(),
            Node::Any | Node::Unstructured(_) => "interface {}".to_owned(),
        }
    }

    /// The node at `path` below the root, following property names, map keys (`*`) and array
    /// items (`[]`); `None` when the path leaves the schema.
    #[cfg(test)]
    pub(crate) fn lookup(&self, path: &[&str]) -> Option<&Node> {
        let mut id = self.root;
        for step in path {
            id = match (self.node(id), *step) {
                (Node::Object(o), name) => o.property(name)?.1,
                (Node::Map(values), "*") => *values,
                (Node::Array(items), "[]") => *items,
                _ => return None,
            };
        }
        Some(self.node(id))
    }
}

/// Produces a kind's compiled schema (cached after the first call).
pub type SchemaFn = fn() -> Result<Arc<Schema>, CompileError>;

/// The compiled schema of `T`, generated and compiled the first time it is asked for and
/// shared after (schema generation walks every referenced type, so it is done once).
pub fn of<T>() -> Result<Arc<Schema>, CompileError>
where
    T: JsonSchema,
{
    static CACHE: OnceLock<Mutex<HashMap<Cow<'static, str>, Arc<Schema>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let name = T::schema_name();
    if let Some(found) = cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&name)
    {
        return Ok(found.clone());
    }
    // Compiled outside the lock: two first callers may both compile, with equal results.
    let generated = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    let compiled = Arc::new(compile::compile(generated.as_value(), &name)?);
    cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(name, compiled.clone());
    Ok(compiled)
}

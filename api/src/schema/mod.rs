//! Compiled schemas of the built-in kinds: k8s-openapi's schemars schemas turned once into a
//! small node tree ([`Schema`]) that the one-pass body walker ([`walk`]) follows to find
//! unknown and duplicate fields (spec 000 "Field validation", R-RES-185..190).

mod compile;
mod field_validation;
mod finding;
pub mod markers;
mod walk;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::PoisonError;

pub use compile::CompileError;
pub use field_validation::FIELD_VALIDATION_VALUES;
pub use field_validation::FieldValidation;
pub use field_validation::StrictDecodingError;
pub use field_validation::UnsupportedLevel;
pub use finding::Finding;
use schemars::JsonSchema;
pub use walk::WalkError;
pub use walk::Walked;
pub use walk::walk;

/// An index into a [`Schema`]'s nodes (schemas are recursive, so nodes refer to each other
/// by index rather than by ownership).
pub type NodeId = usize;

/// What the walker needs to know of one place in an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// An object with named properties; any other name is an unknown field.
    Object(BTreeMap<String, NodeId>),
    /// An object whose every key holds the same kind of value (`additionalProperties`).
    Map(NodeId),
    /// An array of the same kind of item.
    Array(NodeId),
    /// A string, number, boolean, or int-or-string: nothing inside to check.
    Scalar,
    /// Anything goes and nothing is reported (RawExtension, FieldsV1, apiextensions JSON:
    /// Kubernetes decodes those without strict checks).
    Any,
}

/// One kind's compiled schema: an arena of nodes and the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    nodes: Vec<Node>,
    root: NodeId,
    /// The upstream definition name of the nodes compiled from a definition (the key of
    /// the [`markers`] table).
    names: BTreeMap<NodeId, String>,
}

impl Schema {
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
        self.names.get(&id).map(String::as_str)
    }

    /// The node at `path` below the root, following property names, map keys (`*`) and array
    /// items (`[]`); `None` when the path leaves the schema.
    #[cfg(test)]
    pub(crate) fn lookup(&self, path: &[&str]) -> Option<&Node> {
        let mut id = self.root;
        for step in path {
            id = match (self.node(id), *step) {
                (Node::Object(props), name) => *props.get(name)?,
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
    let mut compiled = compile::compile(generated.as_value())?;
    // The root is generated inline, not as a definition: name it after the kind.
    compiled.names.insert(compiled.root, name.to_string());
    let compiled = Arc::new(compiled);
    cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(name, compiled.clone());
    Ok(compiled)
}

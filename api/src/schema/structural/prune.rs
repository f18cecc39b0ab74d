//! Pruning of a whole custom resource (apiextensions' `pruning` and `objectmeta` coercion):
//! fields the schema does not specify are dropped and their paths recorded, except under
//! `x-kubernetes-preserve-unknown-fields` (where only the specified properties are walked);
//! the `apiVersion`, `kind` and `metadata` of the root and of embedded resources are kept, and
//! each such `metadata` is coerced to `ObjectMeta` (its unknown fields dropped and recorded).

use serde_json::Value;

use super::node::Id;
use super::node::Node;
use crate::limits::MAX_NESTING_DEPTH;
use crate::schema::Finding;
use crate::schema::Format;
use crate::schema::Schema;
use crate::schema::decode;

/// The fields kept at the root and in an embedded resource whatever the schema says.
pub(super) const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// One pruning pass.
pub(super) struct Pruner<'a> {
    /// The structural nodes.
    pub nodes: &'a [Node],
    /// The compiled `ObjectMeta` schema metadata is coerced with.
    pub object_meta: &'a Schema,
    /// The path of the value being walked (`spec.items[0]`).
    path: String,
    /// The pruned fields' paths.
    pruned: Vec<String>,
    /// The unknown fields of coerced `metadata`.
    coerced: Vec<String>,
}

impl<'a> Pruner<'a> {
    /// A pass with nothing recorded yet.
    pub fn new(nodes: &'a [Node], object_meta: &'a Schema) -> Self {
        Self {
            nodes,
            object_meta,
            path: String::new(),
            pruned: Vec::new(),
            coerced: Vec::new(),
        }
    }

    /// Prunes a whole object from `root`; returns the unknown fields' paths as Kubernetes
    /// lists them: the root metadata's, then the pruned ones sorted, then the embedded
    /// metadata's sorted.
    pub fn prune_root(mut self, obj: &mut Value, root: Id) -> Vec<String> {
        let Value::Object(map) = obj else {
            return Vec::new();
        };
        let mut found = map
            .get_mut("metadata")
            .map(|meta| self.coerce_meta(meta, "metadata"))
            .unwrap_or_default();
        self.walk(obj, Some(root), true, 0);
        self.pruned.sort();
        self.coerced.sort();
        found.append(&mut self.pruned);
        found.append(&mut self.coerced);
        found
    }

    /// Prunes `v` at node `id` (not a resource root), recording nothing.
    pub fn prune_value(mut self, v: &mut Value, id: Id) {
        self.walk(v, Some(id), false, 0);
    }

    fn node(&self, id: Option<Id>) -> Option<&'a Node> {
        id.and_then(|id| self.nodes.get(id))
    }

    fn child(&mut self, key: &str) -> usize {
        let mark = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(key);
        mark
    }

    fn record(&mut self, key: &str) {
        let mark = self.child(key);
        self.pruned.push(self.path.clone());
        self.path.truncate(mark);
    }

    /// Walks `v` at node `id` (`None`: no schema, every field unknown); `embedded` for the
    /// root and embedded resources.
    fn walk(&mut self, v: &mut Value, id: Option<Id>, root: bool, depth: usize) {
        if depth > MAX_NESTING_DEPTH {
            return;
        }
        let node = self.node(id);
        if node.is_some_and(|n| n.preserve_unknown) {
            self.walk_preserved(v, id, root, depth);
            return;
        }
        match v {
            Value::Object(map) => {
                let Some(node) = node else {
                    let keys: Vec<String> = map.keys().cloned().collect();
                    for k in keys {
                        self.record(&k);
                    }
                    map.clear();
                    return;
                };
                let embedded = root || node.embedded;
                if embedded && !root {
                    self.coerce_embedded(map);
                }
                map.retain(|k, child| {
                    if embedded && META_FIELDS.contains(&k.as_str()) {
                        return true;
                    }
                    match node.field(k) {
                        Some(sub) => {
                            let mark = self.child(k);
                            self.walk(child, Some(sub), false, depth + 1);
                            self.path.truncate(mark);
                            true
                        }
                        None => {
                            self.record(k);
                            false
                        }
                    }
                });
            }
            Value::Array(list) => {
                let items = node.and_then(|n| n.items);
                for (i, item) in list.iter_mut().enumerate() {
                    let mark = self.path.len();
                    self.path.push_str(&format!("[{i}]"));
                    self.walk(item, items, false, depth + 1);
                    self.path.truncate(mark);
                }
            }
            _ => {}
        }
    }

    /// Walks a value whose unknown fields are kept: only its specified parts are pruned.
    fn walk_preserved(&mut self, v: &mut Value, id: Option<Id>, root: bool, depth: usize) {
        let Some(node) = self.node(id) else {
            return;
        };
        match v {
            Value::Object(map) => {
                let embedded = root || node.embedded;
                if embedded && !root {
                    self.coerce_embedded(map);
                }
                for (k, child) in map.iter_mut() {
                    if embedded && META_FIELDS.contains(&k.as_str()) {
                        continue;
                    }
                    if let Some(sub) = node.field(k) {
                        let mark = self.child(k);
                        self.walk(child, Some(sub), false, depth + 1);
                        self.path.truncate(mark);
                    }
                }
            }
            Value::Array(list) => {
                for (i, item) in list.iter_mut().enumerate() {
                    let mark = self.path.len();
                    self.path.push_str(&format!("[{i}]"));
                    if depth < MAX_NESTING_DEPTH {
                        self.walk_preserved(item, node.items, false, depth + 1);
                    }
                    self.path.truncate(mark);
                }
            }
            _ => {}
        }
    }

    /// Coerces an embedded resource's `metadata`.
    fn coerce_embedded(&mut self, map: &mut serde_json::Map<String, Value>) {
        if let Some(meta) = map.get_mut("metadata") {
            let mark = self.child("metadata");
            let path = self.path.clone();
            self.path.truncate(mark);
            let mut found = self.coerce_meta(meta, &path);
            self.coerced.append(&mut found);
        }
    }

    /// Rewrites `meta` as an `ObjectMeta` (unknown fields dropped, as Kubernetes' JSON round
    /// trip through the Go type does) and returns the unknown fields' paths below `at`. A
    /// malformed `metadata` is left as it is (validation reports it).
    fn coerce_meta(&self, meta: &mut Value, at: &str) -> Vec<String> {
        let Ok(bytes) = serde_json::to_vec(meta) else {
            return Vec::new();
        };
        let Ok(decoded) = decode(self.object_meta, &bytes, Format::Json) else {
            return Vec::new();
        };
        if decoded.type_error.is_some() {
            return Vec::new();
        }
        *meta = decoded.value;
        decoded
            .findings
            .into_iter()
            .filter_map(|f| match f {
                Finding::Unknown(path) => Some(format!("{at}.{path}")),
                Finding::Duplicate(_) | Finding::YamlDuplicate { .. } => None,
            })
            .collect()
    }
}

//! The tree [`crate::schema::decode`] follows for a custom resource's body, built from its
//! structural schema: unstructured nodes that keep what the schema specifies (all of it under
//! `x-kubernetes-preserve-unknown-fields`) and drop the rest, with `metadata` of the root and
//! of embedded resources decoded as the built-in `ObjectMeta`.

use super::node::MAX_DEPTH;
use super::node::Node;
use super::prune::META_FIELDS;
use crate::schema::Node as DecodeNode;
use crate::schema::NodeId;
use crate::schema::Schema;
use crate::schema::Unstructured;

/// What the nodes of one tree share.
struct Builder<'a> {
    nodes: &'a [Node],
    tree: Vec<DecodeNode>,
    /// `ObjectMeta`'s root.
    meta: NodeId,
    /// A value kept whole (an unknown field under preserve-unknown-fields, apiVersion, kind).
    keep: NodeId,
    /// A value without a schema: its objects lose every field.
    drop: NodeId,
    /// The id of structural node 0.
    base: NodeId,
}

impl Builder<'_> {
    /// The decode node of structural node `id` (the resource root when `root`).
    fn unstructured(&self, node: &Node, root: bool) -> Unstructured {
        let at = |id: usize| self.base + id;
        let mut u = Unstructured {
            properties: node
                .properties
                .iter()
                .map(|(name, &child)| (name.clone(), at(child)))
                .collect(),
            additional: node.additional.map(at),
            unknown: node.preserve_unknown.then_some(self.keep),
            items: node.items.map_or(self.drop, at),
        };
        if root || node.embedded {
            for name in META_FIELDS {
                let child = if name == "metadata" {
                    self.meta
                } else {
                    self.keep
                };
                u.properties.insert(name.to_owned(), child);
            }
        }
        u
    }

    /// The items of a list that preserves unknown fields: Kubernetes keeps unknown fields in
    /// them too (and in their own lists' items), pruning only what they specify.
    fn preserved_items(&mut self, items: Option<usize>, depth: usize) -> NodeId {
        let Some(node) = items.and_then(|i| self.nodes.get(i)) else {
            return self.keep;
        };
        if depth > MAX_DEPTH {
            return self.keep;
        }
        let mut u = self.unstructured(node, false);
        u.unknown = Some(self.keep);
        u.items = self.preserved_items(node.items, depth + 1);
        self.tree.push(DecodeNode::Unstructured(u));
        self.tree.len() - 1
    }
}

/// The decode tree of `nodes` rooted at `root`; `object_meta` is grafted as is (its ids are
/// kept: it comes first).
pub(super) fn build(nodes: &[Node], root: usize, object_meta: &Schema) -> Schema {
    let mut tree = object_meta.nodes.clone();
    let keep = tree.len();
    tree.push(DecodeNode::Unstructured(Unstructured {
        unknown: Some(keep),
        items: keep,
        ..Unstructured::default()
    }));
    let drop = tree.len();
    tree.push(DecodeNode::Unstructured(Unstructured {
        items: drop,
        ..Unstructured::default()
    }));
    let base = tree.len();
    let mut b = Builder {
        nodes,
        tree,
        meta: object_meta.root,
        keep,
        drop,
        base,
    };
    for (id, node) in nodes.iter().enumerate() {
        let u = b.unstructured(node, id == root);
        b.tree.push(DecodeNode::Unstructured(u));
    }
    for (id, node) in nodes.iter().enumerate() {
        if !node.preserve_unknown {
            continue;
        }
        let items = b.preserved_items(node.items, 0);
        if let Some(DecodeNode::Unstructured(u)) = b.tree.get_mut(base + id) {
            u.items = items;
        }
    }
    Schema {
        nodes: b.tree,
        root: base + root,
    }
}

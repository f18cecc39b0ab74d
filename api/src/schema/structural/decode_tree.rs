//! The tree [`crate::schema::decode`] follows for a custom resource's body, built from its
//! structural schema: unstructured nodes that keep what the schema specifies (all of it under
//! `x-kubernetes-preserve-unknown-fields`) and drop the rest, with `metadata` of the root and
//! of embedded resources decoded as the built-in `ObjectMeta`.

use super::node::Node;
use super::prune::META_FIELDS;
use crate::schema::Node as DecodeNode;
use crate::schema::NodeId;
use crate::schema::Schema;
use crate::schema::Unstructured;

/// The decode tree of `nodes` rooted at `root`; `object_meta` is grafted as is (its ids are
/// kept: it comes first).
pub(super) fn build(nodes: &[Node], root: usize, object_meta: &Schema) -> Schema {
    let mut tree = object_meta.nodes.clone();
    let meta = object_meta.root;
    // A value kept whole (an unknown field under preserve-unknown-fields, apiVersion, kind).
    let keep = tree.len();
    tree.push(DecodeNode::Unstructured(Unstructured {
        unknown: Some(keep),
        items: keep,
        ..Unstructured::default()
    }));
    // A value without a schema: its objects lose every field.
    let drop = tree.len();
    tree.push(DecodeNode::Unstructured(Unstructured {
        items: drop,
        ..Unstructured::default()
    }));
    let base = tree.len();
    let at = |id: usize| -> NodeId { base + id };
    for (id, node) in nodes.iter().enumerate() {
        let mut u = Unstructured {
            properties: node
                .properties
                .iter()
                .map(|(name, &child)| (name.clone(), at(child)))
                .collect(),
            additional: node.additional.map(at),
            unknown: node.preserve_unknown.then_some(keep),
            items: node
                .items
                .map_or(if node.preserve_unknown { keep } else { drop }, at),
        };
        if id == root || node.embedded {
            for name in META_FIELDS {
                let child = if name == "metadata" { meta } else { keep };
                u.properties.insert(name.to_owned(), child);
            }
        }
        tree.push(DecodeNode::Unstructured(u));
    }
    Schema {
        nodes: tree,
        root: at(root),
    }
}

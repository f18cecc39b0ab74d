//! The owner/dependent graph of one pass, built from the listed objects'
//! `metadata.ownerReferences` as kube-controller-manager's graph builder builds it: owners
//! are found by uid, and a namespaced owner only in its dependent's own namespace (a
//! reference to an object of another namespace is to an absent owner). The graph is a
//! snapshot of lists; every decision that deletes or rewrites is confirmed by live reads.
//!
//! A pass holds what it lists, and glibc keeps what a pass allocated after it (with 100,000
//! objects, nodes of every object took about 50 MiB of the leader). So only an object the
//! collector may act on is a [`Node`]: one with owners, finalizers or a deletion timestamp.
//! Every other object matters only as an owner that is present, which [`PlainObjects`] records
//! in 32 bytes without an allocation of its own (its uid as a number, its namespace by index);
//! a node's resource type is shared by the nodes of the type, and owners are found through an
//! index sorted by uid rather than a map holding a copy of every uid.

use std::collections::HashMap;
use std::sync::Arc;

use apiary_api::registry::FOREGROUND_FINALIZER;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::discovery::Resource;

/// What a pass reads of a listed object: the metadata that places it in the graph. The
/// rest of the object (its spec, data, status) is skipped unread while the list is decoded.
#[derive(Debug, Default, Deserialize)]
pub struct Listed {
    #[serde(default)]
    metadata: ListedMeta,
}

/// The fields of `metadata` the collector reads; any may be absent or null.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListedMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    deletion_timestamp: Option<IgnoredAny>,
    finalizers: Option<Vec<String>>,
    owner_references: Option<Vec<ListedOwner>>,
}

/// One entry of `metadata.ownerReferences` as listed.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListedOwner {
    api_version: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    uid: Option<String>,
    block_owner_deletion: Option<bool>,
}

impl ListedMeta {
    fn deleting(&self) -> bool {
        self.deletion_timestamp.is_some()
    }
}

/// One entry of `metadata.ownerReferences`.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnerRef {
    /// `apiVersion` of the owner.
    pub api_version: String,
    /// `kind` of the owner.
    pub kind: String,
    /// The owner's name.
    pub name: String,
    /// The owner's uid.
    pub uid: String,
    /// `blockOwnerDeletion`.
    pub block: bool,
}

impl From<ListedOwner> for OwnerRef {
    fn from(listed: ListedOwner) -> Self {
        Self {
            api_version: listed.api_version.unwrap_or_default(),
            kind: listed.kind.unwrap_or_default(),
            name: listed.name.unwrap_or_default(),
            uid: listed.uid.unwrap_or_default(),
            block: listed.block_owner_deletion.unwrap_or(false),
        }
    }
}

/// One object as the collector sees it.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its resource type, shared by the nodes of the type.
    pub resource: Arc<Resource>,
    /// Its namespace (empty: cluster scoped).
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: String,
    /// Whether `deletionTimestamp` is set.
    pub deleting: bool,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
    /// `metadata.ownerReferences`.
    pub owners: Vec<OwnerRef>,
}

impl Node {
    /// The node of `object` (as read live), of type `resource`; `None` without a name or uid.
    pub fn from_object(resource: &Arc<Resource>, object: &Value) -> Option<Self> {
        Self::from_listed(resource, Listed::deserialize(object).ok()?)
    }

    /// The node of the listed `object`, of type `resource`; `None` without a name or uid.
    pub fn from_listed(resource: &Arc<Resource>, object: Listed) -> Option<Self> {
        let meta = object.metadata;
        let deleting = meta.deleting();
        let (name, uid) = (meta.name.unwrap_or_default(), meta.uid.unwrap_or_default());
        if name.is_empty() || uid.is_empty() {
            return None;
        }
        Some(Self {
            resource: Arc::clone(resource),
            namespace: meta.namespace.unwrap_or_default(),
            name,
            uid,
            deleting,
            finalizers: meta.finalizers.unwrap_or_default(),
            owners: (meta.owner_references.into_iter().flatten())
                .map(OwnerRef::from)
                .collect(),
        })
    }

    /// Its path in the API.
    pub fn path(&self) -> String {
        self.resource.object(&self.namespace, &self.name)
    }

    /// Whether `finalizer` is in its finalizers.
    pub fn has_finalizer(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| f == finalizer)
    }

    /// Being deleted with the `foregroundDeletion` finalizer: waiting for its dependents.
    pub fn deleting_dependents(&self) -> bool {
        self.deleting && self.has_finalizer(FOREGROUND_FINALIZER)
    }
}

/// The namespace index of a cluster-scoped object in [`PlainObjects`].
const CLUSTER_SCOPED: u32 = u32::MAX;

/// The listed objects without owners, finalizers or a deletion timestamp, whose uid is a
/// UUID in its canonical (lowercase, hyphenated) text: each as its uid and namespace, so an
/// owner reference to one is found without a [`Node`] per object.
#[derive(Debug, Default)]
pub struct PlainObjects {
    /// The namespaces seen, each with its index.
    namespaces: HashMap<String, u32>,
    /// (uid, namespace index or [`CLUSTER_SCOPED`]), sorted once the listing is done.
    objects: Vec<(u128, u32)>,
}

impl PlainObjects {
    /// Records `object`, of type `resource`, if it is plain; `false` when it needs a [`Node`]
    /// (or has no uid). A namespace not seen before is added, one per namespace (an object
    /// with more distinct namespaces than fit an index is a node instead).
    pub fn add(&mut self, resource: &Resource, object: &Listed) -> bool {
        let meta = &object.metadata;
        if meta.deleting()
            || !meta.finalizers.as_ref().is_none_or(Vec::is_empty)
            || !meta.owner_references.as_ref().is_none_or(Vec::is_empty)
        {
            return false;
        }
        let Some(uid) = meta.uid.as_deref().and_then(canonical_uuid) else {
            return false;
        };
        let namespace = if resource.namespaced {
            let name = meta.namespace.as_deref().unwrap_or_default();
            match self.namespaces.get(name) {
                Some(index) => *index,
                None => match u32::try_from(self.namespaces.len()) {
                    Ok(index) if index < CLUSTER_SCOPED => {
                        self.namespaces.insert(name.to_owned(), index);
                        index
                    }
                    _ => return false,
                },
            }
        } else {
            CLUSTER_SCOPED
        };
        self.objects.push((uid, namespace));
        true
    }

    /// Whether an object with uid `uid` is listed where a dependent in `namespace` sees it:
    /// cluster scoped, or in that namespace. Only after [`Self::sort`].
    fn contains(&self, uid: &str, namespace: &str) -> bool {
        let Some(uid) = canonical_uuid(uid) else {
            return false;
        };
        let local = self.namespaces.get(namespace).copied();
        [Some(CLUSTER_SCOPED), local]
            .into_iter()
            .flatten()
            .any(|index| self.objects.binary_search(&(uid, index)).is_ok())
    }

    fn sort(&mut self) {
        self.objects.sort_unstable();
    }
}

/// `text` as a number when it is a UUID in canonical text (`8-4-4-4-12` lowercase hex
/// digits), so that equal numbers are equal texts.
fn canonical_uuid(text: &str) -> Option<u128> {
    let bytes = text.as_bytes();
    if bytes.len() != 36 {
        return None;
    }
    let mut value = 0u128;
    for (i, byte) in bytes.iter().enumerate() {
        let digit = match (i, byte) {
            (8 | 13 | 18 | 23, b'-') => continue,
            (8 | 13 | 18 | 23, _) => return None,
            (_, b'0'..=b'9') => byte - b'0',
            (_, b'a'..=b'f') => byte - b'a' + 10,
            _ => return None,
        };
        value = (value << 4) | u128::from(digit);
    }
    Some(value)
}

/// The objects of one pass and who owns whom.
#[derive(Debug, Default)]
pub struct Graph {
    nodes: Vec<Node>,
    /// The listed objects that are not nodes.
    plain: PlainObjects,
    /// The indexes of `nodes`, in the order of their uids.
    by_uid: Vec<usize>,
    /// Owner (node index) -> its dependents (node index, index of the reference in its
    /// owners).
    dependents: HashMap<usize, Vec<(usize, usize)>>,
}

impl Graph {
    /// The graph of `nodes` and the `plain` objects listed with them.
    pub fn new(nodes: Vec<Node>, mut plain: PlainObjects) -> Self {
        let mut by_uid: Vec<usize> = (0..nodes.len()).collect();
        by_uid.sort_unstable_by(|a, b| nodes[*a].uid.cmp(&nodes[*b].uid));
        plain.sort();
        let mut graph = Self {
            nodes,
            plain,
            by_uid,
            dependents: HashMap::new(),
        };
        let mut dependents: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
        for (i, node) in graph.nodes.iter().enumerate() {
            for (r, reference) in node.owners.iter().enumerate() {
                if let Some(owner) = graph.owner_index(node, reference) {
                    dependents.entry(owner).or_default().push((i, r));
                }
            }
        }
        graph.dependents = dependents;
        graph
    }

    /// Every node: the objects the collector may act on.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The listed owner `reference` of `dependent` names: same uid, and for a namespaced
    /// owner the dependent's namespace.
    pub fn owner(&self, dependent: &Node, reference: &OwnerRef) -> Option<&Node> {
        self.owner_index(dependent, reference)
            .map(|owner| &self.nodes[owner])
    }

    /// The index in `nodes` of what [`Self::owner`] finds.
    fn owner_index(&self, dependent: &Node, reference: &OwnerRef) -> Option<usize> {
        let at = self
            .by_uid
            .binary_search_by(|i| self.nodes[*i].uid.as_str().cmp(&reference.uid))
            .ok()?;
        let owner = self.by_uid[at];
        let found = &self.nodes[owner];
        let visible = !found.resource.namespaced || found.namespace == dependent.namespace;
        visible.then_some(owner)
    }

    /// The dependents of `owner`, each with its reference to it.
    pub fn dependents<'a>(
        &'a self,
        owner: &Node,
    ) -> impl Iterator<Item = (&'a Node, &'a OwnerRef)> {
        self.by_uid
            .binary_search_by(|i| self.nodes[*i].uid.as_str().cmp(&owner.uid))
            .ok()
            .and_then(|at| self.dependents.get(&self.by_uid[at]))
            .into_iter()
            .flatten()
            .map(|&(i, r)| (&self.nodes[i], &self.nodes[i].owners[r]))
    }

    /// Whether the list shows every owner of `node` present and none of them waiting for
    /// its dependents: nothing to do for it.
    pub fn owners_solid(&self, node: &Node) -> bool {
        node.owners
            .iter()
            .all(|reference| match self.owner(node, reference) {
                Some(owner) => !owner.deleting_dependents(),
                None => self.plain.contains(&reference.uid, &node.namespace),
            })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn configmaps() -> Resource {
        Resource {
            group: String::new(),
            version: "v1".to_owned(),
            plural: "configmaps".to_owned(),
            kind: "ConfigMap".to_owned(),
            namespaced: true,
            collected: true,
        }
    }

    fn node(namespace: &str, name: &str, owners: Value, meta: Value) -> Node {
        let mut metadata = json!({"namespace": namespace, "name": name, "uid": name,
            "ownerReferences": owners});
        for (k, v) in meta.as_object().cloned().unwrap_or_default() {
            metadata[k] = v;
        }
        Node::from_object(&Arc::new(configmaps()), &json!({"metadata": metadata})).unwrap()
    }

    fn to(uid: &str, block: bool) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "name": uid, "uid": uid,
            "blockOwnerDeletion": block})
    }

    // Owners are found by uid and, being namespaced, only in the dependent's namespace; an
    // owner waiting for its dependents, or one not listed, makes the dependent's owners not
    // solid.
    #[test]
    fn owners_resolve_by_uid_within_the_namespace() {
        let waiting = json!({"deletionTimestamp": "2026-01-01T00:00:00Z",
            "finalizers": [FOREGROUND_FINALIZER]});
        let graph = Graph::new(
            vec![
                node("a", "owner", json!([]), json!({})),
                node("a", "leaving", json!([]), waiting),
                node("a", "kept", json!([to("owner", true)]), json!({})),
                node("b", "far", json!([to("owner", false)]), json!({})),
                node(
                    "a",
                    "blocked",
                    json!([to("owner", false), to("leaving", true)]),
                    json!({}),
                ),
                node("a", "ghost", json!([to("nobody", false)]), json!({})),
            ],
            PlainObjects::default(),
        );
        let by_name = |name: &str| graph.nodes().iter().find(|n| n.name == name).unwrap();
        assert!(graph.owners_solid(by_name("kept")));
        assert!(
            !graph.owners_solid(by_name("far")),
            "another namespace's owner is absent"
        );
        assert!(
            !graph.owners_solid(by_name("blocked")),
            "an owner waits for it"
        );
        assert!(!graph.owners_solid(by_name("ghost")));
        let dependents: Vec<&str> = graph
            .dependents(by_name("owner"))
            .map(|(d, _)| d.name.as_str())
            .collect();
        assert_eq!(dependents, ["kept", "blocked"]);
        let blocking: Vec<bool> = graph
            .dependents(by_name("leaving"))
            .map(|(_, r)| r.block)
            .collect();
        assert_eq!(blocking, [true]);
        assert!(by_name("leaving").deleting_dependents());
    }

    // An object without owners, finalizers or a deletion timestamp is no node but still an
    // owner that is present: in its dependent's namespace, or from anywhere when cluster
    // scoped. An object the collector may act on, or whose uid is not a canonical UUID, is a
    // node.
    #[test]
    fn plain_objects_are_owners_without_nodes() {
        let uid = |n: u8| format!("00000000-0000-4000-8000-0000000000{n:02x}");
        let object = |namespace: &str, uid: &str, meta: Value| {
            let mut metadata = json!({"namespace": namespace, "name": uid, "uid": uid});
            for (k, v) in meta.as_object().cloned().unwrap_or_default() {
                metadata[k] = v;
            }
            serde_json::from_value::<Listed>(json!({"metadata": metadata})).unwrap()
        };
        let namespaces = Resource {
            namespaced: false,
            ..configmaps()
        };
        let mut plain = PlainObjects::default();
        assert!(plain.add(&configmaps(), &object("a", &uid(0xa1), json!({}))));
        assert!(plain.add(&namespaces, &object("", &uid(2), json!({}))));
        for meta in [
            json!({"ownerReferences": [to("x", false)]}),
            json!({"finalizers": ["f"]}),
            json!({"deletionTimestamp": "2026-01-01T00:00:00Z"}),
        ] {
            assert!(!plain.add(&configmaps(), &object("a", &uid(3), meta)));
        }
        let upper = uid(10).to_uppercase();
        assert!(!plain.add(&configmaps(), &object("a", &upper, json!({}))));
        assert!(!plain.add(&configmaps(), &object("a", "not-a-uuid", json!({}))));

        let dependent = |name: &str, namespace: &str, owner: &str| {
            node(namespace, name, json!([to(owner, true)]), json!({}))
        };
        let graph = Graph::new(
            vec![
                dependent("same", "a", &uid(0xa1)),
                dependent("other", "b", &uid(0xa1)),
                dependent("cluster", "b", &uid(2)),
                dependent("cased", "a", &uid(0xa1).to_uppercase()),
                dependent("missing", "a", &uid(3)),
            ],
            plain,
        );
        let solid: Vec<bool> = graph
            .nodes()
            .iter()
            .map(|n| graph.owners_solid(n))
            .collect();
        assert_eq!(solid, [true, false, true, false, false]);
    }
}

//! The owner/dependent graph of one pass, built from the listed objects'
//! `metadata.ownerReferences` as kube-controller-manager's graph builder builds it: owners
//! are found by uid, and a namespaced owner only in its dependent's own namespace (a
//! reference to an object of another namespace is to an absent owner). The graph is a
//! snapshot of lists; every decision that deletes or rewrites is confirmed by live reads.

use std::collections::HashMap;

use apiary_api::registry::FOREGROUND_FINALIZER;
use serde_json::Value;

use super::discovery::Resource;

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

impl OwnerRef {
    fn from_value(value: &Value) -> Self {
        let text = |field: &str| value[field].as_str().unwrap_or_default().to_owned();
        Self {
            api_version: text("apiVersion"),
            kind: text("kind"),
            name: text("name"),
            uid: text("uid"),
            block: value["blockOwnerDeletion"].as_bool().unwrap_or(false),
        }
    }
}

/// One object as the collector sees it.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its resource type.
    pub resource: Resource,
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
    /// The node of `object`, of type `resource`; `None` without a name or uid.
    pub fn from_object(resource: &Resource, object: &Value) -> Option<Self> {
        let meta = &object["metadata"];
        let text = |field: &str| meta[field].as_str().unwrap_or_default().to_owned();
        let (name, uid) = (text("name"), text("uid"));
        if name.is_empty() || uid.is_empty() {
            return None;
        }
        Some(Self {
            resource: resource.clone(),
            namespace: text("namespace"),
            name,
            uid,
            deleting: !meta["deletionTimestamp"].is_null(),
            finalizers: meta["finalizers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            owners: meta["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .map(OwnerRef::from_value)
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

/// The objects of one pass and who owns whom.
#[derive(Debug, Default)]
pub struct Graph {
    nodes: Vec<Node>,
    by_uid: HashMap<String, usize>,
    /// Owner uid -> its dependents (node index, index of the reference in its owners).
    dependents: HashMap<String, Vec<(usize, usize)>>,
}

impl Graph {
    /// The graph of `nodes`.
    pub fn new(nodes: Vec<Node>) -> Self {
        let by_uid: HashMap<String, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.uid.clone(), i))
            .collect();
        let mut graph = Self {
            nodes,
            by_uid,
            dependents: HashMap::new(),
        };
        for (i, node) in graph.nodes.iter().enumerate() {
            for (r, reference) in node.owners.iter().enumerate() {
                if graph.owner(node, reference).is_some() {
                    graph
                        .dependents
                        .entry(reference.uid.clone())
                        .or_default()
                        .push((i, r));
                }
            }
        }
        graph
    }

    /// Every node.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The listed owner `reference` of `dependent` names: same uid, and for a namespaced
    /// owner the dependent's namespace.
    pub fn owner(&self, dependent: &Node, reference: &OwnerRef) -> Option<&Node> {
        let owner = &self.nodes[*self.by_uid.get(&reference.uid)?];
        let visible = !owner.resource.namespaced || owner.namespace == dependent.namespace;
        visible.then_some(owner)
    }

    /// The dependents of `owner`, each with its reference to it.
    pub fn dependents<'a>(
        &'a self,
        owner: &Node,
    ) -> impl Iterator<Item = (&'a Node, &'a OwnerRef)> {
        self.dependents
            .get(&owner.uid)
            .into_iter()
            .flatten()
            .map(|&(i, r)| (&self.nodes[i], &self.nodes[i].owners[r]))
    }

    /// Whether the list shows every owner of `node` present and none of them waiting for
    /// its dependents: nothing to do for it.
    pub fn owners_solid(&self, node: &Node) -> bool {
        node.owners.iter().all(|reference| {
            self.owner(node, reference)
                .is_some_and(|owner| !owner.deleting_dependents())
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
        Node::from_object(&configmaps(), &json!({"metadata": metadata})).unwrap()
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
        let graph = Graph::new(vec![
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
        ]);
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
}

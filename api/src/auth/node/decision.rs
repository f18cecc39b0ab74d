//! The Node authorizer's decision for one node agent's request (spec 001 "Node
//! authorization", R-ACC-170..173, R-ACC-175), as Kubernetes' node authorizer makes it: reads
//! of secrets, ConfigMaps, claims, volumes, attachments and service account tokens only along
//! the graph; the node's own Node, lease and CSINode by name; with selectors, only its own
//! pods; everything else by the `system:node` role's rules, which this mode applies itself.

use super::graph::Graph;
use super::references::ObjectRef;
use super::references::RefKind;
use super::rules::node_rules_allow;
use crate::auth::Decision;
use crate::flavor::Flavor;
use crate::request::FieldSelector;
use crate::request::RequestInfo;

/// How this replica's Node authorizer decides.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// Names the groups and the node lease namespace.
    pub flavor: Flavor,
    /// `AuthorizeNodeWithSelectors`: Node and pod reads limited to the node's own.
    pub with_selectors: bool,
}

/// No opinion with `reason`.
fn no(reason: impl Into<String>) -> Decision {
    Decision::NoOpinion(reason.into())
}

/// "no relationship" unless `found`.
fn related(found: bool, node: &str) -> Decision {
    if found {
        Decision::Allow
    } else {
        no(format!(
            "no relationship found between node '{node}' and this object"
        ))
    }
}

impl Policy {
    /// The decision on `r` from the node agent of `node`, over `graph`.
    pub fn decide(&self, graph: &Graph, node: &str, r: &RequestInfo) -> Decision {
        let group = group_prefix(self.flavor, &r.api_group);
        if r.is_resource_request
            && let Some(group) = group
        {
            let reaches =
                |kind| move || graph.reaches(&ObjectRef::new(kind, &r.namespace, &r.name), node);
            match (group, r.resource.as_str()) {
                ("", "secrets") => return read_one(node, r, reaches(RefKind::Secret)),
                ("", "configmaps") => return read_one(node, r, reaches(RefKind::ConfigMap)),
                ("", "persistentvolumeclaims") if r.subresource == "status" => {
                    return claim_status(node, r, reaches(RefKind::PersistentVolumeClaim));
                }
                ("", "persistentvolumeclaims") => {
                    return get_one(node, r, reaches(RefKind::PersistentVolumeClaim));
                }
                ("", "persistentvolumes") => {
                    return get_one(node, r, || graph.volume_on(&r.name, node));
                }
                ("resource", "resourceclaims") => {
                    return get_one(node, r, reaches(RefKind::ResourceClaim));
                }
                ("storage", "volumeattachments") => {
                    return get_one(node, r, || graph.attachment_on(&r.name, node));
                }
                ("", "serviceaccounts") => {
                    return create_token(node, r, reaches(RefKind::ServiceAccount));
                }
                ("coordination", "leases") => return self.lease(node, r),
                ("storage", "csinodes") => return csi_node(node, r),
                ("resource", "resourceslices") => return self.resource_slice(graph, node, r),
                ("", "nodes") if self.with_selectors => return own_node(node, r),
                ("", "pods") if self.with_selectors => return own_pods(graph, node, r),
                _ => {}
            }
        }
        if node_rules_allow(self.flavor, r) {
            Decision::Allow
        } else {
            no("")
        }
    }

    /// The node's own lease in the node lease namespace (any name on create: the NodeRestriction
    /// admission plugin checks it).
    fn lease(&self, node: &str, r: &RequestInfo) -> Decision {
        let verb = r.verb.as_str();
        if !matches!(verb, "get" | "create" | "update" | "patch" | "delete") {
            return no("can only get, create, update, patch, or delete a node lease");
        }
        let namespace = self.flavor.node_lease_namespace();
        if r.namespace != namespace {
            return no(format!(
                "can only access leases in the {namespace:?} system namespace"
            ));
        }
        if verb != "create" && r.name != node {
            return no("can only access node lease with the same name as the requesting node");
        }
        Decision::Allow
    }

    /// ResourceSlices: create (admission checks the node), reads and writes of the node's own,
    /// collections with a `nodeName` selector of the node.
    fn resource_slice(&self, graph: &Graph, node: &str, r: &RequestInfo) -> Decision {
        if !r.subresource.is_empty() {
            return no("cannot authorize ResourceSlice subresources");
        }
        match r.verb.as_str() {
            "create" => Decision::Allow,
            "get" | "update" | "patch" | "delete" => {
                named(node, r, || graph.slice_on(&r.name, node))
            }
            "watch" | "list" | "deletecollection" => {
                if !self.with_selectors || selects(r, "nodeName", node) {
                    Decision::Allow
                } else {
                    no(
                        "can only list/watch/deletecollection resourceslices with nodeName field selector",
                    )
                }
            }
            _ => no(
                "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection",
            ),
        }
    }
}

/// `found` for a request naming an object, no opinion without a name.
fn named(node: &str, r: &RequestInfo, found: impl FnOnce() -> bool) -> Decision {
    if r.name.is_empty() {
        return no("No Object name found");
    }
    related(found(), node)
}

/// get/list/watch of one namespaced object the node reaches (secrets, ConfigMaps); a list or
/// watch names it with `metadata.name=<name>`.
fn read_one(node: &str, r: &RequestInfo, found: impl FnOnce() -> bool) -> Decision {
    if !matches!(r.verb.as_str(), "get" | "list" | "watch") {
        return no("can only read resources of this type");
    }
    if !r.subresource.is_empty() {
        return no("cannot read subresource");
    }
    if r.namespace.is_empty() {
        return no("can only read namespaced object of this type");
    }
    named(node, r, found)
}

/// get of one object the node reaches.
fn get_one(node: &str, r: &RequestInfo, found: impl FnOnce() -> bool) -> Decision {
    if r.verb.as_str() != "get" {
        return no("can only get individual resources of this type");
    }
    if !r.subresource.is_empty() {
        return no("cannot get subresource");
    }
    named(node, r, found)
}

/// update/patch of the status of a claim the node reaches.
fn claim_status(node: &str, r: &RequestInfo, found: impl FnOnce() -> bool) -> Decision {
    if !matches!(r.verb.as_str(), "update" | "patch") {
        return no("can only get/update/patch this type");
    }
    named(node, r, found)
}

/// A token for a service account of one of the node's pods.
fn create_token(node: &str, r: &RequestInfo, found: impl FnOnce() -> bool) -> Decision {
    if r.verb.as_str() != "create" || r.name.is_empty() {
        return no("can only create tokens for individual service accounts");
    }
    if r.subresource != "token" {
        return no("can only create token subresource of serviceaccount");
    }
    related(found(), node)
}

/// The group's domain prefix (`storage` of `storage.<domain>`), empty for core; `None` for
/// a group outside the flavor's domain.
fn group_prefix(flavor: Flavor, group: &str) -> Option<&str> {
    if group.is_empty() {
        return Some("");
    }
    group.strip_suffix(flavor.group_domain())?.strip_suffix('.')
}

/// The node's own CSINode (any name on create).
fn csi_node(node: &str, r: &RequestInfo) -> Decision {
    let verb = r.verb.as_str();
    if !matches!(verb, "get" | "create" | "update" | "patch" | "delete") {
        return no("can only get, create, update, patch, or delete a CSINode");
    }
    if !r.subresource.is_empty() {
        return no("cannot authorize CSINode subresources");
    }
    if verb != "create" && r.name != node {
        return no("can only access CSINode with the same name as the requesting node");
    }
    Decision::Allow
}

/// Nodes with selectors: register and update (admission limits them to the node's own), read
/// only its own by name (a list or watch names it with `metadata.name=<node>`).
fn own_node(node: &str, r: &RequestInfo) -> Decision {
    match (r.subresource.as_str(), r.verb.as_str()) {
        ("", "create" | "update" | "patch") | ("status", "update" | "patch") => Decision::Allow,
        ("", "get" | "list" | "watch") if r.name == node => Decision::Allow,
        ("", "get" | "list" | "watch") if r.name.is_empty() => no(format!(
            "node '{node}' cannot read all nodes, only its own Node object"
        )),
        ("", "get" | "list" | "watch") => no(format!(
            "node '{node}' cannot read '{}', only its own Node object",
            r.name
        )),
        _ => no(""),
    }
}

/// Pods with selectors: get of a pod bound to the node, list/watch with
/// `spec.nodeName=<node>` (or naming one such pod), create and delete of mirror pods, status
/// and evictions (admission limits these to the node's own pods).
fn own_pods(graph: &Graph, node: &str, r: &RequestInfo) -> Decision {
    match (r.subresource.as_str(), r.verb.as_str()) {
        ("", "get") => named(node, r, || graph.pod_on(&r.namespace, &r.name, node)),
        ("", "list" | "watch") if selects(r, "spec.nodeName", node) => Decision::Allow,
        ("", "list" | "watch") if !r.name.is_empty() => {
            related(graph.pod_on(&r.namespace, &r.name, node), node)
        }
        ("", "list" | "watch") => no("can only list/watch pods with spec.nodeName field selector"),
        ("", "create" | "delete") | ("status", "update" | "patch") | ("eviction", "create") => {
            Decision::Allow
        }
        _ => no(""),
    }
}

/// Whether the request's field selector requires `label` to be `value` (a selector that does
/// not parse selects nothing).
fn selects(r: &RequestInfo, label: &str, value: &str) -> bool {
    FieldSelector::parse(&r.field_selector).is_ok_and(|s| s.requires(label, value))
}

//! `NodeRestriction`: completes the Node authorizer (R-ACC-174). A node agent
//! (`system:node:<name>` in `system:nodes`) may write only its own Node (never its taints,
//! its config source or the labels kept from nodes), the status of pods bound to it, mirror
//! pods bound to it that reference nothing else, its own Lease and CSINode, ResourceSlices of
//! its own, tokens bound to its pods and evictions of its pods; worded as Kubernetes'
//! plugin/pkg/admission/noderestriction.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::pods;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::StoredJson;
use crate::registry::builtin;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// The NodeRestriction admission plugin.
pub struct NodeRestriction {
    storage: Arc<dyn Storage>,
    flavor: Flavor,
}

/// The labels a node may set on itself although they are in the flavor's label domain.
const KUBELET_LABELS: [&str; 11] = [
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
];

fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The node a user is the agent of: `Some("")` for a member of `system:nodes` whose name
/// names none, `None` for anyone else.
fn node_of<'a>(attributes: &Attributes<'a>) -> Option<&'a str> {
    let user = attributes.user;
    let node = user.name.strip_prefix("system:node:")?;
    user.groups
        .iter()
        .any(|g| g == "system:nodes")
        .then_some(node)
}

/// `namespace` of a label key (what precedes `/`), empty when it has none.
fn label_namespace(key: &str) -> &str {
    key.split_once('/').map_or("", |(ns, _)| ns)
}

fn in_domain(namespace: &str, domain: &str) -> bool {
    namespace == domain || namespace.ends_with(&format!(".{domain}"))
}

/// The keys whose values differ between two label maps.
fn modified_labels(new: &Value, old: &Value) -> BTreeSet<String> {
    let labels = |v: &Value| {
        v.pointer("/metadata/labels")
            .and_then(Value::as_object)
            .cloned()
    };
    let (new, old) = (
        labels(new).unwrap_or_default(),
        labels(old).unwrap_or_default(),
    );
    new.iter()
        .filter(|(k, v)| old.get(*k) != Some(*v))
        .chain(old.iter().filter(|(k, v)| new.get(*k) != Some(*v)))
        .map(|(k, _)| k.clone())
        .collect()
}

impl NodeRestriction {
    /// The plugin, reading pods and nodes from `storage`.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor) -> Self {
        Self { storage, flavor }
    }

    /// The stored object of the built-in `plural` at `namespace`/`name`, as this replica has
    /// it (the plugin's informer cache in Kubernetes).
    async fn stored(
        &self,
        plural: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        let Some(row) = builtin::rows()
            .into_iter()
            .find(|row| row.plural == plural && row.group == builtin::GroupName::Core)
        else {
            return Ok(None);
        };
        let resource = row.resource_type(self.flavor);
        let key = resource.object_key(namespace, name);
        let found = self
            .storage
            .get(&key, ReadConsistency::Any)
            .await
            .map_err(|e| ApiError::from_storage(e, &resource.group_resource(), name))?;
        match found {
            None => Ok(None),
            Some(found) => StoredJson::from_stored(found.value)
                .and_then(|s| s.to_value())
                .map(Some)
                .map_err(|e| ApiError::Internal(format!("stored {plural} {name}: {e}"))),
        }
    }

    /// The pod `name` of the request's namespace: 404 when there is none.
    async fn pod(&self, attributes: &Attributes<'_>, name: &str) -> Result<Value, ApiError> {
        self.stored("pods", attributes.namespace, name)
            .await?
            .ok_or_else(|| ApiError::NotFound {
                resource: crate::group::GroupResource::new("", "pods"),
                name: name.to_owned(),
            })
    }

    /// The labels a node may not add, remove or change.
    fn forbidden_labels(&self, modified: BTreeSet<String>) -> Vec<String> {
        let domain = self.flavor.label_domain();
        let group_domain = self.flavor.group_domain();
        let restriction = format!("node-restriction.{domain}");
        let kubelet_namespaces = [format!("kubelet.{domain}"), format!("node.{domain}")];
        let kubelet_label = |key: &str| {
            let generic = KUBELET_LABELS
                .iter()
                .any(|l| l.replace("kubernetes.io", domain) == key);
            let ns = label_namespace(key);
            generic || kubelet_namespaces.iter().any(|k| in_domain(ns, k))
        };
        modified
            .into_iter()
            .filter(|key| {
                let ns = label_namespace(key);
                in_domain(ns, &restriction)
                    || ((in_domain(ns, domain) || in_domain(ns, group_domain))
                        && !kubelet_label(key))
            })
            .collect()
    }

    async fn pods(
        &self,
        node: &str,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let forbid = |reason: String| Err(attributes.forbidden(reason));
        match (attributes.subresource, attributes.operation) {
            ("", Operation::Create) => self.mirror_pod(node, attributes, object).await,
            ("", Operation::Delete) => match old.map(|p| str_at(p, "/spec/nodeName")) {
                Some(bound) if bound == node => Ok(()),
                _ => forbid(format!(
                    "node {node:?} can only delete pods with spec.nodeName set to itself"
                )),
            },
            ("", operation) => forbid(format!(
                "unexpected operation {:?}, node {node:?} can only create and delete mirror pods",
                operation.as_str()
            )),
            ("status", Operation::Update) => {
                let (Some(new), Some(old)) = (object, old) else {
                    return Ok(());
                };
                if str_at(old, "/spec/nodeName") != node {
                    return forbid(format!(
                        "node {node:?} can only update pod status for pods with spec.nodeName set to itself"
                    ));
                }
                if new.pointer("/metadata/labels") != old.pointer("/metadata/labels") {
                    return forbid(format!(
                        "node {node:?} cannot update labels through pod status"
                    ));
                }
                let claims = |p: &Value| {
                    p.pointer("/status/resourceClaimStatuses")
                        .and_then(Value::as_array)
                        .map(|l| {
                            l.iter()
                                .map(|s| (s["name"].clone(), s["resourceClaimName"].clone()))
                                .collect::<Vec<_>>()
                        })
                        .unwrap_or_default()
                };
                if claims(new) != claims(old) {
                    return forbid(format!(
                        "node {node:?} cannot update resource claim statues"
                    ));
                }
                Ok(())
            }
            ("status", operation) => {
                forbid(format!("unexpected operation {:?}", operation.as_str()))
            }
            ("eviction", Operation::Create) => {
                let name = match attributes.name {
                    "" => object
                        .map(|e| str_at(e, "/metadata/name"))
                        .unwrap_or_default(),
                    name => name,
                };
                if name.is_empty() {
                    return forbid("could not determine pod from request data".to_owned());
                }
                let pod = self.pod(attributes, name).await?;
                match str_at(&pod, "/spec/nodeName") == node {
                    true => Ok(()),
                    false => forbid(format!(
                        "node {node} can only evict pods with spec.nodeName set to itself"
                    )),
                }
            }
            ("eviction", operation) => {
                forbid(format!("unexpected operation {}", operation.as_str()))
            }
            (other, _) => forbid(format!(
                "unexpected pod subresource {other:?}, only 'status' and 'eviction' are allowed"
            )),
        }
    }

    async fn mirror_pod(
        &self,
        node: &str,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> Result<(), ApiError> {
        let Some(pod) = object else {
            return Ok(());
        };
        let forbid = |reason: String| Err(attributes.forbidden(reason));
        let mirror = format!("{}/config.mirror", self.flavor.label_domain());
        if pod
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(&mirror))
            .is_none()
        {
            return forbid(format!(
                "pod does not have {mirror:?} annotation, node {node:?} can only create mirror pods"
            ));
        }
        if str_at(pod, "/spec/nodeName") != node {
            return forbid(format!(
                "node {node:?} can only create pods with spec.nodeName set to itself"
            ));
        }
        let owners = pod
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let owner = match owners {
            [owner] => owner,
            [] => {
                return forbid(format!(
                    "node {node:?} can only create pods with an owner reference set to itself"
                ));
            }
            _ => {
                return forbid(format!(
                    "node {node:?} can only create pods with a single owner reference set to itself"
                ));
            }
        };
        if owner["apiVersion"] != "v1" || owner["kind"] != "Node" || owner["name"] != node {
            return forbid(format!(
                "node {node:?} can only create pods with an owner reference set to itself"
            ));
        }
        if owner["controller"].as_bool() != Some(true) {
            return forbid(format!(
                "node {node:?} can only create pods with a controller owner reference set to itself"
            ));
        }
        if owner["blockOwnerDeletion"].as_bool() == Some(true) {
            return forbid(format!(
                "node {node:?} must not set blockOwnerDeletion on an owner reference"
            ));
        }
        let Some(stored) = self.stored("nodes", "", node).await? else {
            return Err(ApiError::NotFound {
                resource: crate::group::GroupResource::new("", "nodes"),
                name: node.to_owned(),
            });
        };
        let (expected, got) = (str_at(owner, "/uid"), str_at(&stored, "/metadata/uid"));
        if expected != got {
            return forbid(format!(
                "node {node} UID mismatch: expected {expected} got {got}"
            ));
        }
        if !str_at(pod, "/spec/serviceAccountName").is_empty() {
            return forbid(format!(
                "node {node:?} can not create pods that reference a service account"
            ));
        }
        if pods::references_secrets(pod) {
            return forbid(format!(
                "node {node:?} can not create pods that reference secrets"
            ));
        }
        if pods::references_config_maps(pod) {
            return forbid(format!(
                "node {node:?} can not create pods that reference configmaps"
            ));
        }
        let sources = pods::volumes(&pod["spec"])
            .flat_map(|v| v["projected"]["sources"].as_array().into_iter().flatten());
        if sources
            .into_iter()
            .any(|s| !s["clusterTrustBundle"].is_null())
        {
            return forbid(format!(
                "node {node:?} can not create pods that reference clustertrustbundles"
            ));
        }
        if pods::volumes(&pod["spec"]).any(|v| !v["persistentVolumeClaim"].is_null()) {
            return forbid(format!(
                "node {node:?} can not create pods that reference persistentvolumeclaims"
            ));
        }
        Ok(())
    }

    fn node(
        &self,
        node: &str,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let forbid = |reason: String| Err(attributes.forbidden(reason));
        let requested = match (attributes.operation, object) {
            (Operation::Create, Some(o)) => str_at(o, "/metadata/name"),
            _ => attributes.name,
        };
        if requested != node {
            return forbid(format!(
                "node {node:?} is not allowed to modify node {requested:?}"
            ));
        }
        match (attributes.operation, object, old) {
            (Operation::Create, Some(new), _) => {
                if !new["spec"]["configSource"].is_null() {
                    return forbid(format!(
                        "node {node:?} is not allowed to create pods with a non-nil configSource"
                    ));
                }
                let forbidden = self.forbidden_labels(modified_labels(new, &Value::Null));
                if !forbidden.is_empty() {
                    return forbid(format!(
                        "node {node:?} is not allowed to set the following labels: {}",
                        forbidden.join(", ")
                    ));
                }
                Ok(())
            }
            (Operation::Update, Some(new), Some(old)) => {
                let source = &new["spec"]["configSource"];
                if !source.is_null() && *source != old["spec"]["configSource"] {
                    return forbid(format!(
                        "node {node:?} is not allowed to update configSource to a new non-nil configSource"
                    ));
                }
                let taints = |n: &Value| {
                    n["spec"]["taints"]
                        .as_array()
                        .filter(|t| !t.is_empty())
                        .cloned()
                };
                if taints(new) != taints(old) {
                    return forbid(format!("node {node:?} is not allowed to modify taints"));
                }
                let forbidden = self.forbidden_labels(modified_labels(new, old));
                if !forbidden.is_empty() {
                    return forbid(format!(
                        "is not allowed to modify labels: {}",
                        forbidden.join(", ")
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A claim's status: only its capacity, conditions and allocation may change.
    fn claim_status(
        &self,
        node: &str,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let (Operation::Update, Some(new), Some(old)) = (attributes.operation, object, old) else {
            return Err(attributes.forbidden(format!(
                "unexpected operation {:?}",
                attributes.operation.as_str()
            )));
        };
        let stripped = |claim: &Value| {
            let mut claim = claim.clone();
            if let Some(meta) = claim["metadata"].as_object_mut() {
                meta.remove("resourceVersion");
                meta.remove("managedFields");
            }
            if let Some(status) = claim["status"].as_object_mut() {
                for key in [
                    "capacity",
                    "conditions",
                    "allocatedResources",
                    "allocatedResourceStatuses",
                ] {
                    status.remove(key);
                }
            }
            claim
        };
        let changed: Vec<&str> = ["metadata", "spec", "status"]
            .into_iter()
            .filter(|key| stripped(new)[*key] != stripped(old)[*key])
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        Err(attributes.forbidden(format!(
            "node {node:?} is not allowed to update fields other than status.quantity and \
             status.conditions: {} changed",
            changed.join(", ")
        )))
    }

    async fn token(
        &self,
        node: &str,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> Result<(), ApiError> {
        if attributes.operation != Operation::Create || attributes.subresource != "token" {
            return Ok(());
        }
        let forbid = |reason: &str| Err(attributes.forbidden(reason));
        let reference = object.map_or(&Value::Null, |o| &o["spec"]["boundObjectRef"]);
        let name = str_at(reference, "/name");
        if reference["apiVersion"] != "v1" || reference["kind"] != "Pod" || name.is_empty() {
            return forbid("node requested token not bound to a pod");
        }
        let uid = str_at(reference, "/uid");
        if uid.is_empty() {
            return forbid("node requested token with a pod binding without a uid");
        }
        let pod = self.pod(attributes, name).await?;
        if str_at(&pod, "/metadata/uid") != uid {
            return forbid(&format!(
                "the UID in the bound object reference ({uid}) does not match the UID in record. \
                 The object might have been deleted and then recreated"
            ));
        }
        if str_at(&pod, "/spec/nodeName") != node {
            return forbid("node requested token bound to a pod scheduled on a different node");
        }
        Ok(())
    }

    /// A Lease, CSINode or ResourceSlice: only the node's own.
    fn own_object(
        &self,
        node: &str,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let forbid = |reason: &str| Err(attributes.forbidden(reason));
        let created_name = || {
            object
                .map(|o| str_at(o, "/metadata/name"))
                .unwrap_or_default()
        };
        let named = |kind: &str| match attributes.operation {
            Operation::Create if created_name() != node => forbid(&format!(
                "can only access {kind} with the same name as the requesting node"
            )),
            Operation::Create => Ok(()),
            _ if attributes.name != node => forbid(&format!(
                "can only access {kind} with the same name as the requesting node"
            )),
            _ => Ok(()),
        };
        match attributes.resource.plural.as_str() {
            "leases" => {
                let lease_namespace = self.flavor.node_lease_namespace();
                if attributes.namespace != lease_namespace {
                    return forbid(&format!(
                        "can only access leases in the {lease_namespace:?} system namespace"
                    ));
                }
                named("node lease")
            }
            "csinodes" => named("CSINode"),
            _ => {
                let slice_node =
                    |o: Option<&'_ Value>| o.map(|s| str_at(s, "/spec/nodeName").to_owned());
                match attributes.operation {
                    Operation::Create if slice_node(object).as_deref() != Some(node) => forbid(
                        "can only create ResourceSlice with the same NodeName as the requesting node",
                    ),
                    Operation::Delete if slice_node(old).as_deref() != Some(node) => forbid(
                        "can only delete ResourceSlice with the same NodeName as the requesting node",
                    ),
                    _ => Ok(()),
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl Plugin for NodeRestriction {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(node) = node_of(attributes) else {
            return Ok(());
        };
        if attributes.operation == Operation::Connect {
            return Ok(());
        }
        if node.is_empty() {
            return Err(attributes.forbidden(format!(
                "could not determine node from user {:?}",
                attributes.user.name
            )));
        }
        let group = attributes.resource.group.as_str();
        let storage_group = format!("storage.{}", self.flavor.group_domain());
        let resource_group = format!("resource.{}", self.flavor.group_domain());
        let coordination = format!("coordination.{}", self.flavor.group_domain());
        match (group, attributes.resource.plural.as_str()) {
            ("", "pods") => self.pods(node, attributes, object, old).await,
            ("", "nodes") => self.node(node, attributes, object, old),
            ("", "persistentvolumeclaims") => match attributes.subresource {
                "status" => self.claim_status(node, attributes, object, old),
                _ => Err(attributes.forbidden("may only update PVC status")),
            },
            ("", "serviceaccounts") => self.token(node, attributes, object).await,
            (g, "leases") if g == coordination => self.own_object(node, attributes, object, old),
            (g, "csinodes") if g == storage_group => self.own_object(node, attributes, object, old),
            (g, "resourceslices") if g == resource_group => {
                self.own_object(node, attributes, object, old)
            }
            _ => Ok(()),
        }
    }
}

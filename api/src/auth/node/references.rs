//! What the node graph learns from one stored object (spec 001 "Node authorization"): the
//! objects a pod bound to a node makes readable to that node (its service account, secrets,
//! ConfigMaps, claims), and the claim and secrets of a persistent volume. Pure functions over
//! the stored JSON, as Kubernetes' pod and volume visitors walk them.

use std::collections::BTreeSet;

use serde_json::Value;

/// A kind of object a node may reach through the pods bound to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RefKind {
    /// A core `v1` Secret.
    Secret,
    /// A core `v1` ConfigMap.
    ConfigMap,
    /// A core `v1` PersistentVolumeClaim.
    PersistentVolumeClaim,
    /// A core `v1` ServiceAccount (a node may request its tokens).
    ServiceAccount,
    /// A `resource` group ResourceClaim.
    ResourceClaim,
}

/// One namespaced object, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    /// What it is.
    pub kind: RefKind,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl ObjectRef {
    /// The object `kind` `namespace/name`.
    pub fn new(kind: RefKind, namespace: &str, name: &str) -> Self {
        Self {
            kind,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }
}

/// What the graph keeps of a pod bound to a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundPod {
    /// The node it is bound to (`spec.nodeName`).
    pub node: String,
    /// The objects it references, all in its namespace.
    pub refs: BTreeSet<ObjectRef>,
}

/// What the graph keeps of a persistent volume bound to a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundVolume {
    /// The claim it is bound to (`spec.claimRef`): namespace and name.
    pub claim: (String, String),
    /// The secrets the node agent reads to mount it: namespace and name.
    pub secrets: BTreeSet<(String, String)>,
}

/// The pod's node and the objects it makes readable there; `None` for a pod not bound to a
/// node yet. A mirror pod (annotated `<label domain>/config.mirror`, created by a node agent
/// itself) grants nothing beyond itself: a node must not be able to create a pod that gives
/// it more.
///
/// The work is linear in the pod's size, which the object size limit bounds.
pub fn bound_pod(pod: &Value, namespace: &str, mirror_annotation: &str) -> Option<BoundPod> {
    let spec = &pod["spec"];
    let node = text(&spec["nodeName"])?.to_owned();
    let mut refs = BTreeSet::new();
    if pod["metadata"]["annotations"]
        .get(mirror_annotation)
        .is_some()
    {
        return Some(BoundPod { node, refs });
    }
    let mut add = |kind: RefKind, name: Option<&str>| {
        if let Some(name) = name {
            refs.insert(ObjectRef::new(kind, namespace, name));
        }
    };
    add(RefKind::ServiceAccount, text(&spec["serviceAccountName"]));
    for secret in items(&spec["imagePullSecrets"]) {
        add(RefKind::Secret, text(&secret["name"]));
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for container in items(&spec[list]) {
            for env in items(&container["env"]) {
                let from = &env["valueFrom"];
                add(RefKind::Secret, text(&from["secretKeyRef"]["name"]));
                add(RefKind::ConfigMap, text(&from["configMapKeyRef"]["name"]));
            }
            for source in items(&container["envFrom"]) {
                add(RefKind::Secret, text(&source["secretRef"]["name"]));
                add(RefKind::ConfigMap, text(&source["configMapRef"]["name"]));
            }
        }
    }
    let pod_name = text(&pod["metadata"]["name"]).unwrap_or_default();
    for volume in items(&spec["volumes"]) {
        for secret in pod_volume_secrets(volume) {
            add(RefKind::Secret, Some(secret));
        }
        add(RefKind::ConfigMap, text(&volume["configMap"]["name"]));
        for source in items(&volume["projected"]["sources"]) {
            add(RefKind::Secret, text(&source["secret"]["name"]));
            add(RefKind::ConfigMap, text(&source["configMap"]["name"]));
        }
        add(
            RefKind::PersistentVolumeClaim,
            text(&volume["persistentVolumeClaim"]["claimName"]),
        );
        if volume.get("ephemeral").is_some_and(|e| !e.is_null()) {
            let volume_name = text(&volume["name"]).unwrap_or_default();
            let claim = format!("{pod_name}-{volume_name}");
            add(RefKind::PersistentVolumeClaim, Some(&claim));
        }
    }
    for claim in resource_claims(pod) {
        add(RefKind::ResourceClaim, Some(claim));
    }
    Some(BoundPod { node, refs })
}

/// The secrets a pod volume names (the volume plugins that take one).
fn pod_volume_secrets(volume: &Value) -> impl Iterator<Item = &str> {
    let names = [
        &volume["secret"]["secretName"],
        &volume["azureFile"]["secretName"],
        &volume["cephfs"]["secretRef"]["name"],
        &volume["cinder"]["secretRef"]["name"],
        &volume["flexVolume"]["secretRef"]["name"],
        &volume["rbd"]["secretRef"]["name"],
        &volume["scaleIO"]["secretRef"]["name"],
        &volume["iscsi"]["secretRef"]["name"],
        &volume["storageos"]["secretRef"]["name"],
        &volume["csi"]["nodePublishSecretRef"]["name"],
    ];
    names.into_iter().filter_map(text)
}

/// The ResourceClaims a pod uses: named directly, or generated from a template and recorded
/// in its status, and the claim of its extended resources.
fn resource_claims(pod: &Value) -> impl Iterator<Item = &str> {
    let statuses = items(&pod["status"]["resourceClaimStatuses"]);
    let from_spec = items(&pod["spec"]["resourceClaims"]).filter_map(move |claim| {
        if let Some(name) = text(&claim["resourceClaimName"]) {
            return Some(name);
        }
        let template_claim = text(&claim["name"])?;
        (statuses.clone())
            .find(|s| text(&s["name"]) == Some(template_claim))
            .and_then(|s| text(&s["resourceClaimName"]))
    });
    let extended = text(&pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"]);
    from_spec.chain(extended)
}

/// The volume's claim and the secrets a node agent reads to mount it; `None` for a volume
/// bound to no claim (no node can reach it then).
pub fn bound_volume(pv: &Value) -> Option<BoundVolume> {
    let spec = &pv["spec"];
    let claim_namespace = text(&spec["claimRef"]["namespace"])?;
    let claim_name = text(&spec["claimRef"]["name"])?;
    let mut secrets = BTreeSet::new();
    let mut add = |name: Option<&str>, namespace: Option<&str>| {
        if let Some(name) = name {
            let namespace = namespace.unwrap_or(claim_namespace);
            secrets.insert((namespace.to_owned(), name.to_owned()));
        }
    };
    let azure = &spec["azureFile"];
    add(text(&azure["secretName"]), text(&azure["secretNamespace"]));
    let references = [
        &spec["cephfs"]["secretRef"],
        &spec["cinder"]["secretRef"],
        &spec["flexVolume"]["secretRef"],
        &spec["rbd"]["secretRef"],
        &spec["scaleIO"]["secretRef"],
        &spec["iscsi"]["secretRef"],
        &spec["storageos"]["secretRef"],
        // Of a CSI volume only the secrets the node agent uses: stage, publish, expand.
        &spec["csi"]["nodeStageSecretRef"],
        &spec["csi"]["nodePublishSecretRef"],
        &spec["csi"]["nodeExpandSecretRef"],
    ];
    for reference in references {
        add(text(&reference["name"]), text(&reference["namespace"]));
    }
    Some(BoundVolume {
        claim: (claim_namespace.to_owned(), claim_name.to_owned()),
        secrets,
    })
}

/// The `spec.nodeName` of a VolumeAttachment or ResourceSlice, if set.
pub fn node_name(object: &Value) -> Option<String> {
    text(&object["spec"]["nodeName"]).map(str::to_owned)
}

/// A non-empty string field.
fn text(value: &Value) -> Option<&str> {
    value.as_str().filter(|s| !s.is_empty())
}

/// The items of an array field (none when absent).
fn items(value: &Value) -> std::slice::Iter<'_, Value> {
    value.as_array().map_or([].iter(), |a| a.iter())
}

//! What several plugins read of pods: whether a write is of a pod itself, a pod spec's
//! containers of every kind and its volumes, and whether it references secrets or config maps.

use serde_json::Value;

use crate::admission::Attributes;

/// Whether the write is of a pod itself (not a subresource).
pub(super) fn is_pod(attributes: &Attributes<'_>) -> bool {
    attributes.resource.group.is_empty()
        && attributes.resource.plural == "pods"
        && attributes.subresource.is_empty()
}

/// Whether `container`'s environment takes a value from a `key_ref` (`valueFrom`) or a
/// whole `from_ref` (`envFrom`).
fn env_refers(container: &Value, key_ref: &str, from_ref: &str) -> bool {
    let mut env = container["env"].as_array().into_iter().flatten();
    let mut from = container["envFrom"].as_array().into_iter().flatten();
    env.any(|e| e["valueFrom"].get(key_ref).is_some())
        || from.any(|e| e.get(from_ref).is_some_and(|r| !r.is_null()))
}

/// Whether `pod` references a secret (Kubernetes' `VisitPodSecretNames`).
pub(super) fn references_secrets(pod: &Value) -> bool {
    let spec = &pod["spec"];
    let volume_refs = |v: &Value| {
        let with_ref = [
            "cephfs",
            "cinder",
            "flexVolume",
            "rbd",
            "scaleIO",
            "iscsi",
            "storageos",
        ];
        v.get("secret").is_some_and(|s| !s.is_null())
            || v["azureFile"]["secretName"]
                .as_str()
                .is_some_and(|name| !name.is_empty())
            || with_ref.iter().any(|k| !v[*k]["secretRef"].is_null())
            || !v["csi"]["nodePublishSecretRef"].is_null()
            || v["projected"]["sources"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| !s["secret"].is_null())
    };
    spec["imagePullSecrets"]
        .as_array()
        .is_some_and(|l| !l.is_empty())
        || containers(spec).any(|c| env_refers(c, "secretKeyRef", "secretRef"))
        || volumes(spec).any(volume_refs)
}

/// Whether `pod` references a config map (Kubernetes' `VisitPodConfigmapNames`).
pub(super) fn references_config_maps(pod: &Value) -> bool {
    let spec = &pod["spec"];
    let volume_refs = |v: &Value| {
        !v["configMap"].is_null()
            || v["projected"]["sources"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| !s["configMap"].is_null())
    };
    containers(spec).any(|c| env_refers(c, "configMapKeyRef", "configMapRef"))
        || volumes(spec).any(volume_refs)
}

/// A pod spec's containers: the init containers first, then the regular and the ephemeral
/// ones.
pub(super) fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |key| spec[key].as_array().into_iter().flatten())
}

/// A pod spec's volumes.
pub(super) fn volumes(spec: &Value) -> impl Iterator<Item = &Value> {
    spec["volumes"].as_array().into_iter().flatten()
}

//! The node graph: which node reaches which object (Kubernetes' node authorizer graph, in our
//! own shape). Edges run pod -> node, referenced object -> pod, volume -> claim, secret ->
//! volume, attachment or resource slice -> node; instead of walking them per request the
//! graph keeps, per referenced object, how many pods on each node reference it, so a question
//! is a few map lookups. Every change replaces one object's edges only.

use std::collections::BTreeSet;
use std::collections::HashMap;

use super::references::BoundPod;
use super::references::BoundVolume;
use super::references::ObjectRef;
use super::references::RefKind;

/// A namespace and a name.
type Named = (String, String);

/// The edges of the objects followed, and the per-node counts derived from them.
#[derive(Debug, Default)]
pub struct Graph {
    /// Pods bound to a node, by namespace and name.
    pods: HashMap<Named, BoundPod>,
    /// For every object bound pods reference: how many of them are on each node.
    reach: HashMap<ObjectRef, HashMap<String, usize>>,
    /// Persistent volumes bound to a claim, by name.
    volumes: HashMap<String, BoundVolume>,
    /// For every secret bound volumes name: the names of those volumes.
    volume_secrets: HashMap<Named, BTreeSet<String>>,
    /// VolumeAttachments with a node, by name: the node.
    attachments: HashMap<String, String>,
    /// ResourceSlices with a node, by name: the node.
    slices: HashMap<String, String>,
}

impl Graph {
    /// Sets the edges of the pod `namespace/name`: `None` when it is gone or not bound.
    /// A pod whose node and references did not change costs one comparison.
    pub fn set_pod(&mut self, namespace: &str, name: &str, pod: Option<BoundPod>) {
        let id = (namespace.to_owned(), name.to_owned());
        if self.pods.get(&id) == pod.as_ref() {
            return;
        }
        if let Some(old) = self.pods.remove(&id) {
            for r in &old.refs {
                self.uncount(r, &old.node);
            }
        }
        if let Some(new) = pod {
            for r in &new.refs {
                let nodes = self.reach.entry(r.clone()).or_default();
                *nodes.entry(new.node.clone()).or_default() += 1;
            }
            self.pods.insert(id, new);
        }
    }

    /// Takes one pod on `node` off the count of `r`.
    fn uncount(&mut self, r: &ObjectRef, node: &str) {
        let Some(nodes) = self.reach.get_mut(r) else {
            return;
        };
        if let Some(count) = nodes.get_mut(node) {
            *count -= 1;
            if *count == 0 {
                nodes.remove(node);
            }
        }
        if nodes.is_empty() {
            self.reach.remove(r);
        }
    }

    /// Sets the edges of the persistent volume `name`: `None` when it is gone or bound to no
    /// claim.
    pub fn set_volume(&mut self, name: &str, volume: Option<BoundVolume>) {
        if self.volumes.get(name) == volume.as_ref() {
            return;
        }
        if let Some(old) = self.volumes.remove(name) {
            for secret in &old.secrets {
                if let Some(names) = self.volume_secrets.get_mut(secret) {
                    names.remove(name);
                    if names.is_empty() {
                        self.volume_secrets.remove(secret);
                    }
                }
            }
        }
        if let Some(new) = volume {
            for secret in &new.secrets {
                let names = self.volume_secrets.entry(secret.clone()).or_default();
                names.insert(name.to_owned());
            }
            self.volumes.insert(name.to_owned(), new);
        }
    }

    /// Sets the node of the VolumeAttachment `name` (`None`: gone or on no node).
    pub fn set_attachment(&mut self, name: &str, node: Option<String>) {
        set_node(&mut self.attachments, name, node);
    }

    /// Sets the node of the ResourceSlice `name` (`None`: gone or on no node).
    pub fn set_slice(&mut self, name: &str, node: Option<String>) {
        set_node(&mut self.slices, name, node);
    }

    /// Forgets every pod (before a relist of pods).
    pub fn clear_pods(&mut self) {
        self.pods.clear();
        self.reach.clear();
    }

    /// Forgets every persistent volume (before a relist of volumes).
    pub fn clear_volumes(&mut self) {
        self.volumes.clear();
        self.volume_secrets.clear();
    }

    /// Forgets every VolumeAttachment (before a relist).
    pub fn clear_attachments(&mut self) {
        self.attachments.clear();
    }

    /// Forgets every ResourceSlice (before a relist).
    pub fn clear_slices(&mut self) {
        self.slices.clear();
    }

    /// Whether the pod `namespace/name` is bound to `node`.
    pub fn pod_on(&self, namespace: &str, name: &str, node: &str) -> bool {
        let id = (namespace.to_owned(), name.to_owned());
        self.pods.get(&id).is_some_and(|pod| pod.node == node)
    }

    /// Whether a pod bound to `node` references `object`, or, for a secret, a persistent
    /// volume `node` reaches names it.
    pub fn reaches(&self, object: &ObjectRef, node: &str) -> bool {
        let direct = (self.reach.get(object)).is_some_and(|nodes| nodes.contains_key(node));
        if direct || object.kind != RefKind::Secret {
            return direct;
        }
        let id = (object.namespace.clone(), object.name.clone());
        (self.volume_secrets.get(&id))
            .is_some_and(|names| names.iter().any(|pv| self.volume_on(pv, node)))
    }

    /// Whether the persistent volume `name` is bound to a claim a pod on `node` uses.
    pub fn volume_on(&self, name: &str, node: &str) -> bool {
        self.volumes.get(name).is_some_and(|volume| {
            let (namespace, claim) = &volume.claim;
            let claim = ObjectRef::new(RefKind::PersistentVolumeClaim, namespace, claim);
            self.reaches(&claim, node)
        })
    }

    /// Whether the VolumeAttachment `name` is for `node`.
    pub fn attachment_on(&self, name: &str, node: &str) -> bool {
        self.attachments.get(name).is_some_and(|n| n == node)
    }

    /// Whether the ResourceSlice `name` is for `node`.
    pub fn slice_on(&self, name: &str, node: &str) -> bool {
        self.slices.get(name).is_some_and(|n| n == node)
    }
}

/// Sets or removes `name`'s node in `nodes`.
fn set_node(nodes: &mut HashMap<String, String>, name: &str, node: Option<String>) {
    match node {
        Some(node) => nodes.insert(name.to_owned(), node),
        None => nodes.remove(name),
    };
}

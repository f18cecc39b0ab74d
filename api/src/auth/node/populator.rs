//! Keeps the node graph current from the store: one [`Reflector`] per followed prefix (pods,
//! persistent volumes, VolumeAttachments, ResourceSlices) feeds [`GraphCache`], which turns
//! each change into the edges of that one object. Decisions read the graph under a short
//! read lock and never wait for IO.

use std::sync::Arc;
use std::sync::RwLock;
use std::sync::RwLockReadGuard;

use serde_json::Value;

use super::graph::Graph;
use super::references;
use crate::flavor::Flavor;
use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::registry::builtin::rows;

/// The kinds of objects the graph follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Core `v1` pods.
    Pods,
    /// Core `v1` persistent volumes.
    Volumes,
    /// `storage` VolumeAttachments.
    Attachments,
    /// `resource` ResourceSlices.
    Slices,
}

impl Source {
    /// Every source, in the order they are followed.
    const ALL: [Self; 4] = [Self::Pods, Self::Volumes, Self::Attachments, Self::Slices];

    /// The (group domain prefix, plural) of the source's resource; no prefix: core.
    fn resource(self) -> (Option<&'static str>, &'static str) {
        match self {
            Self::Pods => (None, "pods"),
            Self::Volumes => (None, "persistentvolumes"),
            Self::Attachments => (Some("storage"), "volumeattachments"),
            Self::Slices => (Some("resource"), "resourceslices"),
        }
    }
}

/// The node graph with the prefixes that feed it.
pub struct GraphCache {
    graph: RwLock<Graph>,
    prefixes: Vec<(Source, String)>,
    mirror_annotation: String,
}

impl GraphCache {
    /// An empty graph fed from the stored keys of the followed kinds in `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        let types: Vec<_> = rows().iter().map(|r| r.resource_type(flavor)).collect();
        let prefixes = (Source::ALL.into_iter())
            .filter_map(|source| {
                let (domain, plural) = source.resource();
                let group =
                    domain.map_or(String::new(), |d| format!("{d}.{}", flavor.group_domain()));
                let ty = types
                    .iter()
                    .find(|t| t.group == group && t.plural == plural)?;
                Some((source, ty.key_prefix()))
            })
            .collect();
        Self {
            graph: RwLock::new(Graph::default()),
            prefixes,
            mirror_annotation: format!("{}/config.mirror", flavor.label_domain()),
        }
    }

    /// The key prefixes to follow, one reflector each.
    pub fn prefixes(&self) -> impl Iterator<Item = &str> {
        self.prefixes.iter().map(|(_, p)| p.as_str())
    }

    /// The graph, for one decision.
    pub fn read(&self) -> RwLockReadGuard<'_, Graph> {
        self.graph.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The source stored under `prefix`.
    fn source(&self, prefix: &str) -> Option<Source> {
        (self.prefixes.iter())
            .find(|(_, p)| p == prefix)
            .map(|(s, _)| *s)
    }

    /// Sets the edges of the object at `key` (under `prefix`) from `object` (`None`: gone).
    fn set(
        &self,
        graph: &mut Graph,
        source: Source,
        prefix: &str,
        key: &str,
        object: Option<&Value>,
    ) {
        let Some(rest) = key.strip_prefix(prefix) else {
            return;
        };
        match source {
            Source::Pods => {
                let Some((namespace, name)) = rest.split_once('/') else {
                    return;
                };
                let pod = object
                    .and_then(|o| references::bound_pod(o, namespace, &self.mirror_annotation));
                graph.set_pod(namespace, name, pod);
            }
            Source::Volumes => graph.set_volume(rest, object.and_then(references::bound_volume)),
            Source::Attachments => {
                graph.set_attachment(rest, object.and_then(references::node_name))
            }
            Source::Slices => graph.set_slice(rest, object.and_then(references::node_name)),
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Graph> {
        self.graph.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Cache for GraphCache {
    fn replace(&self, prefix: &str, objects: Vec<(String, Arc<Value>)>) {
        let Some(source) = self.source(prefix) else {
            return;
        };
        let mut graph = self.write();
        match source {
            Source::Pods => graph.clear_pods(),
            Source::Volumes => graph.clear_volumes(),
            Source::Attachments => graph.clear_attachments(),
            Source::Slices => graph.clear_slices(),
        }
        for (key, object) in &objects {
            self.set(&mut graph, source, prefix, key, Some(object));
        }
    }

    fn apply(&self, prefix: &str, events: Vec<CacheEvent>) {
        let Some(source) = self.source(prefix) else {
            return;
        };
        let mut graph = self.write();
        for event in &events {
            match event {
                CacheEvent::Upsert { key, object } => {
                    self.set(&mut graph, source, prefix, key, Some(object));
                }
                CacheEvent::Delete { key } => self.set(&mut graph, source, prefix, key, None),
            }
        }
    }
}

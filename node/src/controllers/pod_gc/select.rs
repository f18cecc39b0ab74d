//! What pod garbage collection reads of pods and Nodes, and which pods each of its rules
//! picks, as kube-controller-manager's pod GC decides: terminated pods beyond the threshold
//! (evicted first, then oldest, then by name), terminating pods on a NotReady Node with the
//! out-of-service taint, terminating pods never scheduled, and pods bound to a missing Node.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::collections::HashMap;

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

/// The taint that marks a Node out of service (its pods may be removed by force).
pub const OUT_OF_SERVICE_TAINT: &str = "node.kubernetes.io/out-of-service";

/// What pod GC reads of a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodView {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.resourceVersion`.
    pub resource_version: String,
    /// `metadata.creationTimestamp`, if readable.
    pub created: Option<DateTime<Utc>>,
    /// `metadata.deletionTimestamp` is set.
    pub terminating: bool,
    /// `metadata.deletionGracePeriodSeconds` is 0: a forced deletion already happened, only
    /// finalizers hold the pod.
    pub forced: bool,
    /// `spec.nodeName`, empty when never scheduled.
    pub node: String,
    /// `status.phase`.
    pub phase: String,
    /// `status.reason`.
    pub reason: String,
    /// `status.conditions` as they are.
    pub conditions: Vec<Value>,
}

impl PodView {
    /// The view of `object`; `None` without a name, namespace or uid.
    pub fn of(object: &Value) -> Option<Self> {
        let meta = &object["metadata"];
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        let name = meta["name"].as_str()?.to_owned();
        let namespace = meta["namespace"].as_str()?.to_owned();
        let uid = meta["uid"].as_str()?.to_owned();
        Some(Self {
            namespace,
            name,
            uid,
            resource_version: text(&meta["resourceVersion"]),
            created: meta["creationTimestamp"]
                .as_str()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc)),
            terminating: !meta["deletionTimestamp"].is_null(),
            forced: meta["deletionGracePeriodSeconds"].as_i64() == Some(0),
            node: text(&object["spec"]["nodeName"]),
            phase: text(&object["status"]["phase"]),
            reason: text(&object["status"]["reason"]),
            conditions: object["status"]["conditions"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        })
    }

    /// Whether the pod has terminated: a phase other than Pending, Running or Unknown.
    pub fn terminated(&self) -> bool {
        !matches!(self.phase.as_str(), "Pending" | "Running" | "Unknown")
    }

    /// Whether the pod ended in phase Succeeded or Failed (no need to mark it Failed).
    pub fn finished(&self) -> bool {
        matches!(self.phase.as_str(), "Succeeded" | "Failed")
    }

    /// Whether the node agent evicted the pod.
    fn evicted(&self) -> bool {
        self.phase == "Failed" && self.reason == "Evicted"
    }
}

/// What pod GC reads of a Node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeView {
    /// Its `Ready` condition is `True`.
    pub ready: bool,
    /// It has the out-of-service taint (any value, any effect).
    pub out_of_service: bool,
}

impl NodeView {
    /// The Node `object`'s name and view; `None` without a name.
    pub fn of(object: &Value) -> Option<(String, Self)> {
        let name = object["metadata"]["name"].as_str()?.to_owned();
        let ready = object["status"]["conditions"]
            .as_array()
            .is_some_and(|conditions| {
                conditions
                    .iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            });
        let out_of_service = object["spec"]["taints"]
            .as_array()
            .is_some_and(|taints| taints.iter().any(|t| t["key"] == OUT_OF_SERVICE_TAINT));
        Some((
            name,
            Self {
                ready,
                out_of_service,
            },
        ))
    }
}

/// Evicted pods first, then the oldest, then by name.
fn eviction_then_age(a: &PodView, b: &PodView) -> Ordering {
    b.evicted()
        .cmp(&a.evicted())
        .then_with(|| a.created.cmp(&b.created))
        .then_with(|| a.name.cmp(&b.name))
}

/// The terminated pods beyond `threshold` (0: no limit), in the order they go.
pub fn terminated_beyond(pods: &[PodView], threshold: usize) -> Vec<&PodView> {
    let mut terminated: Vec<&PodView> = pods.iter().filter(|p| p.terminated()).collect();
    if threshold == 0 || terminated.len() <= threshold {
        return Vec::new();
    }
    terminated.sort_by(|a, b| eviction_then_age(a, b));
    terminated.truncate(terminated.len() - threshold);
    terminated
}

/// The terminating pods bound to a Node that is not Ready and has the out-of-service taint,
/// in the order they go.
pub fn terminating_out_of_service<'a>(
    pods: &'a [PodView],
    nodes: &HashMap<String, NodeView>,
) -> Vec<&'a PodView> {
    let mut picked: Vec<&PodView> = pods
        .iter()
        .filter(|p| p.terminating)
        .filter(|p| {
            nodes
                .get(&p.node)
                .is_some_and(|n| !n.ready && n.out_of_service)
        })
        .collect();
    picked.sort_by(|a, b| eviction_then_age(a, b));
    picked
}

/// The terminating pods never bound to a Node.
pub fn unscheduled_terminating(pods: &[PodView]) -> Vec<&PodView> {
    pods.iter()
        .filter(|p| p.terminating && p.node.is_empty())
        .collect()
}

/// The Node names pods are bound to that are not among `nodes`.
pub fn missing_nodes(pods: &[PodView], nodes: &HashMap<String, NodeView>) -> BTreeSet<String> {
    pods.iter()
        .filter(|p| !p.node.is_empty() && !nodes.contains_key(&p.node))
        .map(|p| p.node.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str, node: &str, phase: &str, created: &str, terminating: bool) -> PodView {
        let mut object = json!({
            "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                         "creationTimestamp": created},
            "spec": {"nodeName": node},
            "status": {"phase": phase},
        });
        if terminating {
            object["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        PodView::of(&object).unwrap()
    }

    fn names(pods: &[&PodView]) -> Vec<String> {
        pods.iter().map(|p| p.name.clone()).collect()
    }

    // Beyond the threshold, evicted pods go first, then the oldest, names breaking ties;
    // running pods never count.
    #[test]
    fn terminated_pods_beyond_the_threshold_go_evicted_then_oldest_first() {
        let mut evicted = pod("evicted", "n1", "Failed", "2026-01-03T00:00:00Z", false);
        evicted.reason = "Evicted".to_owned();
        let pods = vec![
            pod("young", "n1", "Succeeded", "2026-01-02T00:00:00Z", false),
            pod("old-b", "n1", "Failed", "2026-01-01T00:00:00Z", false),
            pod("old-a", "n1", "Succeeded", "2026-01-01T00:00:00Z", false),
            pod("running", "n1", "Running", "2025-01-01T00:00:00Z", false),
            evicted,
        ];
        assert_eq!(
            names(&terminated_beyond(&pods, 1)),
            ["evicted", "old-a", "old-b"]
        );
        assert!(terminated_beyond(&pods, 4).is_empty());
        assert!(
            terminated_beyond(&pods, 0).is_empty(),
            "0 turns the rule off"
        );
    }

    // Only terminating pods on a NotReady Node with the out-of-service taint are picked.
    #[test]
    fn out_of_service_needs_the_taint_not_ready_and_terminating() {
        let node = |ready: &str, taint: bool| {
            let taints = if taint {
                json!([{"key": OUT_OF_SERVICE_TAINT, "value": "nodeshutdown", "effect": "NoExecute"}])
            } else {
                json!([])
            };
            NodeView::of(&json!({
                "metadata": {"name": "n"},
                "spec": {"taints": taints},
                "status": {"conditions": [{"type": "Ready", "status": ready}]},
            }))
            .unwrap()
            .1
        };
        let nodes: HashMap<String, NodeView> = [
            ("down".to_owned(), node("False", true)),
            ("ready".to_owned(), node("True", true)),
            ("untainted".to_owned(), node("Unknown", false)),
        ]
        .into();
        let pods = vec![
            pod("a", "down", "Running", "2026-01-01T00:00:00Z", true),
            pod("b", "down", "Running", "2026-01-01T00:00:00Z", false),
            pod("c", "ready", "Running", "2026-01-01T00:00:00Z", true),
            pod("d", "untainted", "Running", "2026-01-01T00:00:00Z", true),
            pod("e", "gone", "Running", "2026-01-01T00:00:00Z", true),
        ];
        assert_eq!(names(&terminating_out_of_service(&pods, &nodes)), ["a"]);
        assert_eq!(
            missing_nodes(&pods, &nodes).into_iter().collect::<Vec<_>>(),
            ["gone"]
        );
    }

    // Unscheduled pods are picked only once terminating.
    #[test]
    fn unscheduled_pods_are_picked_once_terminating() {
        let pods = vec![
            pod("a", "", "Pending", "2026-01-01T00:00:00Z", true),
            pod("b", "", "Pending", "2026-01-01T00:00:00Z", false),
            pod("c", "n1", "Running", "2026-01-01T00:00:00Z", true),
        ];
        assert_eq!(names(&unscheduled_terminating(&pods)), ["a"]);
        assert!(pods[0].terminating && !pods[0].forced && !pods[0].finished());
    }
}

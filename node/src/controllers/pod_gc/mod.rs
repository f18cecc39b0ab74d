//! `podgc`: pod garbage collection as kube-controller-manager's pod GC does it, as the
//! `pod-garbage-collector` ServiceAccount of the system namespace. Each pass lists pods and
//! Nodes and removes by force ([`force`]) the pods [`select`] picks, in Kubernetes' order:
//! terminated pods beyond the threshold; terminating pods on NotReady Nodes with the
//! out-of-service taint; pods bound to a Node that is missing, once it has been missing for the
//! quarantine time and a live GET of the Node confirms it is gone; terminating pods never
//! scheduled. A pass removes at most [`PASS_BUDGET`] pods and runs again at once when it
//! had more to do; it asks to run again when the next quarantine ends.
//!
//! The quarantine clock lives in memory, as in Kubernetes: a new leader starts it afresh.

pub mod force;
pub mod select;

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use apiary_api::auth::controller_user;
use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::select::NodeView;
use self::select::PodView;
use super::Controller;
use super::ControllerContext;
use super::changes::Interest;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge_paced;

/// The controller's `--controllers` name.
pub const NAME: &str = "podgc";

/// The ServiceAccount pod GC acts as.
pub const ACCOUNT: &str = "pod-garbage-collector";

/// How long a Node must be missing before its pods go (Kubernetes' `quarantineTime`).
pub const QUARANTINE: Duration = Duration::from_secs(40);

/// How many terminated pods may remain (kube-controller-manager's
/// `--terminated-pod-gc-threshold` default).
pub const TERMINATED_THRESHOLD: usize = 12_500;

/// How long after a change of the store the next pass waits: a pass lists every pod and
/// Node, so a busy store costs one pass per pace (Kubernetes checks every 20 s).
pub const PACE: Duration = Duration::from_secs(2);

/// The most pods one pass removes.
pub const PASS_BUDGET: usize = 500;

/// Pod garbage collection.
#[derive(Debug, Clone, Copy)]
pub struct PodGc {
    /// How long a Node must be missing before its pods go.
    pub quarantine: Duration,
    /// How many terminated pods may remain; 0 keeps them all.
    pub terminated_threshold: usize,
}

impl Default for PodGc {
    fn default() -> Self {
        Self {
            quarantine: QUARANTINE,
            terminated_threshold: TERMINATED_THRESHOLD,
        }
    }
}

#[async_trait::async_trait]
impl Controller for PodGc {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::new(
            context.api.clone(),
            controller_user(context.flavor, ACCOUNT),
        );
        let missing_since = Mutex::new(BTreeMap::new());
        let changes = (context.changes).of(Interest::resources(&["pods", "nodes"]));
        converge_paced(NAME, &context, &stop, PACE, changes, || {
            self.pass(&client, &context, &missing_since)
        })
        .await;
    }
}

/// The pods a pass removes, each with the condition it is marked with.
struct Removals<'a> {
    picked: Vec<(&'a PodView, Option<Value>)>,
    seen: HashSet<&'a str>,
}

impl<'a> Removals<'a> {
    /// Adds `pods` not already picked; a finished pod a forced delete already hit is left to
    /// its finalizers (deleting it again would change nothing).
    fn add(&mut self, pods: impl IntoIterator<Item = &'a PodView>, condition: Option<&Value>) {
        for pod in pods {
            if !(pod.forced && pod.finished()) && self.seen.insert(&pod.uid) {
                self.picked.push((pod, condition.cloned()));
            }
        }
    }
}

impl PodGc {
    /// One pass; when the next quarantine ends (or now, when the budget ran out).
    async fn pass(
        &self,
        client: &InProcessClient,
        context: &ControllerContext,
        missing_since: &Mutex<BTreeMap<String, DateTime<Utc>>>,
    ) -> Result<Option<DateTime<Utc>>, ControllerError> {
        let pods: Vec<PodView> = client
            .list("/api/v1/pods")
            .await?
            .iter()
            .filter_map(PodView::of)
            .collect();
        let nodes: HashMap<String, NodeView> = client
            .list("/api/v1/nodes")
            .await?
            .iter()
            .filter_map(NodeView::of)
            .collect();
        let now = context.clock.now();
        let (expired, mut next) = self.quarantined(&pods, &nodes, missing_since, now);
        let mut gone = Vec::new();
        for node in expired {
            if client
                .get(&format!("/api/v1/nodes/{node}"))
                .await?
                .is_none()
            {
                gone.push(node);
            } else {
                let due = now + chrono::Duration::from_std(self.quarantine).unwrap_or_default();
                next = Some(next.map_or(due, |n| n.min(due)));
                missing_since
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(node, now);
            }
        }

        let mut removals = Removals {
            picked: Vec::new(),
            seen: HashSet::new(),
        };
        removals.add(
            select::terminated_beyond(&pods, self.terminated_threshold),
            None,
        );
        removals.add(select::terminating_out_of_service(&pods, &nodes), None);
        let orphaned = pods.iter().filter(|p| gone.contains(&p.node));
        removals.add(orphaned, Some(&force::node_gone_condition()));
        removals.add(select::unscheduled_terminating(&pods), None);

        let more = removals.picked.len() > PASS_BUDGET;
        let mut failure = None;
        for (pod, condition) in removals.picked.into_iter().take(PASS_BUDGET) {
            if let Err(error) =
                force::mark_failed_and_delete(client, pod, condition.as_ref(), now).await
            {
                tracing::warn!(%error, "pod GC could not remove a pod");
                failure = Some(error);
            }
        }
        match failure {
            Some(error) => Err(error),
            None if more => Ok(Some(now)),
            None => Ok(next),
        }
    }

    /// Updates the quarantine of missing Nodes: the Nodes whose quarantine ended, and when the
    /// next one ends.
    fn quarantined(
        &self,
        pods: &[PodView],
        nodes: &HashMap<String, NodeView>,
        missing_since: &Mutex<BTreeMap<String, DateTime<Utc>>>,
        now: DateTime<Utc>,
    ) -> (Vec<String>, Option<DateTime<Utc>>) {
        let quarantine =
            chrono::Duration::from_std(self.quarantine).unwrap_or(chrono::Duration::MAX);
        let missing = select::missing_nodes(pods, nodes);
        let mut since = missing_since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        since.retain(|node, _| missing.contains(node));
        let mut expired = Vec::new();
        let mut next: Option<DateTime<Utc>> = None;
        for node in missing {
            let first = *since.entry(node.clone()).or_insert(now);
            let due = first.checked_add_signed(quarantine).unwrap_or(first);
            if due <= now {
                expired.push(node);
            } else {
                next = Some(next.map_or(due, |n| n.min(due)));
            }
        }
        (expired, next)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // A missing Node is quarantined from when a pass first sees it; the pass asks to run again
    // when the quarantine ends, and a Node no longer missing leaves quarantine.
    #[test]
    fn missing_nodes_wait_out_the_quarantine() {
        let gc = PodGc {
            quarantine: Duration::from_secs(40),
            terminated_threshold: 0,
        };
        let pod = PodView::of(&json!({
            "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
            "spec": {"nodeName": "gone"},
        }))
        .unwrap();
        let start = Utc::now();
        let since = Mutex::new(BTreeMap::new());
        let none = HashMap::new();
        let (expired, next) = gc.quarantined(std::slice::from_ref(&pod), &none, &since, start);
        assert!(expired.is_empty());
        assert_eq!(next, Some(start + chrono::Duration::seconds(40)));
        let later = start + chrono::Duration::seconds(41);
        let (expired, next) = gc.quarantined(std::slice::from_ref(&pod), &none, &since, later);
        assert_eq!(expired, ["gone"]);
        assert_eq!(next, None);
        let (expired, _) = gc.quarantined(&[], &none, &since, later);
        assert!(expired.is_empty());
        assert!(since.lock().unwrap().is_empty());
    }

    // A pod two rules pick is removed once; a finished pod already deleted with grace 0 (held
    // by finalizers) is not deleted again, one still running is marked Failed first.
    #[test]
    fn removals_skip_repeats_and_finished_forced_pods() {
        let view = |name: &str, phase: &str, forced: bool| {
            let mut object = json!({
                "metadata": {"name": name, "namespace": "ns", "uid": name},
                "spec": {"nodeName": "n"},
                "status": {"phase": phase},
            });
            if forced {
                object["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
                object["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            }
            PodView::of(&object).unwrap()
        };
        let pods = [
            view("a", "Running", false),
            view("held", "Failed", true),
            view("running", "Running", true),
        ];
        let mut removals = Removals {
            picked: Vec::new(),
            seen: HashSet::new(),
        };
        removals.add(&pods, None);
        removals.add(&pods[..1], Some(&force::node_gone_condition()));
        let names: Vec<&str> = removals
            .picked
            .iter()
            .map(|(p, _)| p.name.as_str())
            .collect();
        assert_eq!(names, ["a", "running"]);
        assert!(removals.picked.iter().all(|(_, c)| c.is_none()));
    }
}

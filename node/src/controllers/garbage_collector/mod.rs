//! `garbagecollector` (issue 19 item 3): kube-controller-manager's garbage collector, as the
//! `generic-garbage-collector` ServiceAccount of the system namespace. Each pass discovers
//! every served resource type ([`discovery`]), lists them, builds the owner/dependent graph
//! ([`graph`]) and converges it: owners being deleted with the `orphan` or
//! `foregroundDeletion` finalizer are served first ([`owners`]), then every object whose
//! owners are not all present and settled is judged by live reads ([`attempt`]): deleted
//! when all its owners are absent, its dangling references removed when some remain. Passes
//! run after the writes that can give them work ([`interest`]), at most one per [`PACE`], and
//! keep nothing in memory, so a new leader finishes a deletion the old one started. A pass
//! writes at most [`MAX_WRITES`] times and then runs again at once.

mod attempt;
mod discovery;
mod graph;
mod owners;

use std::sync::Arc;
use std::time::Duration;

use apiary_api::auth::controller_user;
use apiary_api::registry::ORPHAN_FINALIZER;
use apiary_api::registry::StoredJson;
use apiary_raft::command::KeyValue;
use apiary_raft::mvcc::Event;
use apiary_raft::mvcc::EventKind;
use chrono::DateTime;
use chrono::Utc;
use tokio_util::sync::CancellationToken;

use self::discovery::Resource;
use self::discovery::Resources;
use self::graph::Graph;
use self::graph::Listed;
use self::graph::Node;
use self::graph::PlainObjects;
use super::Controller;
use super::ControllerContext;
use super::changes::Interest;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge_paced;

/// The controller's `--controllers` name.
pub const NAME: &str = "garbagecollector";

/// Its ServiceAccount in the system namespace (bootstrap role `system:controller:<this>`).
pub const ACCOUNT: &str = "generic-garbage-collector";

/// How long after a write of [`interest`] the next pass waits: a pass lists every object, so
/// a stream of such writes costs one pass per pace.
pub const PACE: Duration = Duration::from_secs(1);

/// Objects per listed page. Each page costs the server a count of the objects after it
/// (`remainingItemCount`), so a pass costs the square of a collection over this; a page holds
/// only the metadata the collector decodes ([`Listed`]).
pub const PAGE: usize = 5_000;

/// Writes (deletes, patches, Events) one pass makes at most.
pub const MAX_WRITES: usize = 500;

/// The garbage collector.
#[derive(Debug, Clone, Copy, Default)]
pub struct GarbageCollector;

#[async_trait::async_trait]
impl Controller for GarbageCollector {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::new(
            context.api.clone(),
            controller_user(context.flavor, ACCOUNT),
        );
        let changes = context.changes.of(interest());
        converge_paced(NAME, &context, &stop, PACE, changes, || {
            collect(&client, &context)
        })
        .await;
    }
}

/// The writes after which a pass may find work. The collector acts only on objects with
/// owner references or a deletion under way, and only when an owner is gone (a delete),
/// being deleted, or its dependents change; which resources exist changes with the
/// definitions and API services. A write of a plain object (most writes) is none of these,
/// so a stream of them costs no pass and no relist.
fn interest() -> Interest {
    Interest::resources(&["customresourcedefinitions", "apiservices"]).and_writes(may_give_work)
}

/// Whether `event` deletes an object, or writes one that has (or had) owner references or
/// a deletion timestamp.
fn may_give_work(event: &Event) -> bool {
    let concerned = |kv: &KeyValue| {
        StoredJson::may_have_member(&kv.value, "ownerReferences")
            || StoredJson::may_have_member(&kv.value, "deletionTimestamp")
    };
    event.kind == EventKind::Delete
        || concerned(&event.kv)
        || event.prev_kv.as_ref().is_some_and(concerned)
}

/// One pass's state: what it acts with and its remaining write budget.
struct Collector<'a> {
    client: &'a InProcessClient,
    resources: Resources,
    now: DateTime<Utc>,
    writes_left: usize,
}

impl Collector<'_> {
    /// Counts one write against the budget.
    fn spend(&mut self) {
        self.writes_left = self.writes_left.saturating_sub(1);
    }

    /// Whether the budget is spent.
    fn exhausted(&self) -> bool {
        self.writes_left == 0
    }

    /// Does what `node` needs, if anything.
    async fn process(&mut self, graph: &Graph, node: &Node) -> Result<(), ControllerError> {
        if node.deleting && node.has_finalizer(ORPHAN_FINALIZER) {
            self.orphan_dependents(graph, node).await
        } else if node.deleting_dependents() {
            self.deleting_dependents(graph, node).await
        } else if !node.deleting && !node.owners.is_empty() && !graph.owners_solid(node) {
            self.attempt_to_delete(graph, node).await
        } else {
            Ok(())
        }
    }
}

/// Adds every object of type `resource` to `plain` or, when the collector may act on it, to
/// `nodes`, listed page by page so that at most one page of objects ([`PAGE`]) is held at
/// once: a whole list of a large collection held hundreds of megabytes on the leader every
/// pass. Only the metadata the graph needs is decoded ([`Listed`]): building every object
/// whole was most of a pass's CPU.
async fn list_nodes(
    client: &InProcessClient,
    resource: &Arc<Resource>,
    nodes: &mut Vec<Node>,
    plain: &mut PlainObjects,
) -> Result<(), ControllerError> {
    let path = resource.collection("");
    let mut token = None;
    loop {
        let (items, next) = (client.list_page::<Listed>(&path, token.as_deref(), PAGE)).await?;
        nodes.extend(
            items
                .into_iter()
                .filter(|o| !plain.add(resource, o))
                .filter_map(|o| Node::from_listed(resource, o)),
        );
        match next {
            Some(next) => token = Some(next),
            None => return Ok(()),
        }
    }
}

/// One pass over every collected resource type; runs again at once when the write budget
/// ran out. A failed list or write fails the pass (after the others are done), to be
/// retried.
async fn collect(
    client: &InProcessClient,
    context: &ControllerContext,
) -> Result<Option<DateTime<Utc>>, ControllerError> {
    let resources = discovery::discover(client).await?;
    let mut first_error = None;
    let mut nodes = Vec::new();
    let mut plain = PlainObjects::default();
    for resource in resources.collected() {
        let resource = Arc::new(resource.clone());
        if let Err(error) = list_nodes(client, &resource, &mut nodes, &mut plain).await {
            first_error.get_or_insert(error);
        }
    }
    let graph = Graph::new(nodes, plain);
    let now = context.clock.now();
    let mut collector = Collector {
        client,
        resources,
        now,
        writes_left: MAX_WRITES,
    };
    for node in graph.nodes() {
        if collector.exhausted() {
            break;
        }
        if let Err(error) = collector.process(&graph, node).await {
            tracing::debug!(object = %node.path(), %error, "garbage collection step failed");
            first_error.get_or_insert(error);
        }
    }
    match first_error {
        Some(error) => Err(error),
        None if collector.exhausted() => Ok(Some(now)),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use serde_json::Value;
    use serde_json::json;

    use super::*;

    fn write(kind: EventKind, object: Option<Value>, before: Option<Value>) -> Event {
        let kv = |object: Option<Value>| KeyValue {
            key: "/registry/core/configmaps/ns/a".to_owned(),
            value: object.map_or_else(Bytes::new, |o| StoredJson::to_stored(&o).expect("object")),
            ..KeyValue::default()
        };
        Event {
            kind,
            kv: kv(object),
            prev_kv: before.map(|b| kv(Some(b))),
        }
    }

    #[test]
    fn only_deletes_and_writes_of_owned_or_deleting_objects_bring_a_pass() {
        let plain = json!({"metadata": {"name": "a", "finalizers": ["x"]}, "data": {"k": "v"}});
        let owned = json!({"metadata": {"name": "a", "ownerReferences": [{"uid": "u"}]}});
        let deleting =
            json!({"metadata": {"name": "a", "deletionTimestamp": "2026-01-01T00:00:00Z"}});
        assert!(!may_give_work(&write(
            EventKind::Put,
            Some(plain.clone()),
            None
        )));
        assert!(!may_give_work(&write(
            EventKind::Put,
            Some(plain.clone()),
            Some(plain.clone())
        )));
        assert!(may_give_work(&write(
            EventKind::Put,
            Some(owned.clone()),
            None
        )));
        assert!(may_give_work(&write(
            EventKind::Put,
            Some(plain.clone()),
            Some(owned)
        )));
        assert!(may_give_work(&write(
            EventKind::Put,
            Some(deleting),
            Some(plain.clone())
        )));
        assert!(may_give_work(&write(EventKind::Delete, None, Some(plain))));
    }
}

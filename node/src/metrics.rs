//! The store's metrics on the API's `/metrics`: etcd's names where etcd has the metric
//! (`etcd_server_*`, `etcd_disk_*`, `etcd_network_peer_round_trip_time_seconds`), `apiary_raft_*`
//! otherwise. Latencies and counts come from what the raft crate records as it works
//! ([`apiary_raft::metrics`]); the raft state (leader, term, indexes, followers' lag) is read
//! from openraft's own metrics when a scrape asks, not counted a second time.

use std::sync::Arc;

use apiary_api::metrics::Descriptor;
use apiary_api::metrics::Metrics;
use apiary_api::metrics::Stability;
use apiary_raft::metrics::LogMetrics;
use apiary_raft::replica::Replica;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;

const fn alpha(name: &'static str, help: &'static str) -> Descriptor {
    Descriptor {
        name,
        help,
        stability: Stability::Alpha,
        deprecated_since: None,
    }
}

const HAS_LEADER: Descriptor = alpha(
    "etcd_server_has_leader",
    "Whether or not a leader exists. 1 is existence, 0 is not.",
);
const IS_LEADER: Descriptor = alpha(
    "etcd_server_is_leader",
    "Whether or not this member is a leader. 1 if is, 0 otherwise.",
);
const LEADER_CHANGES: Descriptor = alpha(
    "etcd_server_leader_changes_seen",
    "The number of leader changes seen.",
);
const PROPOSALS_COMMITTED: Descriptor = alpha(
    "etcd_server_proposals_committed_total",
    "The total number of consensus proposals committed.",
);
const PROPOSALS_APPLIED: Descriptor = alpha(
    "etcd_server_proposals_applied_total",
    "The total number of consensus proposals applied.",
);
const PROPOSALS_PENDING: Descriptor = alpha(
    "etcd_server_proposals_pending",
    "The current number of pending proposals to commit.",
);
const WAL_FSYNC: Descriptor = alpha(
    "etcd_disk_wal_fsync_duration_seconds",
    "The latency distributions of fsync called by WAL.",
);
const BACKEND_COMMIT: Descriptor = alpha(
    "etcd_disk_backend_commit_duration_seconds",
    "The latency distributions of commit called by backend (here: applying one committed entry to the store).",
);
const SNAPSHOT_DURATION: Descriptor = alpha(
    "etcd_disk_backend_snapshot_duration_seconds",
    "The latency distribution of backend snapshots.",
);
const SNAPSHOT_SIZE: Descriptor = alpha(
    "apiary_raft_snapshot_size_bytes",
    "The size of the newest snapshot this replica built, in bytes.",
);
const PEER_ROUND_TRIP: Descriptor = alpha(
    "etcd_network_peer_round_trip_time_seconds",
    "Round-Trip-Time histogram between peers",
);
const TERM: Descriptor = alpha("apiary_raft_term", "The current raft term.");
const COMMIT_INDEX: Descriptor = alpha(
    "apiary_raft_commit_index",
    "The newest log index this replica knows to be committed.",
);
const APPLIED_INDEX: Descriptor = alpha(
    "apiary_raft_applied_index",
    "The newest log index applied to this replica's store.",
);
const REPLICATION_LAG: Descriptor = alpha(
    "apiary_raft_replication_lag_entries",
    "On the leader, how many log entries each follower's matched index is behind the leader's last one.",
);
const READ_INDEX: Descriptor = alpha(
    "apiary_raft_read_index_duration_seconds",
    "The latency distribution of getting a quorum-confirmed read index for a linearizable read.",
);

/// A follower of the leader.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FollowerLabels {
    follower: String,
}

/// Registers the store's metrics of `replica` and its raft log in `metrics`.
pub fn register_store_metrics(metrics: &Metrics, replica: Arc<Replica>, log: LogMetrics) {
    let recorded = replica.metrics().clone();
    metrics.register(&LEADER_CHANGES, log.leader_changes);
    metrics.register(&WAL_FSYNC, log.fsync);
    metrics.register(&BACKEND_COMMIT, recorded.apply);
    metrics.register(&SNAPSHOT_DURATION, recorded.snapshot_duration);
    metrics.register(&SNAPSHOT_SIZE, recorded.snapshot_bytes);
    metrics.register(&PEER_ROUND_TRIP, recorded.peer_round_trip);
    metrics.register(&READ_INDEX, recorded.read_index);

    let gauge = |descriptor: &Descriptor| {
        let gauge = Gauge::<i64>::default();
        metrics.register(descriptor, gauge.clone());
        gauge
    };
    let has_leader = gauge(&HAS_LEADER);
    let is_leader = gauge(&IS_LEADER);
    let committed = gauge(&PROPOSALS_COMMITTED);
    let applied = gauge(&PROPOSALS_APPLIED);
    let pending = gauge(&PROPOSALS_PENDING);
    let term = gauge(&TERM);
    let commit_index = gauge(&COMMIT_INDEX);
    let applied_index = gauge(&APPLIED_INDEX);
    let lag = Family::<FollowerLabels, Gauge>::default();
    metrics.register(&REPLICATION_LAG, lag.clone());

    metrics.on_scrape(move || {
        let status = replica.status();
        let number = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        has_leader.set(i64::from(status.leader.is_some()));
        is_leader.set(i64::from(status.is_leader));
        committed.set(number(status.committed));
        applied.set(number(status.applied));
        commit_index.set(number(status.committed));
        applied_index.set(number(status.applied));
        term.set(number(status.term));
        let in_flight = if status.is_leader {
            replica.last_log_index().saturating_sub(status.committed)
        } else {
            0
        };
        pending.set(number(in_flight));
        lag.clear();
        for (follower, behind) in replica.replication_lag() {
            lag.get_or_create(&FollowerLabels {
                follower: follower.to_string(),
            })
            .set(number(behind));
        }
    });
}

//! The replica handle the node crate uses: starts raft over the durable log and the state
//! machine, founds or joins the cluster, and serves writes (forwarded to the leader when
//! needed), linearizable read indexes and local reads, and changes the membership (lists,
//! adds, promotes and removes members, hands leadership over); [`peer_router`] serves the peer
//! RPCs to it.
//!
//! See DESIGN.md §3: the revision of a write is the log index of its entry; a follower answers
//! a forwarded write only once it has applied that revision itself (read-your-writes on the
//! same replica), and a "Most Recent" read waits for the leader-confirmed read index.

mod backup;
mod config;
mod error;
mod forward_batch;
mod leader_call;
mod leader_error;
mod member_change;
mod member_change_error;
mod member_rpc;
mod members;
mod membership;
mod membership_error;
mod peer_router;
mod promoter;
mod propose;
mod read;
mod read_rounds;
mod removal;
mod report;
mod status;
mod transfer;
mod voter_urls;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use openraft::ServerState;
use openraft::SnapshotPolicy;
use openraft::async_runtime::watch::WatchReceiver;
use openraft::storage::RaftLogStorage;
use tokio::sync::broadcast;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use self::config::RaftTimings;
pub use self::config::ReplicaConfig;
pub use self::error::ReadError;
pub use self::error::ReplicaError;
pub use self::error::WriteError;
use self::forward_batch::ForwardBatches;
pub(crate) use self::leader_error::LeaderError;
pub use self::member_change_error::MemberChangeError;
pub use self::member_change_error::Refusal;
pub use self::members::Member;
pub use self::members::Role;
pub use self::membership_error::RemoveMemberError;
pub use self::peer_router::peer_router;
use self::read_rounds::ReadRounds;
pub(crate) use self::removal::removal_outcome;
pub use self::report::ReplicaReport;
pub use self::status::ReplicaStatus;
use crate::log::LogFs;
use crate::log::LogOptions;
use crate::log::LogStore;
use crate::log::StdFs;
use crate::metrics::StoreMetrics;
use crate::mvcc;
use crate::mvcc::Revision;
use crate::network::PeerClient;
use crate::network::PeerHealthMap;
use crate::network::PeerNetworkFactory;
use crate::network::Transport;
use crate::state_machine::ApplyNotice;
use crate::state_machine::SharedState;
use crate::state_machine::StateMachineStore;
use crate::state_machine::WatchStream;
use crate::typ::NodeId;
use crate::typ::TypeConfig;

/// The raft handle over Apiary's state machine.
pub(crate) type RaftHandle = openraft::Raft<TypeConfig, StateMachineStore>;

/// One replica of the replicated store.
pub struct Replica {
    id: NodeId,
    peer_url: String,
    initial_cluster: BTreeMap<NodeId, String>,
    timings: RaftTimings,
    raft: RaftHandle,
    shared: Arc<SharedState>,
    peers: PeerClient,
    /// Whether each peer answers raft's calls.
    peer_health: PeerHealthMap,
    /// The background task asking the cluster to admit this replica (`join_existing`).
    join_task: Mutex<Option<JoinHandle<()>>>,
    /// The auto-promotion loop (it acts only while this replica leads).
    promote_task: Mutex<Option<JoinHandle<()>>>,
    /// Read-index rounds confirmed by this replica as the leader, shared by concurrent reads.
    leader_reads: ReadRounds<Result<u64, LeaderError>>,
    /// Read-index requests to the leader, shared by concurrent reads on this replica.
    remote_reads: ReadRounds<Result<u64, LeaderError>>,
    /// Writes forwarded to the leader, sent in batches while earlier ones are on their way.
    forwards: ForwardBatches,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replica")
            .field("id", &self.id)
            .field("peer_url", &self.peer_url)
            .finish_non_exhaustive()
    }
}

impl Replica {
    /// Opens the log in `data_dir/log` and the snapshots in `data_dir/snapshots`, starts raft
    /// and founds the cluster (`join_existing == false`: `initialize` with every member of
    /// `initial_cluster`, a no-op when the log is not pristine) or starts joining it in the
    /// background (`join_existing == true`: the join RPC adds this replica as a learner, then
    /// promotes it to voter once it caught up). Serve [`peer_router`] for the
    /// returned replica right away: peers replicate to it during the join.
    pub async fn start(
        config: ReplicaConfig,
        transport: Arc<dyn Transport>,
    ) -> Result<Arc<Replica>, ReplicaError> {
        validate(&config)?;
        let log_dir = config.data_dir.join("log");
        let open_dir = log_dir.clone();
        let opened =
            tokio::task::spawn_blocking(move || LogStore::open(open_dir, LogOptions::default()))
                .await
                .map_err(|e| ReplicaError::OpenLog {
                    path: log_dir.clone(),
                    source: Box::new(e),
                })?;
        let log_store = opened.map_err(|e| ReplicaError::OpenLog {
            path: log_dir.clone(),
            source: Box::new(e),
        })?;
        Self::start_with_storage(config, transport, log_store, Arc::new(StdFs)).await
    }

    /// [`Replica::start`] with a caller-supplied raft log and file system for the snapshots
    /// (the simulation injects its own disk).
    pub async fn start_with_storage<LS>(
        config: ReplicaConfig,
        transport: Arc<dyn Transport>,
        log_store: LS,
        snapshot_fs: Arc<dyn LogFs>,
    ) -> Result<Arc<Replica>, ReplicaError>
    where
        LS: RaftLogStorage<TypeConfig>,
    {
        validate(&config)?;
        let snapshot_dir = config.data_dir.join("snapshots");
        let state_machine = StateMachineStore::open(snapshot_fs, &snapshot_dir)
            .await
            .map_err(|source| ReplicaError::OpenSnapshots {
                path: snapshot_dir.clone(),
                source,
            })?;
        let shared = state_machine.shared();
        let peers = PeerClient::new(transport);
        let raft_config = raft_config(&config)?;
        let network = PeerNetworkFactory::new(peers.clone(), config.id, shared.metrics().clone());
        let peer_health = network.health();
        let raft = RaftHandle::new(
            config.id,
            Arc::new(raft_config),
            network,
            log_store,
            state_machine,
        )
        .await
        .map_err(ReplicaError::Raft)?;
        let replica = Arc::new(Replica {
            id: config.id,
            peer_url: config.peer_url.clone(),
            initial_cluster: config.initial_cluster.clone(),
            timings: config.raft.clone(),
            raft,
            shared,
            forwards: ForwardBatches::new(peers.clone()),
            peers,
            peer_health,
            join_task: Mutex::new(None),
            promote_task: Mutex::new(None),
            leader_reads: ReadRounds::new(),
            remote_reads: ReadRounds::new(),
        });
        replica.start_promoting();
        if config.join_existing {
            replica.start_joining();
        } else {
            replica.found_cluster().await?;
        }
        Ok(replica)
    }

    /// This replica's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// Runs `f` on the local store (any replica, no round trip: "Any" and "not older than"
    /// reads, and reads after [`Replica::read_index`]). `f` must be quick: apply waits for it.
    pub fn with_store<T>(&self, f: impl FnOnce(&mvcc::Store) -> T) -> T {
        self.shared.with_store(f)
    }

    /// Waits until the local store has applied `revision`, for at most `timeout`.
    pub async fn wait_applied(
        &self,
        revision: Revision,
        timeout: Duration,
    ) -> Result<(), ReadError> {
        if self.shared.wait_applied(revision, timeout).await {
            Ok(())
        } else {
            Err(ReadError::NotApplied {
                revision,
                applied: self.shared.applied(),
            })
        }
    }

    /// Subscribes to the applied revision (it only grows).
    pub fn subscribe_applied(&self) -> watch::Receiver<Revision> {
        self.shared.subscribe_applied()
    }

    /// Subscribes to the local apply stream, in revision order, for watches. A subscriber
    /// that falls behind gets `Lagged` and must resynchronise from the store.
    pub fn subscribe_notices(&self) -> broadcast::Receiver<Arc<ApplyNotice>> {
        self.shared.subscribe_notices()
    }

    /// Watches the local store: changes under `prefix` after revision `after`, replayed from
    /// history and then followed live, in revision order. Revisions are global, so a watch
    /// resumed on another replica from the same revision continues without gap or duplicate.
    pub fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, mvcc::MvccError> {
        WatchStream::new(self.shared.clone(), prefix, after)
    }

    /// What the store measures (crate::metrics); raft's own state is in [`Replica::status`]
    /// and [`Replica::replication_lag`].
    pub fn metrics(&self) -> &StoreMetrics {
        self.shared.metrics()
    }

    /// On the leader, how many log entries each follower's matched index is behind the
    /// leader's last one (empty elsewhere).
    pub fn replication_lag(&self) -> BTreeMap<NodeId, u64> {
        let metrics = self.raft.metrics();
        let m = metrics.borrow_watched();
        let last = m.last_log_index.unwrap_or(0);
        m.replication
            .iter()
            .flatten()
            .filter(|(id, _)| **id != self.id)
            .map(|(id, matched)| (*id, last.saturating_sub(matched.map_or(0, |l| l.index))))
            .collect()
    }

    /// The newest log index this replica holds (appended, not necessarily committed).
    pub fn last_log_index(&self) -> Revision {
        self.raft
            .metrics()
            .borrow_watched()
            .last_log_index
            .unwrap_or(0)
    }

    /// What this replica knows about itself and the cluster.
    pub fn status(&self) -> ReplicaStatus {
        let metrics = self.raft.metrics();
        let m = metrics.borrow_watched();
        ReplicaStatus {
            id: self.id,
            running: m.running_state.is_ok(),
            leader: m.current_leader,
            term: m.current_term,
            applied: self.shared.applied(),
            committed: m.local_committed.map_or(0, |l| l.index),
            voters: m.membership_config.membership().voter_ids().collect(),
            is_leader: m.state == ServerState::Leader,
            snapshot: m.snapshot.map(|l| l.index),
            purged: m.purged.map(|l| l.index),
            last_log_index: m.last_log_index,
            first_log_index: m
                .last_log_index
                .map(|_| m.purged.map_or(0, |l| l.index + 1)),
            members: members::members_of(&m),
        }
    }

    /// Waits until this replica leads raft (`leading`) or no longer does (`!leading`), following
    /// raft's state as it changes; `false` when raft stopped first.
    ///
    /// Follows raft's server metrics, which change with the vote, the role and the membership
    /// only: the full metrics change several times per write, and a waiter on them would wake
    /// for each one.
    pub async fn await_leadership(&self, leading: bool) -> bool {
        let mut metrics = self.raft.server_metrics();
        loop {
            if (metrics.borrow_watched().state == ServerState::Leader) == leading {
                return true;
            }
            if metrics.changed().await.is_err() {
                return false;
            }
        }
    }

    /// Stops raft (and a join still in progress, and the auto-promotion loop). The replica
    /// answers nothing afterwards.
    pub async fn shutdown(&self) -> Result<(), ReplicaError> {
        for slot in [&self.join_task, &self.promote_task] {
            let task = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(task) = task {
                task.abort();
            }
        }
        self.raft
            .shutdown()
            .await
            .map_err(|e| ReplicaError::Shutdown(e.to_string()))
    }

    pub(crate) fn raft(&self) -> &RaftHandle {
        &self.raft
    }

    pub(crate) fn request_timeout(&self) -> Duration {
        self.timings.request_timeout
    }

    /// The leader as this replica knows it: its id and peer URL.
    fn leader(&self) -> Option<(NodeId, String)> {
        let metrics = self.raft.metrics();
        let m = metrics.borrow_watched();
        let id = m.current_leader?;
        let url = m
            .membership_config
            .membership()
            .get_node(&id)
            .map(|n| n.addr.clone())
            .or_else(|| self.initial_cluster.get(&id).cloned())?;
        Some((id, url))
    }
}

fn validate(config: &ReplicaConfig) -> Result<(), ReplicaError> {
    let invalid = |m: &str| Err(ReplicaError::InvalidConfig(m.to_string()));
    if config.id == 0 {
        return invalid("node ids start at 1");
    }
    if config.snapshot_logs_threshold == 0 {
        return invalid("snapshot_logs_threshold must be at least 1");
    }
    if !config.join_existing && !config.initial_cluster.contains_key(&config.id) {
        return invalid("a founding replica must be a member of initial_cluster");
    }
    if config.join_existing && !config.initial_cluster.keys().any(|id| *id != config.id) {
        return invalid("a joining replica needs another member in initial_cluster");
    }
    Ok(())
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The most log entries kept behind a snapshot (etcd keeps 5,000 for a slow follower's
/// catch-up): with a snapshot every 100,000 entries, keeping a whole interval would double
/// the log on disk.
const MAX_LOGS_KEPT_BEHIND_SNAPSHOT: u64 = 10_000;

fn raft_config(config: &ReplicaConfig) -> Result<openraft::Config, ReplicaError> {
    let t = &config.raft;
    let threshold = config.snapshot_logs_threshold;
    openraft::Config {
        cluster_name: "apiary".to_string(),
        heartbeat_interval: millis(t.heartbeat_interval),
        election_timeout_min: millis(t.election_timeout_min),
        election_timeout_max: millis(t.election_timeout_max),
        install_snapshot_timeout: millis(t.install_snapshot_timeout),
        snapshot_policy: SnapshotPolicy::LogsSinceLast(threshold),
        // Keep entries behind the snapshot (one snapshot interval, at most
        // [`MAX_LOGS_KEPT_BEHIND_SNAPSHOT`]), so a briefly lagging follower catches up from
        // the log rather than by a whole snapshot.
        max_in_snapshot_log_to_keep: threshold.min(MAX_LOGS_KEPT_BEHIND_SNAPSHOT),
        // openraft wants this above the snapshot interval, or a snapshot may not cure lag.
        replication_lag_threshold: threshold.saturating_mul(2),
        // A replica coming back from a partition must not bump the term and depose a healthy
        // leader; Pre-Vote makes it ask first.
        enable_pre_vote: Some(true),
        ..Default::default()
    }
    .validate()
    .map_err(ReplicaError::RaftConfig)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ReplicaConfig {
        ReplicaConfig {
            id: 1,
            data_dir: std::path::PathBuf::from("/nonexistent"),
            peer_url: "http://a".to_string(),
            initial_cluster: BTreeMap::from([(1, "http://a".to_string())]),
            join_existing: false,
            raft: RaftTimings::default(),
            snapshot_logs_threshold: 100,
        }
    }

    #[test]
    fn unusable_configurations_are_refused_before_touching_disk() {
        assert!(validate(&config()).is_ok());
        let zero_id = ReplicaConfig { id: 0, ..config() };
        let no_snapshots = ReplicaConfig {
            snapshot_logs_threshold: 0,
            ..config()
        };
        let not_a_member = ReplicaConfig { id: 2, ..config() };
        let nobody_to_join = ReplicaConfig {
            join_existing: true,
            ..config()
        };
        for bad in [zero_id, no_snapshots, not_a_member, nobody_to_join] {
            assert!(matches!(
                validate(&bad),
                Err(ReplicaError::InvalidConfig(_))
            ));
        }
    }

    #[test]
    fn default_timings_make_a_valid_raft_config() {
        let raft = raft_config(&config()).expect("valid");
        assert_eq!(
            SnapshotPolicy::LogsSinceLast(100),
            raft.snapshot_policy,
            "the threshold drives snapshots"
        );
        assert_eq!(100, raft.max_in_snapshot_log_to_keep);
        let rare = ReplicaConfig {
            snapshot_logs_threshold: 100_000,
            ..config()
        };
        let raft = raft_config(&rare).expect("valid");
        assert_eq!(
            MAX_LOGS_KEPT_BEHIND_SNAPSHOT, raft.max_in_snapshot_log_to_keep,
            "a long interval keeps a bounded log behind its snapshot"
        );
    }

    #[test]
    fn every_election_timeout_of_five_heartbeats_makes_a_valid_raft_config() {
        // The binary accepts any election timeout of at least five heartbeat intervals.
        for heartbeat in [1, 7, 50, 200, 1000] {
            for times in [5, 6, 13] {
                let raft = RaftTimings::new(
                    Duration::from_millis(heartbeat),
                    Duration::from_millis(heartbeat * times),
                );
                let made = raft_config(&ReplicaConfig { raft, ..config() });
                assert!(made.is_ok(), "{heartbeat} ms x {times}: {made:?}");
            }
        }
    }
}

//! How a replica is configured: its identity, where it keeps its data, who its peers are and
//! its raft timings.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::typ::NodeId;

/// A replica's configuration.
#[derive(Debug, Clone)]
pub struct ReplicaConfig {
    /// This replica's id: its 1-based position in `initial_cluster`.
    pub id: NodeId,
    /// Where the raft log (`log/`) and snapshots (`snapshots/`) live.
    pub data_dir: PathBuf,
    /// The URL peers reach this replica at.
    pub peer_url: String,
    /// The static membership: node id to peer URL (this replica included).
    pub initial_cluster: BTreeMap<NodeId, String>,
    /// `false`: found a new cluster from `initial_cluster` (every member may do so; the first
    /// to win an election wins). `true`: ask the existing members to add this replica.
    pub join_existing: bool,
    /// Raft timings.
    pub raft: RaftTimings,
    /// Build a snapshot (and later purge the log up to it) every this many applied entries.
    pub snapshot_logs_threshold: u64,
}

/// Raft and peer-RPC timings. The defaults suit replicas on one host or a fast LAN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaftTimings {
    /// How often the leader sends heartbeats; also the deadline of one replication RPC.
    pub heartbeat_interval: Duration,
    /// The shortest election timeout.
    pub election_timeout_min: Duration,
    /// The longest election timeout.
    pub election_timeout_max: Duration,
    /// The deadline for sending a whole snapshot to a peer.
    pub install_snapshot_timeout: Duration,
    /// How long a write or a read index may take, retries and waiting for apply included.
    pub request_timeout: Duration,
}

impl Default for RaftTimings {
    fn default() -> Self {
        Self {
            heartbeat_interval: Duration::from_millis(100),
            election_timeout_min: Duration::from_millis(500),
            election_timeout_max: Duration::from_millis(1000),
            install_snapshot_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(5),
        }
    }
}

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
///
/// openraft makes a follower that heard a leader wait out the leader's lease (its
/// `election_timeout_max`) and then a random election timeout in
/// `[election_timeout_min, election_timeout_max)` before it stands, so it stands after
/// `[min + max, 2 * max)` of silence. [`RaftTimings::new`] picks both so that this window is
/// `[E, 1.2 E)` for an election timeout `E`, as etcd's "stands after about E".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaftTimings {
    /// How often the leader sends heartbeats; also the deadline of one replication RPC.
    pub heartbeat_interval: Duration,
    /// openraft's shortest election timeout, drawn after the leader's lease ran out.
    pub election_timeout_min: Duration,
    /// openraft's longest election timeout; also the leader's lease a follower waits out.
    pub election_timeout_max: Duration,
    /// The deadline for sending a whole snapshot to a peer.
    pub install_snapshot_timeout: Duration,
    /// How long a write or a read index may take, retries and waiting for apply included.
    pub request_timeout: Duration,
}

impl RaftTimings {
    /// Timings where a follower that hears no leader for `election_timeout` (at least two
    /// heartbeat intervals and 5 ms, or openraft refuses them) stands for election before
    /// 1.2 times that: a lease of 3/5 of it, then a random 2/5 to 3/5 of it.
    pub fn new(heartbeat_interval: Duration, election_timeout: Duration) -> Self {
        Self {
            heartbeat_interval,
            election_timeout_min: election_timeout * 2 / 5,
            election_timeout_max: election_timeout * 3 / 5,
            ..Self::default()
        }
    }

    /// The least silence from the leader after which a follower stands for election (the
    /// lease, then the shortest election timeout); past it a member that did not answer the
    /// leader is probably down.
    pub fn election_timeout(&self) -> Duration {
        self.election_timeout_min + self.election_timeout_max
    }
}

impl Default for RaftTimings {
    fn default() -> Self {
        Self {
            heartbeat_interval: Duration::from_millis(100),
            election_timeout_min: Duration::from_millis(400),
            election_timeout_max: Duration::from_millis(600),
            install_snapshot_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(5),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_follower_stands_between_one_and_1_2_election_timeouts() {
        let t = RaftTimings::new(Duration::from_millis(200), Duration::from_millis(1000));
        assert_eq!(t.heartbeat_interval, Duration::from_millis(200));
        // openraft: lease (max) plus an election timeout drawn from [min, max).
        assert_eq!(
            t.election_timeout_min + t.election_timeout_max,
            t.election_timeout()
        );
        assert_eq!(t.election_timeout(), Duration::from_millis(1000));
        assert_eq!(t.election_timeout_max * 2, Duration::from_millis(1200));
        assert!(t.election_timeout_min > t.heartbeat_interval);
    }

    #[test]
    fn the_default_is_the_mapping_of_a_one_second_election_timeout() {
        assert_eq!(
            RaftTimings::default(),
            RaftTimings::new(Duration::from_millis(100), Duration::from_secs(1))
        );
    }
}

//! A point-in-time view of a replica, for health endpoints, metrics and tests.

use std::collections::BTreeSet;

use super::Member;
use crate::mvcc::Revision;
use crate::typ::NodeId;

/// What a replica knows about itself and the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaStatus {
    /// This replica's id.
    pub id: NodeId,
    /// Whether raft runs here (not shut down, no fatal error).
    pub running: bool,
    /// The current leader, as far as this replica knows.
    pub leader: Option<NodeId>,
    /// The current raft term.
    pub term: u64,
    /// The newest revision applied to the local store.
    pub applied: Revision,
    /// The newest log index this replica knows to be committed (0 before any).
    pub committed: Revision,
    /// The voters of the effective membership.
    pub voters: BTreeSet<NodeId>,
    /// Whether this replica is the leader.
    pub is_leader: bool,
    /// The last log index covered by this replica's newest snapshot.
    pub snapshot: Option<Revision>,
    /// The last log index removed from this replica's log (covered by a durable snapshot).
    pub purged: Option<Revision>,
    /// The newest log index this replica holds (appended, not necessarily committed).
    pub last_log_index: Option<u64>,
    /// The oldest log index this replica still holds; with `last_log_index`, the log's size
    /// in entries. None while the log is empty.
    pub first_log_index: Option<u64>,
    /// The effective membership, ids, peer URLs and roles (with the replication view when
    /// this replica leads).
    pub members: Vec<Member>,
}

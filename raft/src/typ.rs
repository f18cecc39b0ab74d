//! The raft type configuration: every openraft generic is fixed here once, and the rest of the
//! crate uses the concrete aliases below instead of carrying `C: RaftTypeConfig` around.

use openraft::type_config::alias;

use crate::command::Command;
use crate::command::CommandResponse;

/// A replica's raft identity. Assigned by position in `--initial-cluster` (1-based).
pub type NodeId = u64;

openraft::declare_raft_types!(
    /// Apiary's raft types: commands are [`Command`]s, answered by [`CommandResponse`]s, and a
    /// node is addressed by its peer URL ([`Node::addr`]); the runtime is tokio with
    /// a seedable random source ([`crate::runtime`]).
    pub TypeConfig:
        D = Command,
        R = CommandResponse,
        NodeId = NodeId,
        Node = Node,
        AsyncRuntime = crate::runtime::ApiaryRuntime,
);

/// A log entry.
pub type Entry = alias::EntryOf<TypeConfig>;
/// A log id (term, leader and index).
pub type LogId = alias::LogIdOf<TypeConfig>;
/// A vote.
pub type Vote = alias::VoteOf<TypeConfig>;
/// A stored membership (membership plus the log id that introduced it).
pub type StoredMembership = alias::StoredMembershipOf<TypeConfig>;
/// Snapshot metadata.
pub type SnapshotMeta = alias::SnapshotMetaOf<TypeConfig>;

/// A member's record in the replicated membership.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    /// The member's peer URL.
    pub addr: String,
    /// A learner the leader promotes to voter on its own once it has caught up. Kept in the
    /// membership itself, so every future leader honours it.
    pub auto_promote: bool,
}

impl Node {
    /// A member at peer URL `addr`, promoted only when asked.
    pub fn new(addr: impl ToString) -> Self {
        Self {
            addr: addr.to_string(),
            auto_promote: false,
        }
    }
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.addr)
    }
}

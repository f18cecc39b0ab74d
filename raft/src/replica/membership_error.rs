//! Why removing a member failed, with retryable, forward-to-leader, refused and fatal cases
//! kept apart (DESIGN.md §7), so the caller knows whether to try again.

use super::LeaderError;
use super::Refusal;
use crate::typ::NodeId;

/// A membership removal failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoveMemberError {
    /// No leader could take the change before the deadline (election in progress, quorum lost,
    /// another membership change in progress). Retry.
    #[error("no leader can change the membership now: {reason}")]
    Unavailable {
        /// Why.
        reason: String,
    },
    /// The leader kept moving while the removal was retried. Retry, possibly at the last known
    /// leader.
    #[error("not the leader; last known leader {leader_id:?} at {leader_url:?}")]
    ForwardToLeader {
        /// The last known leader.
        leader_id: Option<NodeId>,
        /// Its peer URL.
        leader_url: Option<String>,
    },
    /// The change may or may not have been committed (the leader changed, or the answer was
    /// lost). Removal is idempotent, so retrying is safe.
    #[error("the removal's outcome is unknown: {reason}")]
    OutcomeUnknown {
        /// Why.
        reason: String,
    },
    /// Refused: the node is the only voter, and a cluster without voters cannot elect a leader
    /// or commit anything ever again.
    #[error("refusing to remove node {node_id}, the last voter")]
    LastVoter {
        /// The node asked to be removed.
        node_id: NodeId,
    },
    /// Refused as the cluster stands (removing the node would lose the quorum).
    #[error("refused: {0}")]
    Refused(Refusal),
    /// The replica cannot change the membership (stopped, storage failure, invalid request).
    #[error("replica failed: {reason}")]
    Fatal {
        /// Why.
        reason: String,
    },
}

impl RemoveMemberError {
    /// Whether trying the same removal again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::Unavailable { .. } | Self::ForwardToLeader { .. } | Self::OutcomeUnknown { .. }
        )
    }
}

impl From<LeaderError> for RemoveMemberError {
    fn from(e: LeaderError) -> Self {
        match e {
            LeaderError::NotLeader {
                leader_id,
                leader_url,
            } => Self::ForwardToLeader {
                leader_id,
                leader_url,
            },
            LeaderError::Unavailable(reason) => Self::Unavailable { reason },
            LeaderError::OutcomeUnknown(reason) => Self::OutcomeUnknown { reason },
            LeaderError::Fatal(reason) => Self::Fatal { reason },
        }
    }
}

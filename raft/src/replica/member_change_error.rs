//! Why a membership operation (listing the members, adding a learner, promoting it, handing
//! leadership over, removing a member) failed, with retryable, refused and fatal cases kept
//! apart (DESIGN.md §7), and the refusals a leader gives instead of weakening the cluster.

use openraft::errors::ClientWriteError;
use openraft::errors::RaftError;

use super::LeaderError;
use super::RemoveMemberError;
use super::leader_call::LeaderCallError;
use crate::typ::NodeId;
use crate::typ::TypeConfig;

/// Why a leader refuses a membership operation. Trying the same operation again fails the
/// same way until the cluster changes (a learner catches up, a stopped voter comes back).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Without `node_id`, fewer voters answer heartbeats than a quorum of the voters left, so
    /// the cluster could not commit the change, or anything after it.
    #[error(
        "removing node {node_id} would leave {answering} answering voter(s), fewer than the \
         quorum of {quorum} the remaining voters need; start the stopped voters first"
    )]
    WouldLoseQuorum {
        /// The member asked to be removed.
        node_id: NodeId,
        /// How many of the remaining voters answer heartbeats.
        answering: u64,
        /// How many of them a quorum needs.
        quorum: u64,
    },
    /// The learner has not caught up with the leader's log (or does not answer), so as a voter
    /// it could not help commit; `lag` is how many entries it is behind, when known.
    #[error(
        "node {node_id} has not caught up with the leader (behind by {}); retry later",
        entries_behind(.lag)
    )]
    NotCaughtUp {
        /// The learner.
        node_id: NodeId,
        /// The leader's last log index minus what the learner acknowledged, when known.
        lag: Option<u64>,
    },
    /// The node is not a member.
    #[error("node {node_id} is not a member")]
    UnknownMember {
        /// The node named.
        node_id: NodeId,
    },
    /// Leadership can go only to a voter that answers heartbeats.
    #[error("node {node_id} is not a voter that answers; leadership cannot go to it")]
    CannotLead {
        /// The node named.
        node_id: NodeId,
    },
    /// The id is already a voter, or a member at another peer URL.
    #[error("node {node_id} is already a member at {url}")]
    IdInUse {
        /// The id asked for.
        node_id: NodeId,
        /// The member's peer URL.
        url: String,
    },
    /// Another member already has this peer URL.
    #[error("peer URL {url} is already used by node {node_id}")]
    UrlInUse {
        /// The member using it.
        node_id: NodeId,
        /// The URL asked for.
        url: String,
    },
    /// The node is the only voter: without voters the cluster can never elect or commit again.
    #[error("refusing to remove node {node_id}, the last voter")]
    LastVoter {
        /// The node asked to be removed.
        node_id: NodeId,
    },
}

/// A lag for people: a count of entries, or why there is none.
fn entries_behind(lag: &Option<u64>) -> String {
    match lag {
        Some(lag) => format!("{lag} entries"),
        None => "an unknown number of entries: it has not answered".to_string(),
    }
}

/// A membership operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemberChangeError {
    /// The replica asked does not lead and the leader it named could not be reached in time.
    /// Retry, possibly at the named leader.
    #[error("not the leader; last known leader {leader_id:?} at {leader_url:?}")]
    NotLeader {
        /// The last known leader.
        leader_id: Option<NodeId>,
        /// Its peer URL.
        leader_url: Option<String>,
    },
    /// No leader could take the operation before the deadline (election in progress, quorum
    /// lost, another membership change in progress). Retry.
    #[error("no leader can change the membership now: {reason}")]
    Unavailable {
        /// Why.
        reason: String,
    },
    /// Refused for good as the cluster stands; do not retry unchanged.
    #[error("refused: {0}")]
    Refused(Refusal),
    /// The change was proposed but its outcome is unknown (the deadline passed, the leader
    /// changed, the answer was lost). Every membership operation is idempotent, so retrying
    /// is safe.
    #[error("the membership change's outcome is unknown: {reason}")]
    OutcomeUnknown {
        /// Why.
        reason: String,
    },
    /// The replica cannot change the membership (stopped, storage failure, invalid answer).
    #[error("replica failed: {reason}")]
    Fatal {
        /// Why.
        reason: String,
    },
}

impl MemberChangeError {
    /// Whether trying the same operation again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::NotLeader { .. } | Self::Unavailable { .. } | Self::OutcomeUnknown { .. }
        )
    }

    /// A failed membership proposal: a concurrent change that made the observed membership
    /// stale is transient, like a change still in progress.
    pub(crate) fn from_write(e: RaftError<TypeConfig, ClientWriteError<TypeConfig>>) -> Self {
        match e {
            RaftError::APIError(ClientWriteError::PreconditionFailed(p)) => Self::Unavailable {
                reason: format!("the membership changed meanwhile ({p})"),
            },
            other => LeaderError::from_write(other).into(),
        }
    }
}

impl From<LeaderError> for MemberChangeError {
    fn from(e: LeaderError) -> Self {
        match e {
            LeaderError::NotLeader {
                leader_id,
                leader_url,
            } => Self::NotLeader {
                leader_id,
                leader_url,
            },
            LeaderError::Unavailable(reason) => Self::Unavailable { reason },
            LeaderError::OutcomeUnknown(reason) => Self::OutcomeUnknown { reason },
            LeaderError::Fatal(reason) => Self::Fatal { reason },
        }
    }
}

impl From<RemoveMemberError> for MemberChangeError {
    fn from(e: RemoveMemberError) -> Self {
        match e {
            RemoveMemberError::ForwardToLeader {
                leader_id,
                leader_url,
            } => Self::NotLeader {
                leader_id,
                leader_url,
            },
            RemoveMemberError::Unavailable { reason } => Self::Unavailable { reason },
            RemoveMemberError::OutcomeUnknown { reason } => Self::OutcomeUnknown { reason },
            RemoveMemberError::LastVoter { node_id } => {
                Self::Refused(Refusal::LastVoter { node_id })
            }
            RemoveMemberError::Refused(refusal) => Self::Refused(refusal),
            RemoveMemberError::Fatal { reason } => Self::Fatal { reason },
        }
    }
}

impl LeaderCallError for MemberChangeError {
    fn leader_hint(&self) -> Option<(NodeId, String)> {
        match self {
            Self::NotLeader {
                leader_id: Some(id),
                leader_url: Some(url),
            } => Some((*id, url.clone())),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A caller retries only what may still succeed: a refusal stands until the cluster changes.
    #[test]
    fn refusals_and_fatal_failures_are_final() {
        let refused = MemberChangeError::Refused(Refusal::NotCaughtUp {
            node_id: 4,
            lag: Some(5_000),
        });
        let fatal = MemberChangeError::Fatal {
            reason: "stopped".to_string(),
        };
        let unknown = MemberChangeError::OutcomeUnknown {
            reason: "deadline".to_string(),
        };
        assert!(!refused.is_retryable());
        assert!(!fatal.is_retryable());
        assert!(
            unknown.is_retryable(),
            "membership operations are idempotent"
        );
        assert!(
            refused.to_string().contains("behind by 5000 entries"),
            "{refused}"
        );
    }

    // A removal's refusal keeps its reason when seen as a membership operation's failure.
    #[test]
    fn removal_failures_keep_their_kind() {
        let quorum = Refusal::WouldLoseQuorum {
            node_id: 2,
            answering: 1,
            quorum: 2,
        };
        assert_eq!(
            MemberChangeError::Refused(quorum.clone()),
            MemberChangeError::from(RemoveMemberError::Refused(quorum))
        );
        assert_eq!(
            MemberChangeError::Refused(Refusal::LastVoter { node_id: 1 }),
            MemberChangeError::from(RemoveMemberError::LastVoter { node_id: 1 })
        );
    }
}

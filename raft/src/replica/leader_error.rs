//! Why an operation that must run on the leader (propose, read index, join) failed there, in
//! one form shared by the local path and the peer RPCs that carry it.

use openraft::errors::ClientWriteError;
use openraft::errors::ForwardToLeader;
use openraft::errors::LinearizableReadError;
use openraft::errors::RaftError;

use crate::network::replica_message::Failure;
use crate::network::replica_message::FailureKind;
use crate::network::replica_message::NotLeader;
use crate::typ::NodeId;
use crate::typ::TypeConfig;

/// A leader-side failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LeaderError {
    /// The replica asked is not the leader; it names the leader when it knows it.
    NotLeader {
        leader_id: Option<NodeId>,
        leader_url: Option<String>,
    },
    /// Temporarily impossible; nothing was done.
    Unavailable(String),
    /// A write may or may not have been committed.
    OutcomeUnknown(String),
    /// Can never succeed.
    Fatal(String),
}

impl LeaderError {
    pub(crate) fn from_forward(f: &ForwardToLeader<TypeConfig>) -> Self {
        Self::NotLeader {
            leader_id: f.leader_id,
            leader_url: f.leader_node.as_ref().map(|n| n.addr.clone()),
        }
    }

    pub(crate) fn from_write(e: RaftError<TypeConfig, ClientWriteError<TypeConfig>>) -> Self {
        match e {
            RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => Self::from_forward(&f),
            RaftError::APIError(ClientWriteError::LogEntryDiscarded(f)) => {
                Self::OutcomeUnknown(format!("log entry discarded on leader change ({f})"))
            }
            RaftError::APIError(ClientWriteError::ChangeMembershipError(e)) => {
                Self::Unavailable(e.to_string())
            }
            RaftError::APIError(other) => Self::Fatal(other.to_string()),
            RaftError::Fatal(f) => Self::Fatal(f.to_string()),
        }
    }

    pub(crate) fn from_read(e: RaftError<TypeConfig, LinearizableReadError<TypeConfig>>) -> Self {
        match e {
            RaftError::APIError(LinearizableReadError::ForwardToLeader(f)) => {
                Self::from_forward(&f)
            }
            RaftError::APIError(LinearizableReadError::QuorumNotEnough(q)) => {
                Self::Unavailable(q.to_string())
            }
            RaftError::Fatal(f) => Self::Fatal(f.to_string()),
        }
    }

    pub(crate) fn not_leader(&self) -> Option<NotLeader> {
        match self {
            Self::NotLeader {
                leader_id,
                leader_url,
            } => Some(NotLeader {
                leader_id: *leader_id,
                leader_url: leader_url.clone(),
            }),
            _ => None,
        }
    }

    pub(crate) fn failure(&self) -> Failure {
        match self {
            Self::NotLeader { .. } => Failure::new(FailureKind::Unavailable, "not the leader"),
            Self::Unavailable(m) => Failure::new(FailureKind::Unavailable, m),
            Self::OutcomeUnknown(m) => Failure::new(FailureKind::OutcomeUnknown, m),
            Self::Fatal(m) => Failure::new(FailureKind::Fatal, m),
        }
    }
}

impl From<NotLeader> for LeaderError {
    fn from(n: NotLeader) -> Self {
        Self::NotLeader {
            leader_id: n.leader_id,
            leader_url: n.leader_url,
        }
    }
}

impl From<Failure> for LeaderError {
    fn from(f: Failure) -> Self {
        match f.kind() {
            FailureKind::Unavailable => Self::Unavailable(f.message),
            FailureKind::OutcomeUnknown => Self::OutcomeUnknown(f.message),
            FailureKind::Unspecified | FailureKind::Fatal => Self::Fatal(f.message),
        }
    }
}

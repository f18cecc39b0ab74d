//! Typed errors of the replica handle. Retryable failures (nothing happened, try again),
//! forward-to-leader and outcome-unknown cases and fatal failures are kept apart so the API
//! layer can answer each precisely (503 with Retry-After, 504, 500).

use std::path::PathBuf;

use crate::mvcc::Revision;
use crate::typ::NodeId;

/// The replica could not start or stop.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    /// The configuration is unusable.
    #[error("invalid replica configuration: {0}")]
    InvalidConfig(String),
    /// openraft rejected the derived raft configuration.
    #[error("invalid raft configuration")]
    RaftConfig(#[source] openraft::ConfigError),
    /// The raft log could not be opened.
    #[error("cannot open the raft log in {path}")]
    OpenLog {
        /// The log directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The snapshot directory could not be opened.
    #[error("cannot open the snapshot directory {path}")]
    OpenSnapshots {
        /// The snapshot directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Raft stopped or failed (storage error, panic).
    #[error("raft failed")]
    Raft(#[source] openraft::errors::Fatal<crate::typ::TypeConfig>),
    /// Founding the cluster failed.
    #[error("cannot initialize the cluster: {0}")]
    Initialize(String),
    /// The raft task did not stop cleanly.
    #[error("raft did not shut down cleanly: {0}")]
    Shutdown(String),
}

/// A write failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// No leader could take the write before the deadline (election in progress, quorum
    /// lost, leader unreachable). Nothing was proposed: retry.
    #[error("no leader is available: {reason}")]
    Unavailable {
        /// Why.
        reason: String,
    },
    /// The leader kept moving while the write was retried. Nothing was proposed: retry,
    /// possibly at the last known leader.
    #[error("not the leader; last known leader {leader_id:?} at {leader_url:?}")]
    ForwardToLeader {
        /// The last known leader.
        leader_id: Option<NodeId>,
        /// Its peer URL.
        leader_url: Option<String>,
    },
    /// The write may or may not have been committed (the leader changed or the answer was
    /// lost after it was sent): the caller must check before retrying.
    #[error("the write's outcome is unknown: {reason}")]
    OutcomeUnknown {
        /// Why.
        reason: String,
    },
    /// The write was committed at `revision` but this replica did not apply it before the
    /// deadline (it is lagging); the write itself succeeded.
    #[error("write committed at revision {revision} but not yet applied on this replica")]
    NotApplied {
        /// The revision of the write.
        revision: Revision,
    },
    /// The replica cannot serve writes (stopped, storage failure, incompatible peer).
    #[error("replica failed: {reason}")]
    Fatal {
        /// Why.
        reason: String,
    },
}

impl WriteError {
    /// Whether retrying the same write is safe and may succeed (nothing was proposed).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::Unavailable { .. } | Self::ForwardToLeader { .. }
        )
    }
}

/// A linearizable read could not be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// No leader confirmed its leadership with a quorum before the deadline (R-HA-005: the
    /// replica fails rather than answer with possibly stale data). Retry.
    #[error("cannot confirm a quorum: {reason}")]
    Unavailable {
        /// Why.
        reason: String,
    },
    /// This replica did not apply `revision` before the deadline (it is lagging).
    #[error("revision {revision} not applied within the deadline (applied {applied})")]
    NotApplied {
        /// The revision waited for.
        revision: Revision,
        /// The newest revision applied when the deadline passed.
        applied: Revision,
    },
    /// The replica cannot serve reads (stopped, incompatible peer).
    #[error("replica failed: {reason}")]
    Fatal {
        /// Why.
        reason: String,
    },
}

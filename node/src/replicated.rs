//! The seam between the storage backend and the replica: the few operations
//! [`crate::backend::ReplicaStorage`] needs, with the replica's many error types folded into
//! retryable versus fatal. Implemented by the raft [`Replica`]; tests implement it over a bare
//! [`mvcc::Store`] to check the backend's transactions and error mapping without a cluster.

use std::sync::Arc;
use std::time::Duration;

use apiary_raft::command::CommandResponse;
use apiary_raft::command::Txn;
use apiary_raft::mvcc;
use apiary_raft::mvcc::Revision;
use apiary_raft::replica::ReadError;
use apiary_raft::replica::Replica;
use apiary_raft::replica::WriteError;
use apiary_raft::state_machine::WatchStream;

/// Why a replica could not serve an operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplicaFailure {
    /// Retrying may succeed: no leader yet, the leader unreachable, a deadline passed, the
    /// replica shutting down.
    #[error("replica unavailable: {reason}")]
    Unavailable {
        /// What was unavailable.
        reason: String,
    },
    /// Retrying will not help (storage failure, a broken invariant).
    #[error("replica failed: {reason}")]
    Fatal {
        /// What failed.
        reason: String,
    },
}

/// A replica of the revisioned store, as the storage backend uses it.
///
/// ### Correctness requirements
/// - [`ReplicatedStore::write`] returns only after the command is committed and applied on
///   this replica, with the revision (raft log index) that carried it.
/// - [`ReplicatedStore::read_index`] returns a revision at least as new as every write
///   acknowledged anywhere before the call, and returns only once this replica has applied it
///   (so [`ReplicatedStore::read`] after it is linearizable).
/// - [`ReplicatedStore::read`] sees only applied state, never partially applied entries.
#[async_trait::async_trait]
pub trait ReplicatedStore: Send + Sync + 'static {
    /// Proposes `txn` (through the leader) and waits until this replica has applied it.
    async fn write(&self, txn: Txn) -> Result<CommandResponse, ReplicaFailure>;

    /// A linearizable read point, applied locally before it is returned.
    async fn read_index(&self) -> Result<Revision, ReplicaFailure>;

    /// Waits until this replica has applied `revision`: `Ok(true)` once it has, `Ok(false)` if
    /// `timeout` passed first.
    async fn wait_applied(
        &self,
        revision: Revision,
        timeout: Duration,
    ) -> Result<bool, ReplicaFailure>;

    /// Runs `f` on the locally applied store.
    fn read<T>(&self, f: impl FnOnce(&mvcc::Store) -> T) -> T;

    /// Watches the local apply stream for changes under `prefix` after `after`.
    fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, mvcc::MvccError>;
}

#[async_trait::async_trait]
impl ReplicatedStore for Arc<Replica> {
    async fn write(&self, txn: Txn) -> Result<CommandResponse, ReplicaFailure> {
        Replica::write(self, txn)
            .await
            .map_err(|error| match error {
                WriteError::Fatal { reason } => ReplicaFailure::Fatal { reason },
                // Nothing proposed (no leader, leader moving), or proposed with the outcome or the
                // local apply still pending: the client may retry after checking, which is what
                // a retryable "unavailable" (503/504) tells it.
                WriteError::Unavailable { .. }
                | WriteError::ForwardToLeader { .. }
                | WriteError::OutcomeUnknown { .. }
                | WriteError::NotApplied { .. } => ReplicaFailure::Unavailable {
                    reason: error.to_string(),
                },
            })
    }

    async fn read_index(&self) -> Result<Revision, ReplicaFailure> {
        Replica::read_index(self).await.map_err(read_failure)
    }

    async fn wait_applied(
        &self,
        revision: Revision,
        timeout: Duration,
    ) -> Result<bool, ReplicaFailure> {
        match Replica::wait_applied(self, revision, timeout).await {
            Ok(()) => Ok(true),
            Err(ReadError::NotApplied { .. }) => Ok(false),
            Err(error) => Err(read_failure(error)),
        }
    }

    fn read<T>(&self, f: impl FnOnce(&mvcc::Store) -> T) -> T {
        self.with_store(f)
    }

    fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, mvcc::MvccError> {
        Replica::watch(self, prefix, after)
    }
}

fn read_failure(error: ReadError) -> ReplicaFailure {
    match error {
        ReadError::Fatal { reason } => ReplicaFailure::Fatal { reason },
        ReadError::Unavailable { .. } | ReadError::NotApplied { .. } => {
            ReplicaFailure::Unavailable {
                reason: error.to_string(),
            }
        }
    }
}

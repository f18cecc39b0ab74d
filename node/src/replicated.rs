//! The seam between the storage backend and the replica: the few operations
//! [`crate::backend::ReplicaStorage`] needs, failing with the replica's own typed errors
//! ([`WriteError`], [`ReadError`]) so the backend can tell "nothing happened" from "the outcome
//! is unknown". Implemented by the raft [`Replica`]; tests implement it over a bare
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
    /// Proposes `txn` (through the leader) and waits until this replica has applied it. The
    /// error says whether the write certainly did not happen (`Unavailable`,
    /// `ForwardToLeader`), may have happened (`OutcomeUnknown`), did happen without being
    /// applied here in time (`NotApplied`), or cannot happen (`Fatal`).
    async fn write(&self, txn: Txn) -> Result<CommandResponse, WriteError>;

    /// A linearizable read point, applied locally before it is returned.
    async fn read_index(&self) -> Result<Revision, ReadError>;

    /// Waits until this replica has applied `revision`: `Ok(true)` once it has, `Ok(false)` if
    /// `timeout` passed first.
    async fn wait_applied(&self, revision: Revision, timeout: Duration) -> Result<bool, ReadError>;

    /// Runs `f` on the locally applied store.
    fn read<T>(&self, f: impl FnOnce(&mvcc::Store) -> T) -> T;

    /// Watches the local apply stream for changes under `prefix` after `after`.
    fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, mvcc::MvccError>;
}

#[async_trait::async_trait]
impl ReplicatedStore for Arc<Replica> {
    async fn write(&self, txn: Txn) -> Result<CommandResponse, WriteError> {
        Replica::write(self, txn).await
    }

    async fn read_index(&self) -> Result<Revision, ReadError> {
        Replica::read_index(self).await
    }

    async fn wait_applied(&self, revision: Revision, timeout: Duration) -> Result<bool, ReadError> {
        match Replica::wait_applied(self, revision, timeout).await {
            Ok(()) => Ok(true),
            Err(ReadError::NotApplied { .. }) => Ok(false),
            Err(error) => Err(error),
        }
    }

    fn read<T>(&self, f: impl FnOnce(&mvcc::Store) -> T) -> T {
        self.with_store(f)
    }

    fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, mvcc::MvccError> {
        Replica::watch(self, prefix, after)
    }
}

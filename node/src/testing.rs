//! A one-replica store for tests: [`LocalReplica`] applies every write at once to an in-memory
//! state machine, without raft, so the real storage adapter ([`crate::backend::ReplicaStorage`])
//! and everything above it can be tested fast and deterministically.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use apiary_raft::command::Command;
use apiary_raft::command::CommandResponse;
use apiary_raft::command::Txn;
use apiary_raft::mvcc;
use apiary_raft::mvcc::MvccError;
use apiary_raft::mvcc::Revision;
use apiary_raft::replica::ReadError;
use apiary_raft::replica::WriteError;
use apiary_raft::state_machine;
use apiary_raft::state_machine::SharedState;

use crate::replicated::ReplicatedStore;

/// A one-replica "cluster": writes apply at the next revision (gaps allowed, as raft log
/// indexes), failures can be injected.
pub struct LocalReplica {
    shared: Arc<SharedState>,
    fail_writes: Mutex<Option<WriteError>>,
    fail_reads: Mutex<Option<ReadError>>,
}

impl Default for LocalReplica {
    fn default() -> Self {
        Self {
            shared: SharedState::new(),
            fail_writes: Mutex::default(),
            fail_reads: Mutex::default(),
        }
    }
}

impl LocalReplica {
    /// Makes every later write fail with `failure` (`None`: write again).
    pub fn fail_writes(&self, failure: Option<WriteError>) {
        *lock(&self.fail_writes) = failure;
    }

    /// Makes every later linearizable read and wait fail with `failure` (`None`: serve
    /// again). Reads that need no round trip still answer, as on a real replica.
    pub fn fail_reads(&self, failure: Option<ReadError>) {
        *lock(&self.fail_reads) = failure;
    }

    /// The newest revision applied.
    pub fn revision(&self) -> Revision {
        self.shared.applied()
    }

    /// Drops the history before `revision` in the next entry, as the leader's compactor does.
    ///
    /// # Panics
    /// When the store refuses the compaction (`revision` newer than the store).
    pub fn compact(&self, revision: Revision) {
        let response = self
            .shared
            .apply(self.revision() + 1, Some(&Command::compact(revision)))
            .expect("revisions grow");
        assert_eq!(response.error, None, "compaction to {revision}");
    }

    fn injected_read(&self) -> Result<(), ReadError> {
        lock(&self.fail_reads).clone().map_or(Ok(()), Err)
    }
}

/// The injected failure, also after a panicking test poisoned its lock.
fn lock<T>(failure: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    failure.lock().unwrap_or_else(|e| e.into_inner())
}

#[async_trait::async_trait]
impl ReplicatedStore for Arc<LocalReplica> {
    async fn write(&self, txn: Txn) -> Result<CommandResponse, WriteError> {
        if let Some(error) = lock(&self.fail_writes).clone() {
            return Err(error);
        }
        // Skip one index per write, as membership or blank entries would.
        let revision = self.shared.applied() + 2;
        Ok(self
            .shared
            .apply(revision, Some(&Command::txn(txn)))
            .expect("revisions grow"))
    }

    async fn read_index(&self) -> Result<Revision, ReadError> {
        self.injected_read()?;
        Ok(self.shared.applied())
    }

    async fn wait_applied(&self, revision: Revision, timeout: Duration) -> Result<bool, ReadError> {
        self.injected_read()?;
        Ok(self.shared.wait_applied(revision, timeout).await)
    }

    fn read<T>(&self, f: impl FnOnce(&mvcc::Store) -> T) -> T {
        self.shared.with_store(f)
    }

    fn watch(
        &self,
        prefix: &str,
        after: Revision,
    ) -> Result<state_machine::WatchStream, MvccError> {
        state_machine::WatchStream::new(self.shared.clone(), prefix, after)
    }
}

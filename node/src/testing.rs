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
use apiary_raft::state_machine;
use apiary_raft::state_machine::SharedState;

use crate::replicated::ReplicaFailure;
use crate::replicated::ReplicatedStore;

/// A one-replica "cluster": writes apply at the next revision (gaps allowed, as raft log
/// indexes), failures can be injected.
pub struct LocalReplica {
    shared: Arc<SharedState>,
    fail_with: Mutex<Option<ReplicaFailure>>,
}

impl Default for LocalReplica {
    fn default() -> Self {
        Self {
            shared: SharedState::new(),
            fail_with: Mutex::default(),
        }
    }
}

impl LocalReplica {
    /// Makes every later write, linearizable read and wait fail with `failure` (`None`: serve
    /// again). Reads that need no round trip still answer, as on a real replica.
    pub fn fail_with(&self, failure: Option<ReplicaFailure>) {
        *self.lock_failure() = failure;
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

    fn lock_failure(&self) -> std::sync::MutexGuard<'_, Option<ReplicaFailure>> {
        self.fail_with.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn injected(&self) -> Result<(), ReplicaFailure> {
        match self.lock_failure().clone() {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }
}

#[async_trait::async_trait]
impl ReplicatedStore for Arc<LocalReplica> {
    async fn write(&self, txn: Txn) -> Result<CommandResponse, ReplicaFailure> {
        self.injected()?;
        // Skip one index per write, as membership or blank entries would.
        let revision = self.shared.applied() + 2;
        Ok(self
            .shared
            .apply(revision, Some(&Command::txn(txn)))
            .expect("revisions grow"))
    }

    async fn read_index(&self) -> Result<Revision, ReplicaFailure> {
        self.injected()?;
        Ok(self.shared.applied())
    }

    async fn wait_applied(
        &self,
        revision: Revision,
        timeout: Duration,
    ) -> Result<bool, ReplicaFailure> {
        self.injected()?;
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

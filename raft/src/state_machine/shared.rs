//! The part of the state machine that readers share with the apply loop: the MVCC store behind
//! a lock, the applied revision on a watch channel, the apply notices on a broadcast channel and
//! their dispatch to the replica's watches.

use std::sync::Arc;
use std::sync::RwLock;
use std::sync::RwLockReadGuard;
use std::sync::RwLockWriteGuard;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio::sync::watch;

use super::ApplyNotice;
use super::watch_hub::Registration;
use super::watch_hub::WatchHub;
use crate::command::Command;
use crate::command::CommandResponse;
use crate::command::command;
use crate::metrics::StoreMetrics;
use crate::mvcc::Revision;
use crate::mvcc::Store;

/// How many apply notices a slow subscriber may fall behind before it is told it lagged.
const NOTICE_CAPACITY: usize = 4096;

/// State shared between the raft state machine (the only writer) and any number of readers.
///
/// ### Lock order
/// `store` is never held across an `.await`, and the channels and the watches are published to
/// after it is released, so a reader that saw `applied >= R` on the watch channel
/// always finds the store at `R` or later.
#[derive(Debug)]
pub struct SharedState {
    store: RwLock<Store>,
    applied: watch::Sender<Revision>,
    notices: broadcast::Sender<Arc<ApplyNotice>>,
    watches: Arc<WatchHub>,
    metrics: StoreMetrics,
}

impl SharedState {
    /// An empty store at revision 0.
    pub fn new() -> Arc<Self> {
        let (applied, _) = watch::channel(0);
        let (notices, _) = broadcast::channel(NOTICE_CAPACITY);
        Arc::new(Self {
            store: RwLock::new(Store::new()),
            applied,
            notices,
            watches: Arc::default(),
            metrics: StoreMetrics::default(),
        })
    }

    /// What the store measures (crate::metrics).
    pub fn metrics(&self) -> &StoreMetrics {
        &self.metrics
    }

    /// Runs `f` on the store under the read lock. `f` must not block: apply waits for it.
    pub fn with_store<T>(&self, f: impl FnOnce(&Store) -> T) -> T {
        f(&self.read())
    }

    /// The newest revision the state machine has applied.
    pub fn applied(&self) -> Revision {
        *self.applied.borrow()
    }

    /// Subscribes to the applied revision.
    pub fn subscribe_applied(&self) -> watch::Receiver<Revision> {
        self.applied.subscribe()
    }

    /// Subscribes to apply notices, starting with the next applied entry. A subscriber that
    /// falls more than a few thousand notices behind receives `Lagged` and must resynchronise
    /// from the store: apply never waits for it.
    pub fn subscribe_notices(&self) -> broadcast::Receiver<Arc<ApplyNotice>> {
        self.notices.subscribe()
    }

    /// Files a watch on `prefix`: it is handed every notice published after this returns that
    /// concerns the prefix, and is told when it must catch up from history.
    pub(super) fn register_watch(&self, prefix: &str) -> Registration {
        self.watches.register(prefix)
    }

    /// How many watches are filed.
    #[cfg(test)]
    pub(super) fn watch_count(&self) -> usize {
        self.watches.len()
    }

    /// Waits until the applied revision reaches `revision`; `false` when `timeout` passed first.
    pub async fn wait_applied(&self, revision: Revision, timeout: Duration) -> bool {
        let mut rx = self.applied.subscribe();
        matches!(
            tokio::time::timeout(timeout, rx.wait_for(|applied| *applied >= revision)).await,
            Ok(Ok(_))
        )
    }

    pub(super) fn read(&self) -> RwLockReadGuard<'_, Store> {
        // The store's methods do not panic on any input (their only assertions guard raft's
        // ordering), so a poisoned lock still holds a consistent store.
        self.store.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn write(&self) -> RwLockWriteGuard<'_, Store> {
        self.store.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies `command` at `revision` (`None`: an entry that writes nothing, which only
    /// advances the store) and publishes the result to readers. The raft state machine calls
    /// this for every committed entry; a test backend may call it to be a one-replica store.
    ///
    /// Fails, changing nothing, with the store's revision when `revision` is older than it.
    pub fn apply(
        &self,
        revision: Revision,
        command: Option<&Command>,
    ) -> Result<CommandResponse, Revision> {
        let (response, notice) = {
            let mut store = self.write();
            if revision < store.revision() {
                return Err(store.revision());
            }
            apply_command(&mut store, revision, command)
        };
        self.publish(revision, notice);
        Ok(response)
    }

    /// Publishes a notice and the applied revision. Called after the store lock is released.
    pub(super) fn publish(&self, revision: Revision, notice: Option<ApplyNotice>) {
        if let Some(notice) = notice {
            let notice = Arc::new(notice);
            self.watches.dispatch(&notice);
            // An error only means nobody subscribes right now.
            let _ = self.notices.send(notice);
        }
        self.applied.send_if_modified(|applied| {
            let grew = revision > *applied;
            *applied = (*applied).max(revision);
            grew
        });
    }
}

/// Applies one command at `revision` to the store.
fn apply_command(
    store: &mut Store,
    revision: Revision,
    command: Option<&Command>,
) -> (CommandResponse, Option<ApplyNotice>) {
    match command.and_then(|c| c.kind.as_ref()) {
        Some(command::Kind::Txn(txn)) => {
            let (response, events) = store.apply_txn(revision, txn);
            (response, Some(ApplyNotice::Applied { revision, events }))
        }
        Some(command::Kind::Compact(compact)) => {
            store.advance(revision);
            match store.compact(compact.revision) {
                Ok(()) => (
                    consumed(revision, None),
                    Some(ApplyNotice::Compacted {
                        revision: store.compacted(),
                    }),
                ),
                Err(e) => (consumed(revision, Some(e.to_string())), None),
            }
        }
        None if command.is_some() => {
            store.advance(revision);
            (consumed(revision, Some("empty command".to_string())), None)
        }
        None => {
            store.advance(revision);
            (consumed(revision, None), None)
        }
    }
}

/// The answer for an entry that wrote nothing.
fn consumed(revision: Revision, error: Option<String>) -> CommandResponse {
    CommandResponse {
        revision,
        succeeded: error.is_none(),
        results: Vec::new(),
        error,
    }
}

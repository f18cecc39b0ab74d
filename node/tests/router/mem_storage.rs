//! An in-memory [`Storage`] over one replica's state machine without raft, for router tests:
//! every write is one transaction at the next revision, applied and announced to watches as
//! the replicated store would.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use apiary_raft::command::Command;
use apiary_raft::command::Compare;
use apiary_raft::command::KeyValue;
use apiary_raft::command::Op;
use apiary_raft::command::Txn;
use apiary_raft::mvcc;
use apiary_raft::state_machine::SharedState;
use apiary_raft::state_machine::WatchStream as MvccWatch;
use bytes::Bytes;

use crate::storage::Change;
use crate::storage::ChangeBatch;
use crate::storage::ChangeKind;
use crate::storage::ListPage;
use crate::storage::ReadConsistency;
use crate::storage::Revision;
use crate::storage::Storage;
use crate::storage::StorageError;
use crate::storage::StoredObject;
use crate::storage::WatchStream;

/// The in-memory store; `unavailable` makes every call fail as a store without quorum would.
pub(crate) struct MemStorage {
    shared: Arc<SharedState>,
    pub(crate) unavailable: AtomicBool,
}

impl Default for MemStorage {
    fn default() -> Self {
        Self {
            shared: SharedState::new(),
            unavailable: AtomicBool::new(false),
        }
    }
}

fn stored(kv: KeyValue) -> StoredObject {
    StoredObject {
        key: kv.key,
        value: kv.value,
        mod_revision: kv.mod_revision,
        create_revision: kv.create_revision,
    }
}

fn mvcc_error(e: mvcc::MvccError) -> StorageError {
    match e {
        mvcc::MvccError::Compacted {
            requested,
            compacted,
        } => StorageError::Compacted {
            requested,
            compacted,
        },
        mvcc::MvccError::FutureRevision { requested, current } => {
            StorageError::TooLargeRevision { requested, current }
        }
    }
}

impl MemStorage {
    fn check(&self) -> Result<(), StorageError> {
        if self.unavailable.load(Ordering::SeqCst) {
            return Err(StorageError::Unavailable {
                reason: "no leader".into(),
            });
        }
        Ok(())
    }

    fn apply(&self, txn: Txn) -> (apiary_raft::command::CommandResponse, Revision) {
        let revision = self.revision() + 1;
        let resp = self
            .shared
            .apply(revision, Some(&Command::txn(txn)))
            .expect("revisions grow");
        (resp, revision)
    }

    /// Every key currently stored.
    pub(crate) fn keys(&self) -> Vec<String> {
        let all = self
            .shared
            .with_store(|s| s.range("", None, None, 0))
            .expect("range");
        all.kvs.into_iter().map(|kv| kv.key).collect()
    }

    /// The newest revision.
    pub(crate) fn revision(&self) -> Revision {
        self.shared.applied()
    }

    /// Drops the history before `revision`, as the leader's compaction would.
    pub(crate) fn compact(&self, revision: Revision) {
        let resp = self
            .shared
            .apply(self.revision() + 1, Some(&Command::compact(revision)))
            .expect("revisions grow");
        assert_eq!(resp.error, None, "compaction to {revision}");
    }

    fn read_at(&self, consistency: ReadConsistency) -> Result<Option<Revision>, StorageError> {
        let current = self.revision();
        match consistency {
            ReadConsistency::Linearizable | ReadConsistency::Any => Ok(None),
            ReadConsistency::NotOlderThan(r) if r > current => {
                Err(StorageError::TooLargeRevision {
                    requested: r,
                    current,
                })
            }
            ReadConsistency::NotOlderThan(_) => Ok(None),
            ReadConsistency::Exact(r) => Ok(Some(r)),
        }
    }
}

#[async_trait::async_trait]
impl Storage for MemStorage {
    async fn create(&self, key: &str, value: Bytes) -> Result<StoredObject, StorageError> {
        self.check()?;
        let txn = Txn {
            compares: vec![Compare::exists(key, false)],
            success: vec![Op::put(key, value.clone())],
            failure: vec![],
        };
        let (resp, revision) = self.apply(txn);
        if !resp.succeeded {
            return Err(StorageError::AlreadyExists { key: key.into() });
        }
        Ok(StoredObject {
            key: key.into(),
            value,
            mod_revision: revision,
            create_revision: revision,
        })
    }

    async fn get(
        &self,
        key: &str,
        consistency: ReadConsistency,
    ) -> Result<Option<StoredObject>, StorageError> {
        self.check()?;
        let at = self.read_at(consistency)?;
        let found = self.shared.with_store(|s| s.get(key, at));
        Ok(found.map_err(mvcc_error)?.map(stored))
    }

    async fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
        consistency: ReadConsistency,
    ) -> Result<ListPage, StorageError> {
        self.check()?;
        let at = self.read_at(consistency)?;
        let start = start_after.map_or(prefix.to_owned(), |s| format!("{s}\0"));
        let end = mvcc::prefix_end(prefix);
        let r = self
            .shared
            .with_store(|s| s.range(&start, end.as_deref(), at, limit))
            .map_err(mvcc_error)?;
        Ok(ListPage {
            items: r.kvs.into_iter().map(stored).collect(),
            revision: r.revision,
            remaining: r.remaining,
        })
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> Result<StoredObject, StorageError> {
        self.check()?;
        let txn = Txn {
            compares: vec![Compare::mod_revision(key, expected)],
            success: vec![Op::put(key, value.clone())],
            failure: vec![Op::get(key)],
        };
        let (resp, revision) = self.apply(txn);
        if !resp.succeeded {
            let current = resp.results.into_iter().next().and_then(|r| r.kv);
            return Err(match current {
                None => StorageError::NotFound { key: key.into() },
                Some(kv) => StorageError::Conflict {
                    key: key.into(),
                    expected,
                    actual: kv.mod_revision,
                },
            });
        }
        let prev = resp.results.into_iter().next().and_then(|r| r.kv);
        Ok(StoredObject {
            key: key.into(),
            value,
            mod_revision: revision,
            create_revision: prev.map_or(revision, |p| p.create_revision),
        })
    }

    async fn watch(
        &self,
        prefix: &str,
        after: Revision,
    ) -> Result<Box<dyn WatchStream>, StorageError> {
        self.check()?;
        let stream = MvccWatch::new(self.shared.clone(), prefix, after).map_err(mvcc_error)?;
        Ok(Box::new(MemWatch(stream)))
    }

    async fn delete(
        &self,
        key: &str,
        expected: Option<Revision>,
    ) -> Result<StoredObject, StorageError> {
        self.check()?;
        let compare = match expected {
            Some(r) => Compare::mod_revision(key, r),
            None => Compare::exists(key, true),
        };
        let txn = Txn {
            compares: vec![compare],
            success: vec![Op::delete(key)],
            failure: vec![Op::get(key)],
        };
        let (resp, revision) = self.apply(txn);
        let kv = resp.results.into_iter().next().and_then(|r| r.kv);
        match (resp.succeeded, kv) {
            (true, Some(prev)) => Ok(StoredObject {
                key: key.into(),
                value: prev.value,
                mod_revision: revision,
                create_revision: prev.create_revision,
            }),
            (_, None) => Err(StorageError::NotFound { key: key.into() }),
            (false, Some(kv)) => Err(StorageError::Conflict {
                key: key.into(),
                expected: expected.unwrap_or_default(),
                actual: kv.mod_revision,
            }),
        }
    }
}

/// The state machine's watch, its events as the API layer's changes.
struct MemWatch(MvccWatch);

#[async_trait::async_trait]
impl WatchStream for MemWatch {
    async fn next(&mut self) -> Result<Option<ChangeBatch>, StorageError> {
        let Some(batch) = self.0.next().await.map_err(mvcc_error)? else {
            return Ok(None);
        };
        let changes = batch
            .events
            .into_iter()
            .map(|e| {
                let previous = e.prev_kv.map(stored);
                let (kind, object) = match e.kind {
                    mvcc::EventKind::Put => (ChangeKind::Put, stored(e.kv)),
                    mvcc::EventKind::Delete => {
                        let last = previous.clone().unwrap_or_else(|| stored(e.kv.clone()));
                        let object = StoredObject {
                            mod_revision: e.kv.mod_revision,
                            ..last
                        };
                        (ChangeKind::Delete, object)
                    }
                };
                Change {
                    kind,
                    object,
                    previous,
                }
            })
            .collect();
        Ok(Some(ChangeBatch {
            revision: batch.revision,
            changes,
        }))
    }

    fn progress(&self) -> Revision {
        self.0.progress()
    }
}

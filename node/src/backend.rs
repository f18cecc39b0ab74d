//! The API server's [`Storage`] over a replica of the revisioned store (DESIGN.md §3).
//!
//! Writes are compare-and-swap transactions proposed through raft: the compares express the
//! caller's precondition and the failure branch reads the key, so a failed write says why
//! (absent: `NotFound`; present: `AlreadyExists` or `Conflict` with the current revision)
//! without a second round trip. Reads are served from the local MVCC store once the requested
//! consistency holds (table "Read consistency" in DESIGN.md §3).

use std::time::Duration;

use apiary_api::storage::Change;
use apiary_api::storage::ChangeBatch;
use apiary_api::storage::ChangeKind;
use apiary_api::storage::Guard;
use apiary_api::storage::ListChunk;
use apiary_api::storage::ListPage;
use apiary_api::storage::ReadConsistency;
use apiary_api::storage::Revision;
use apiary_api::storage::Storage;
use apiary_api::storage::StorageError;
use apiary_api::storage::StoredObject;
use apiary_api::storage::WatchStream;
use apiary_raft::command::CommandResponse;
use apiary_raft::command::Compare;
use apiary_raft::command::KeyValue;
use apiary_raft::command::Op;
use apiary_raft::command::Txn;
use apiary_raft::mvcc;
use apiary_raft::mvcc::EventKind;
use apiary_raft::mvcc::MvccError;
use apiary_raft::replica::ReadError;
use apiary_raft::replica::WriteError;
use apiary_raft::state_machine;
use bytes::Bytes;

use crate::replicated::ReplicatedStore;

/// How long a `NotOlderThan`/`Exact` read waits for this replica to apply the revision before
/// answering `TooLargeRevision` (the Kubernetes API server waits about as long for its cache).
pub const DEFAULT_WAIT_BOUND: Duration = Duration::from_secs(3);

/// [`Storage`] over a replica.
#[derive(Debug)]
pub struct ReplicaStorage<R> {
    replica: R,
    wait_bound: Duration,
}

impl<R: ReplicatedStore> ReplicaStorage<R> {
    /// Storage over `replica`, waiting at most [`DEFAULT_WAIT_BOUND`] for future revisions.
    pub fn new(replica: R) -> Self {
        Self {
            replica,
            wait_bound: DEFAULT_WAIT_BOUND,
        }
    }

    /// The same storage with another bound on waiting for a revision to be applied.
    pub fn with_wait_bound(self, wait_bound: Duration) -> Self {
        Self { wait_bound, ..self }
    }

    async fn write(&self, txn: Txn) -> Result<CommandResponse, StorageError> {
        let response = self.replica.write(txn).await.map_err(write_error)?;
        match &response.error {
            Some(reason) => Err(StorageError::Internal {
                reason: reason.clone(),
            }),
            None => Ok(response),
        }
    }

    /// Creates `key` in one transaction that also checks `guard`, if any; the failure branch
    /// reads both keys, so a refusal says which compare failed.
    async fn create_if(
        &self,
        key: &str,
        value: Bytes,
        guard: Option<&Guard>,
    ) -> Result<StoredObject, StorageError> {
        let mut compares = vec![Compare::exists(key, false)];
        let mut failure = vec![Op::get(key)];
        if let Some(guard) = guard {
            // `exists` first: `mod_revision = 0` alone would also hold for an absent key.
            compares.push(Compare::exists(&guard.key, true));
            compares.push(Compare::mod_revision(&guard.key, guard.mod_revision));
            failure.push(Op::get(&guard.key));
        }
        let response = self
            .write(Txn {
                compares,
                success: vec![Op::put(key, value.clone())],
                failure,
            })
            .await?;
        if !response.succeeded {
            return Err(match (first_kv(&response), guard) {
                (None, Some(guard)) => StorageError::GuardFailed {
                    key: guard.key.clone(),
                },
                _ => StorageError::AlreadyExists {
                    key: key.to_owned(),
                },
            });
        }
        Ok(StoredObject {
            key: key.to_owned(),
            value,
            mod_revision: response.revision,
            create_revision: response.revision,
        })
    }

    /// Resolves `consistency` to the revision to read at (`None`: the current one), after
    /// waiting for whatever the consistency requires.
    async fn read_point(
        &self,
        consistency: ReadConsistency,
    ) -> Result<Option<Revision>, StorageError> {
        match consistency {
            ReadConsistency::Linearizable => {
                self.replica.read_index().await.map_err(read_error)?;
                Ok(None)
            }
            ReadConsistency::Any => Ok(None),
            ReadConsistency::NotOlderThan(revision) => {
                self.wait_for(revision).await?;
                Ok(None)
            }
            ReadConsistency::Exact(revision) => {
                self.wait_for(revision).await?;
                Ok(Some(revision))
            }
        }
    }

    async fn wait_for(&self, revision: Revision) -> Result<(), StorageError> {
        let reached = self
            .replica
            .wait_applied(revision, self.wait_bound)
            .await
            .map_err(read_error)?;
        if reached {
            Ok(())
        } else {
            Err(StorageError::TooLargeRevision {
                requested: revision,
                current: self.replica.read(mvcc::Store::revision),
            })
        }
    }
}

#[async_trait::async_trait]
impl<R: ReplicatedStore> Storage for ReplicaStorage<R> {
    async fn create(&self, key: &str, value: Bytes) -> Result<StoredObject, StorageError> {
        self.create_if(key, value, None).await
    }

    async fn create_guarded(
        &self,
        key: &str,
        value: Bytes,
        guard: &Guard,
    ) -> Result<StoredObject, StorageError> {
        self.create_if(key, value, Some(guard)).await
    }

    async fn get(
        &self,
        key: &str,
        consistency: ReadConsistency,
    ) -> Result<Option<StoredObject>, StorageError> {
        let at = self.read_point(consistency).await?;
        let kv = self
            .replica
            .read(|store| store.get(key, at))
            .map_err(mvcc_error)?;
        Ok(kv.map(stored))
    }

    async fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
        consistency: ReadConsistency,
    ) -> Result<ListPage, StorageError> {
        let at = self.read_point(consistency).await?;
        let end = mvcc::prefix_end(prefix);
        let start = range_start(prefix, start_after);
        let range = self
            .replica
            .read(|store| store.range(&start, end.as_deref(), at, limit))
            .map_err(mvcc_error)?;
        Ok(ListPage {
            items: range.kvs.into_iter().map(stored).collect(),
            revision: range.revision,
            remaining: range.remaining,
        })
    }

    async fn list_chunk(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
        consistency: ReadConsistency,
    ) -> Result<ListChunk, StorageError> {
        let at = self.read_point(consistency).await?;
        let end = mvcc::prefix_end(prefix);
        let start = range_start(prefix, start_after);
        let chunk = self
            .replica
            .read(|store| store.range_chunk(&start, end.as_deref(), at, limit))
            .map_err(mvcc_error)?;
        Ok(ListChunk {
            items: chunk.kvs.into_iter().map(stored).collect(),
            revision: chunk.revision,
            more: chunk.more,
        })
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> Result<StoredObject, StorageError> {
        let response = self
            .write(Txn {
                // `exists` first: `mod_revision = 0` alone would also hold for an absent key.
                compares: vec![
                    Compare::exists(key, true),
                    Compare::mod_revision(key, expected),
                ],
                success: vec![Op::put(key, value.clone())],
                failure: vec![Op::get(key)],
            })
            .await?;
        if !response.succeeded {
            return Err(precondition_failed(key, expected, &response));
        }
        let previous = first_kv(&response).ok_or_else(|| missing_result(key, "update"))?;
        Ok(StoredObject {
            key: key.to_owned(),
            value,
            mod_revision: response.revision,
            create_revision: previous.create_revision,
        })
    }

    async fn watch(
        &self,
        prefix: &str,
        after: Revision,
    ) -> Result<Box<dyn WatchStream>, StorageError> {
        let stream = self.replica.watch(prefix, after).map_err(mvcc_error)?;
        Ok(Box::new(ReplicaWatch(stream)))
    }

    async fn delete(
        &self,
        key: &str,
        expected: Option<Revision>,
    ) -> Result<StoredObject, StorageError> {
        let mut compares = vec![Compare::exists(key, true)];
        compares.extend(expected.map(|revision| Compare::mod_revision(key, revision)));
        let response = self
            .write(Txn {
                compares,
                success: vec![Op::delete(key)],
                failure: vec![Op::get(key)],
            })
            .await?;
        if !response.succeeded {
            return Err(precondition_failed(key, expected.unwrap_or(0), &response));
        }
        let deleted = first_kv(&response).ok_or_else(|| missing_result(key, "delete"))?;
        Ok(StoredObject {
            key: key.to_owned(),
            value: deleted.value,
            mod_revision: response.revision,
            create_revision: deleted.create_revision,
        })
    }
}

/// A watch on the replica's apply stream, its events as the API layer's changes.
struct ReplicaWatch(state_machine::WatchStream);

#[async_trait::async_trait]
impl WatchStream for ReplicaWatch {
    async fn next(&mut self) -> Result<Option<ChangeBatch>, StorageError> {
        let Some(batch) = self.0.next().await.map_err(mvcc_error)? else {
            return Ok(None);
        };
        let changes = batch
            .events
            .into_iter()
            .map(|event| {
                let previous = event.prev_kv.map(stored);
                match event.kind {
                    EventKind::Put => Change {
                        kind: ChangeKind::Put,
                        object: stored(event.kv),
                        previous,
                    },
                    EventKind::Delete => Change {
                        kind: ChangeKind::Delete,
                        object: StoredObject {
                            mod_revision: event.kv.mod_revision,
                            ..previous.clone().unwrap_or_else(|| stored(event.kv))
                        },
                        previous,
                    },
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

/// Where a read under `prefix` after `start_after` starts: the smallest key after
/// `start_after` is `start_after` followed by NUL.
fn range_start(prefix: &str, start_after: Option<&str>) -> String {
    match start_after {
        Some(after) if after >= prefix => format!("{after}\0"),
        _ => prefix.to_owned(),
    }
}

fn first_kv(response: &CommandResponse) -> Option<KeyValue> {
    response.results.first().and_then(|r| r.kv.clone())
}

/// A failed compare-and-swap: the failure branch's read tells absent from moved on.
fn precondition_failed(key: &str, expected: Revision, response: &CommandResponse) -> StorageError {
    match first_kv(response) {
        None => StorageError::NotFound {
            key: key.to_owned(),
        },
        Some(current) => StorageError::Conflict {
            key: key.to_owned(),
            expected,
            actual: current.mod_revision,
        },
    }
}

fn missing_result(key: &str, operation: &str) -> StorageError {
    StorageError::Internal {
        reason: format!("{operation} of {key} succeeded without the previous value"),
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

/// A failed write, kept apart by what the client may do: retry (nothing was proposed), check
/// before retrying (it may have happened, or did happen and is not applied here yet), or give up.
fn write_error(error: WriteError) -> StorageError {
    match error {
        WriteError::Unavailable { .. } | WriteError::ForwardToLeader { .. } => {
            StorageError::Unavailable {
                reason: error.to_string(),
            }
        }
        // A committed write not yet applied here is no safer to retry than an unknown one: a
        // retried `generateName` create would store a second object.
        WriteError::OutcomeUnknown { .. } | WriteError::NotApplied { .. } => {
            StorageError::OutcomeUnknown {
                reason: error.to_string(),
            }
        }
        WriteError::Fatal { reason } => StorageError::Internal { reason },
    }
}

/// A failed read: nothing happened, so every failure but a fatal one is worth a retry.
fn read_error(error: ReadError) -> StorageError {
    match error {
        ReadError::Unavailable { .. } | ReadError::NotApplied { .. } => StorageError::Unavailable {
            reason: error.to_string(),
        },
        ReadError::Fatal { reason } => StorageError::Internal { reason },
    }
}

fn mvcc_error(error: MvccError) -> StorageError {
    match error {
        MvccError::Compacted {
            requested,
            compacted,
        } => StorageError::Compacted {
            requested,
            compacted,
        },
        MvccError::FutureRevision { requested, current } => {
            StorageError::TooLargeRevision { requested, current }
        }
    }
}

#[cfg(test)]
#[path = "backend_test.rs"]
mod backend_test;

#[cfg(test)]
#[path = "reflector_test.rs"]
mod reflector_test;

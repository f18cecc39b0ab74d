//! Where the writes of one request go: to storage, or, for a dry run (`dryRun=All`,
//! R-RES-192..194), checked against storage as the write would be and then dropped, as
//! Kubernetes' `DryRunnableStorage` does. Every step before persistence is the store's and runs
//! unchanged; only the three storage writes are replaced here.
//!
//! A value larger than a stored object may be is refused here, before it is proposed and
//! whether or not the write is a dry run, as etcd refuses a request over its
//! `--max-request-bytes`: the bytes measured are the ones that would be proposed.
//!
//! It is also where a write reads the object it changes. One proposal per write: a write
//! starts from the replica's own state ([`Persistence::optimistic`]) and the
//! compare-and-swap it proposes catches a stale read, which costs a retry instead of a
//! read-index round trip on every write. An answer that rests on a local read no write of
//! that key confirmed (404, 409, 422, an update that changes nothing) is decided again from
//! quorum reads ([`Persistence::again`]).

use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use bytes::Bytes;

use crate::storage::Guard;
use crate::storage::ReadConsistency;
use crate::storage::Revision;
use crate::storage::Storage;
use crate::storage::StorageError;
use crate::storage::StoredObject;

/// The writes of one request.
pub(super) struct Persistence<'a> {
    storage: &'a dyn Storage,
    dry_run: bool,
    reads: Reads,
}

/// How the objects a write changes are read, and which reads are still unconfirmed.
#[derive(Default)]
struct Reads {
    /// Objects are read from the replica's own state (no read index).
    local: bool,
    /// A proposal of this request came back: the replica has applied a revision after the
    /// request began, so its own state is now as fresh as a quorum read.
    synced: AtomicBool,
    /// A write failed without a definite answer (unavailable, outcome unknown): the request
    /// answers that failure, whatever it read.
    ended: AtomicBool,
    /// Keys read from the replica's own state before `synced`, and not written since.
    unconfirmed: Mutex<Vec<String>>,
}

impl<'a> Persistence<'a> {
    /// Writes to `storage`, or only checks against it when `dry_run`; objects are read with
    /// quorum reads.
    pub(super) fn new(storage: &'a dyn Storage, dry_run: bool) -> Self {
        Self {
            storage,
            dry_run,
            reads: Reads::default(),
        }
    }

    /// As [`Persistence::new`], with objects read from the replica's own state; a dry run,
    /// which proposes nothing that could catch a stale read, still reads with quorum reads.
    pub(super) fn optimistic(storage: &'a dyn Storage, dry_run: bool) -> Self {
        let mut writes = Self::new(storage, dry_run);
        writes.reads.local = !dry_run;
        writes
    }

    /// The object at `key`, as the write that changes it reads it: from the replica's own
    /// state when optimistic (recorded until a write of `key` confirms it), else quorum.
    pub(super) async fn read(&self, key: &str) -> Result<Option<StoredObject>, StorageError> {
        if !self.reads.local {
            return self.storage.get(key, ReadConsistency::Linearizable).await;
        }
        let read = self.storage.get(key, ReadConsistency::Any).await;
        if !self.reads.synced.load(Ordering::Acquire) {
            self.unconfirmed().push(key.to_owned());
        }
        read
    }

    /// After a request's write ran with these writes: `None` when its answer stands, else
    /// the writes to run it again with, reading with quorum reads. An answer stands unless it
    /// rests on a local read no proposal confirmed (every local read of a key must be followed
    /// by a proposal that wrote or compared that key); a write that ended without a definite
    /// answer (unavailable, outcome unknown) is answered as it is.
    pub(super) fn again(&self) -> Option<Persistence<'a>> {
        let settled = self.reads.ended.load(Ordering::Acquire) || self.unconfirmed().is_empty();
        match settled {
            true => None,
            false => Some(Self::new(self.storage, self.dry_run)),
        }
    }

    fn unconfirmed(&self) -> MutexGuard<'_, Vec<String>> {
        // A list of keys cannot be left torn by a panic elsewhere.
        self.reads
            .unconfirmed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records what a proposal of `key` answered.
    fn proposed<T>(&self, key: &str, result: Result<T, StorageError>) -> Result<T, StorageError> {
        match &result {
            Ok(_)
            | Err(
                StorageError::NotFound { .. }
                | StorageError::AlreadyExists { .. }
                | StorageError::Conflict { .. }
                | StorageError::GuardFailed { .. },
            ) => {
                self.reads.synced.store(true, Ordering::Release);
                self.unconfirmed().retain(|read| read != key);
            }
            Err(StorageError::TooLarge { .. }) => {}
            Err(_) => self.reads.ended.store(true, Ordering::Release),
        }
        result
    }

    /// Whether nothing is written.
    pub(super) fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    /// The storage written to.
    pub(super) fn storage(&self) -> &'a dyn Storage {
        self.storage
    }

    /// The current version at `key`, read linearizably as the write it stands in for would
    /// compare against it; `NotFound` when absent.
    async fn current(&self, key: &str) -> Result<StoredObject, StorageError> {
        self.storage
            .get(key, ReadConsistency::Linearizable)
            .await?
            .ok_or_else(|| StorageError::NotFound {
                key: key.to_owned(),
            })
    }

    /// As [`Storage::create`]; `TooLarge` when `value` has more than `max_bytes` bytes. A dry
    /// run fails with `AlreadyExists` when the key is taken, and otherwise answers `value` at
    /// revision 0, which no write ever has: a dry-run create has no `resourceVersion`.
    /// With a `guard`, the create happens only while it holds (`GuardFailed` otherwise).
    pub(super) async fn create(
        &self,
        key: &str,
        value: Bytes,
        max_bytes: usize,
        guard: Option<&Guard>,
    ) -> Result<StoredObject, StorageError> {
        fits(key, &value, max_bytes)?;
        if !self.dry_run {
            let created = match guard {
                Some(guard) => self.storage.create_guarded(key, value, guard).await,
                None => self.storage.create(key, value).await,
            };
            return self.proposed(key, created);
        }
        match self.current(key).await {
            Ok(_) => Err(StorageError::AlreadyExists {
                key: key.to_owned(),
            }),
            Err(StorageError::NotFound { .. }) => Ok(StoredObject {
                key: key.to_owned(),
                value,
                mod_revision: 0,
                create_revision: 0,
            }),
            Err(e) => Err(e),
        }
    }

    /// As [`Storage::update`]; `TooLarge` when `value` has more than `max_bytes` bytes. A dry
    /// run fails as the update would (`NotFound`, `Conflict`), and otherwise answers `value` at
    /// the current revision: the object keeps its `resourceVersion` because nothing was
    /// written (Kubernetes answers the same).
    pub(super) async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
        max_bytes: usize,
    ) -> Result<StoredObject, StorageError> {
        fits(key, &value, max_bytes)?;
        if !self.dry_run {
            let updated = self.storage.update(key, value, expected).await;
            return self.proposed(key, updated);
        }
        let current = self.current(key).await?;
        if current.mod_revision != expected {
            return Err(StorageError::Conflict {
                key: key.to_owned(),
                expected,
                actual: current.mod_revision,
            });
        }
        Ok(StoredObject { value, ..current })
    }

    /// As [`Storage::delete`]. A dry run fails as the delete would (`NotFound`, `Conflict`),
    /// and otherwise answers the current version, which stays.
    pub(super) async fn delete(
        &self,
        key: &str,
        expected: Option<Revision>,
    ) -> Result<StoredObject, StorageError> {
        if !self.dry_run {
            let deleted = self.storage.delete(key, expected).await;
            return self.proposed(key, deleted);
        }
        let current = self.current(key).await?;
        match expected {
            Some(expected) if expected != current.mod_revision => Err(StorageError::Conflict {
                key: key.to_owned(),
                expected,
                actual: current.mod_revision,
            }),
            _ => Ok(current),
        }
    }
}

/// `TooLarge` when `value`, to be written at `key`, has more than `max_bytes` bytes.
fn fits(key: &str, value: &Bytes, max_bytes: usize) -> Result<(), StorageError> {
    if value.len() > max_bytes {
        return Err(StorageError::TooLarge {
            key: key.to_owned(),
            size: value.len(),
            limit: max_bytes,
        });
    }
    Ok(())
}

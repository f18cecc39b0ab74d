//! Where the writes of one request go: to storage, or, for a dry run (`dryRun=All`,
//! R-RES-192..194), checked against storage as the write would be and then dropped, as
//! Kubernetes' `DryRunnableStorage` does. Every step before persistence is the store's and runs
//! unchanged; only the three storage writes are replaced here.
//!
//! A value larger than a stored object may be is refused here, before it is proposed and
//! whether or not the write is a dry run, as etcd refuses a request over its
//! `--max-request-bytes`: the bytes measured are the ones that would be proposed.

use bytes::Bytes;

use crate::storage::ReadConsistency;
use crate::storage::Revision;
use crate::storage::Storage;
use crate::storage::StorageError;
use crate::storage::StoredObject;

/// The writes of one request.
pub(super) struct Persistence<'a> {
    storage: &'a dyn Storage,
    dry_run: bool,
}

impl<'a> Persistence<'a> {
    /// Writes to `storage`, or only checks against it when `dry_run`.
    pub(super) fn new(storage: &'a dyn Storage, dry_run: bool) -> Self {
        Self { storage, dry_run }
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
    pub(super) async fn create(
        &self,
        key: &str,
        value: Bytes,
        max_bytes: usize,
    ) -> Result<StoredObject, StorageError> {
        fits(key, &value, max_bytes)?;
        if !self.dry_run {
            return self.storage.create(key, value).await;
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
            return self.storage.update(key, value, expected).await;
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
            return self.storage.delete(key, expected).await;
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

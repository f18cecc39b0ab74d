//! A change of a stored object made by the server for a subresource (a pod's `binding`, a
//! disruption budget's status on `eviction`), as Kubernetes' `GuaranteedUpdate`: read the
//! current object, change it, compare-and-swap, retry on a race. The strategy's update rules
//! are skipped on purpose: they judge what a client sends, and these changes are the server's
//! own (upstream's binding sets `spec.nodeName`, which a pod update may not change).

use serde_json::Value;

use super::RETRY_ATTEMPTS;
use super::Store;
use super::encode;
use super::metadata::bump_generation;
use super::persistence::Persistence;
use crate::error::ApiError;
use crate::error::OPTIMISTIC_LOCK_MESSAGE;
use crate::storage::Revision;
use crate::storage::Storage;
use crate::storage::StorageError;

impl Store {
    /// Applies `change` to the current object `name` and stores it, answering the stored
    /// object (404 when absent). With `expected`, the object must be at that revision (409
    /// otherwise, no retry); without, a race with another writer re-reads and re-applies.
    /// `change` may refuse with an error, which ends the update. The generation is bumped
    /// when the spec part changed, as on any update. A dry run answers the would-be object
    /// with the current `resourceVersion` and stores nothing.
    pub async fn guaranteed_update<F>(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        name: &str,
        expected: Option<Revision>,
        dry_run: bool,
        change: F,
    ) -> Result<Vec<u8>, ApiError>
    where
        F: Fn(&mut Value) -> Result<(), ApiError>,
    {
        let key = self.resource.object_key(namespace, name);
        let mut writes = Persistence::optimistic(storage, dry_run);
        loop {
            let answer = async {
                let mut attempt = 0;
                loop {
                    attempt += 1;
                    let (current, _, old) = self.read_current(&writes, &key, name).await?;
                    if expected.is_some_and(|rv| rv != current.mod_revision) {
                        return Err(self.conflict(name, OPTIMISTIC_LOCK_MESSAGE));
                    }
                    let mut obj = old.clone();
                    change(&mut obj)?;
                    if self.strategy.tracks_generation() {
                        bump_generation(&mut obj, &old)?;
                    }
                    self.strategy.canonicalize(&mut obj);
                    let value = encode(&key, &obj)?;
                    let limit = self.max_object_bytes;
                    match writes
                        .update(&key, value, current.mod_revision, limit)
                        .await
                    {
                        Ok(updated) => return self.respond(&key, updated),
                        Err(StorageError::Conflict { .. })
                            if expected.is_none() && attempt < RETRY_ATTEMPTS =>
                        {
                            continue;
                        }
                        Err(e) => return Err(self.storage_error(e, name)),
                    }
                }
            }
            .await;
            match writes.again() {
                Some(quorum) => writes = quorum,
                None => return answer,
            }
        }
    }
}

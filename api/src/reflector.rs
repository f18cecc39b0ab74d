//! Keeps an in-memory view of stored objects current on this replica: lists the objects under
//! some key prefixes, then follows their watch and hands every change to a [`Cache`]; lists
//! again after a compaction or a store failure. Authorizers that decide from stored objects
//! (the RBAC index, the node graph) are caches, so a decision never costs a store round trip
//! and every replica decides alike once it has applied the same revision.

use std::sync::Arc;
use std::sync::Weak;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use crate::registry::StoredJson;
use crate::storage::ChangeKind;
use crate::storage::ReadConsistency;
use crate::storage::Revision;
use crate::storage::Storage;
use crate::storage::StorageError;

/// First pause after a failure; doubled up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest pause after a failure.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// One change a cache applies.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheEvent {
    /// The object at `key` was created or replaced by `object`.
    Upsert {
        /// The stored key (`/registry/<group>/<resource>/[<ns>/]<name>`).
        key: String,
        /// The object, parsed once.
        object: Arc<Value>,
    },
    /// The object at `key` was removed.
    Delete {
        /// The stored key.
        key: String,
    },
}

/// What a [`Reflector`] keeps current.
///
/// ### Correctness requirements
/// - `replace` drops everything the cache held under `prefix` before taking `objects`: after
///   a relist nothing deleted meanwhile survives.
/// - Both are called from one task, in revision order; they must not block (no IO, no await).
pub trait Cache: Send + Sync + 'static {
    /// Everything under `prefix`, as listed at one revision.
    fn replace(&self, prefix: &str, objects: Vec<(String, Arc<Value>)>);

    /// The changes one revision made under `prefix`.
    fn apply(&self, prefix: &str, events: Vec<CacheEvent>);
}

/// Follows one key prefix into a cache; ends when the cache is dropped. A cache fed from
/// several prefixes has one reflector per prefix.
pub struct Reflector {
    synced: watch::Receiver<Revision>,
}

impl Reflector {
    /// Starts following `prefix` of `storage` into `cache` on the current tokio runtime. The
    /// task holds the cache weakly and ends once every other holder has dropped it.
    pub fn start<C: Cache>(storage: Arc<dyn Storage>, prefix: String, cache: &Arc<C>) -> Self {
        let (synced, receiver) = watch::channel(0);
        let weak: Weak<C> = Arc::downgrade(cache);
        tokio::spawn(run(storage, prefix, weak, synced));
        Self { synced: receiver }
    }

    /// The revision up to which every change under the prefix is in the cache (0 before the
    /// first list).
    pub fn revision(&self) -> Revision {
        *self.synced.borrow()
    }

    /// Waits until the cache holds every change under the prefix up to `revision` (a caller
    /// that wrote a binding and wants it in force on this replica, a readiness check).
    pub async fn wait_for(&self, revision: Revision) {
        let mut synced = self.synced.clone();
        let _ = synced.wait_for(|r| *r >= revision).await;
    }
}

fn parse(value: bytes::Bytes) -> Option<Arc<Value>> {
    StoredJson::from_stored(value)
        .ok()?
        .to_value()
        .ok()
        .map(Arc::new)
}

/// Lists the prefix, then follows its changes until the store fails or the cache is gone.
async fn follow<C: Cache>(
    storage: &dyn Storage,
    prefix: &str,
    cache: &Weak<C>,
    synced: &watch::Sender<Revision>,
) -> Result<(), StorageError> {
    let page = (storage.list(prefix, None, 0, ReadConsistency::Linearizable)).await?;
    let mut stream = storage.watch(prefix, page.revision).await?;
    let Some(strong) = cache.upgrade() else {
        return Ok(());
    };
    let objects = (page.items.into_iter())
        .filter_map(|item| Some((item.key, parse(item.value)?)))
        .collect();
    strong.replace(prefix, objects);
    drop(strong);
    synced.send_replace(page.revision);
    loop {
        let Some(batch) = stream.next().await? else {
            return Err(StorageError::Unavailable {
                reason: "the store stopped serving the watch".into(),
            });
        };
        let Some(strong) = cache.upgrade() else {
            return Ok(());
        };
        let events = (batch.changes.into_iter())
            .filter_map(|change| match change.kind {
                ChangeKind::Put => Some(CacheEvent::Upsert {
                    object: parse(change.object.value)?,
                    key: change.object.key,
                }),
                ChangeKind::Delete => Some(CacheEvent::Delete {
                    key: change.object.key,
                }),
            })
            .collect();
        strong.apply(prefix, events);
        synced.send_replace(batch.revision.max(stream.progress()));
    }
}

/// Runs [`follow`] until the cache is gone, listing again after failures.
async fn run<C: Cache>(
    storage: Arc<dyn Storage>,
    prefix: String,
    cache: Weak<C>,
    synced: watch::Sender<Revision>,
) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        match follow(storage.as_ref(), &prefix, &cache, &synced).await {
            Ok(()) => return,
            Err(error) => tracing::debug!(%error, prefix, "cache not current; listing again"),
        }
        if cache.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

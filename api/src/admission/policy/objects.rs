//! The objects under one key prefix, kept current by a [`Reflector`]: the param objects of
//! one param resource, the namespaces a policy's `namespaceObject` and namespace selectors
//! read. Reads never touch the store.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::PoisonError;
use std::sync::RwLock;
use std::time::Duration;

use serde_json::Value;

use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::reflector::Reflector;
use crate::storage::Storage;

/// The objects under one key prefix, by key.
#[derive(Default)]
pub struct ObjectCache {
    objects: RwLock<BTreeMap<String, Arc<Value>>>,
    reflector: OnceLock<Reflector>,
}

impl ObjectCache {
    /// A cache of `prefix` in `storage`, following it from now on.
    pub fn start(storage: Arc<dyn Storage>, prefix: String) -> Arc<Self> {
        let cache = Arc::new(Self::default());
        let reflector = Reflector::start(storage, prefix, &cache);
        let _ = cache.reflector.set(reflector);
        cache
    }

    /// Whether the first list has been taken, waiting for it at most `within`.
    pub async fn synced(&self, within: Duration) -> bool {
        let Some(reflector) = self.reflector.get() else {
            return false;
        };
        if reflector.revision() > 0 {
            return true;
        }
        tokio::time::timeout(within, reflector.wait_for(1))
            .await
            .is_ok()
    }

    /// The object stored at `key`.
    pub fn get(&self, key: &str) -> Option<Arc<Value>> {
        let objects = self.objects.read().unwrap_or_else(PoisonError::into_inner);
        objects.get(key).cloned()
    }

    /// The objects whose keys start with `prefix` (a collection's key), in key order.
    pub fn under(&self, prefix: &str) -> Vec<Arc<Value>> {
        let objects = self.objects.read().unwrap_or_else(PoisonError::into_inner);
        objects
            .range(prefix.to_owned()..)
            .take_while(|(key, _)| key.starts_with(prefix))
            .map(|(_, object)| object.clone())
            .collect()
    }
}

impl Cache for ObjectCache {
    fn replace(&self, prefix: &str, objects: Vec<(String, Arc<Value>)>) {
        let mut held = self.objects.write().unwrap_or_else(PoisonError::into_inner);
        held.retain(|key, _| !key.starts_with(prefix));
        held.extend(objects);
    }

    fn apply(&self, _prefix: &str, events: Vec<CacheEvent>) {
        let mut held = self.objects.write().unwrap_or_else(PoisonError::into_inner);
        for event in events {
            match event {
                CacheEvent::Upsert { key, object } => {
                    held.insert(key, object);
                }
                CacheEvent::Delete { key } => {
                    held.remove(&key);
                }
            }
        }
    }
}

//! The namespaces as admission sees them: an in-memory copy of every Namespace on this
//! replica, kept current by a reflector, for namespace selectors and the `namespaceObject`
//! of policies (no store read per write).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::PoisonError;
use std::sync::RwLock;

use serde_json::Value;

use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::reflector::Reflector;
use crate::storage::Storage;

/// Every Namespace by name.
#[derive(Default)]
pub struct Namespaces {
    by_name: RwLock<HashMap<String, Arc<Value>>>,
    reflector: std::sync::OnceLock<Reflector>,
}

/// The name a namespace's key ends with.
fn name_of(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or_default()
}

impl Namespaces {
    /// Starts following the Namespaces stored under `prefix` (on the current tokio runtime).
    pub fn follow(storage: Arc<dyn Storage>, prefix: String) -> Arc<Self> {
        let namespaces = Arc::new(Self::default());
        let reflector = Reflector::start(storage, prefix, &namespaces);
        let _ = namespaces.reflector.set(reflector);
        namespaces
    }

    /// The Namespace `name`, as this replica last saw it.
    pub fn get(&self, name: &str) -> Option<Arc<Value>> {
        let by_name = self.by_name.read().unwrap_or_else(PoisonError::into_inner);
        by_name.get(name).cloned()
    }

    /// Waits until every change up to `revision` is here (tests, and writes that must see a
    /// namespace they just wrote).
    pub async fn wait_for(&self, revision: u64) {
        if let Some(reflector) = self.reflector.get() {
            reflector.wait_for(revision).await;
        }
    }
}

impl Cache for Namespaces {
    fn replace(&self, _prefix: &str, objects: Vec<(String, Arc<Value>)>) {
        let by_name = objects
            .into_iter()
            .map(|(key, ns)| (name_of(&key).to_owned(), ns))
            .collect();
        *self.by_name.write().unwrap_or_else(PoisonError::into_inner) = by_name;
    }

    fn apply(&self, _prefix: &str, events: Vec<CacheEvent>) {
        let mut by_name = self.by_name.write().unwrap_or_else(PoisonError::into_inner);
        for event in events {
            match event {
                CacheEvent::Upsert { key, object } => {
                    by_name.insert(name_of(&key).to_owned(), object);
                }
                CacheEvent::Delete { key } => {
                    by_name.remove(name_of(&key));
                }
            }
        }
    }
}

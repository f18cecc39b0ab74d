//! The stored objects of one resource as plugins read them: an in-memory copy kept current
//! by a [`Reflector`] (Kubernetes' informer listers), started on first use so a chain whose
//! plugin never meets its resource costs nothing. A name the copy lacks is read live once,
//! as Kubernetes' RuntimeClass plugin does, so an object created just before the write that
//! names it is found on every replica.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::PoisonError;
use std::sync::RwLock;
use std::time::Duration;

use serde_json::Value;

use crate::error::ApiError;
use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::reflector::Reflector;
use crate::registry::StoredJson;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// How long a write waits for the copy's first listing before it is refused as Kubernetes'
/// plugins refuse before their informers synced.
const FIRST_SYNC_WAIT: Duration = Duration::from_secs(10);

/// The objects under one key prefix, by the rest of their key (`<ns>/<name>` or `<name>`).
#[derive(Default)]
struct Objects {
    by_key: RwLock<BTreeMap<String, Arc<Value>>>,
}

impl Cache for Objects {
    fn replace(&self, prefix: &str, objects: Vec<(String, Arc<Value>)>) {
        let fresh = (objects.into_iter())
            .filter_map(|(key, object)| Some((key.strip_prefix(prefix)?.to_owned(), object)))
            .collect();
        *self.by_key.write().unwrap_or_else(PoisonError::into_inner) = fresh;
    }

    fn apply(&self, prefix: &str, events: Vec<CacheEvent>) {
        let mut by_key = self.by_key.write().unwrap_or_else(PoisonError::into_inner);
        for event in events {
            match event {
                CacheEvent::Upsert { key, object } => {
                    if let Some(rest) = key.strip_prefix(prefix) {
                        by_key.insert(rest.to_owned(), object);
                    }
                }
                CacheEvent::Delete { key } => {
                    if let Some(rest) = key.strip_prefix(prefix) {
                        by_key.remove(rest);
                    }
                }
            }
        }
    }
}

/// The stored objects of one resource, read from memory.
pub struct ObjectCache {
    storage: Arc<dyn Storage>,
    prefix: String,
    objects: Arc<Objects>,
    reflector: OnceLock<Reflector>,
}

impl ObjectCache {
    /// The objects stored under `/registry/<group>/<plural>/` (`group` as stored: `core`
    /// for the core group), not yet followed.
    pub fn new(storage: Arc<dyn Storage>, group: &str, plural: &str) -> Self {
        Self {
            storage,
            prefix: format!("/registry/{group}/{plural}/"),
            objects: Arc::default(),
            reflector: OnceLock::new(),
        }
    }

    /// Follows the objects (once) and waits a bounded while for their first listing;
    /// Kubernetes' "not yet ready" refusal when it does not come.
    async fn synced(&self) -> Result<(), String> {
        let reflector = (self.reflector).get_or_init(|| {
            Reflector::start(self.storage.clone(), self.prefix.clone(), &self.objects)
        });
        if reflector.revision() == 0
            && tokio::time::timeout(FIRST_SYNC_WAIT, reflector.wait_for(1))
                .await
                .is_err()
        {
            return Err("not yet ready to handle request".to_owned());
        }
        Ok(())
    }

    /// Every object, in key order (namespace, then name).
    pub async fn list(&self) -> Result<Vec<Arc<Value>>, String> {
        self.synced().await?;
        let by_key = self
            .objects
            .by_key
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        Ok(by_key.values().cloned().collect())
    }

    /// The objects of `namespace`.
    pub async fn list_in(&self, namespace: &str) -> Result<Vec<Arc<Value>>, String> {
        self.synced().await?;
        let start = format!("{namespace}/");
        let by_key = self
            .objects
            .by_key
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        Ok((by_key.range(start.clone()..))
            .take_while(|(key, _)| key.starts_with(&start))
            .map(|(_, object)| object.clone())
            .collect())
    }

    /// The object `name` (in `namespace` when not empty): from memory, else read live.
    pub async fn get(&self, namespace: &str, name: &str) -> Result<Option<Arc<Value>>, ApiError> {
        let rest = match namespace {
            "" => name.to_owned(),
            ns => format!("{ns}/{name}"),
        };
        if self.synced().await.is_ok() {
            let by_key = self
                .objects
                .by_key
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(object) = by_key.get(&rest) {
                return Ok(Some(object.clone()));
            }
        }
        let key = format!("{}{rest}", self.prefix);
        let read = self.storage.get(&key, ReadConsistency::Linearizable).await;
        let Some(stored) = read.map_err(|e| ApiError::Internal(format!("reading {key}: {e}")))?
        else {
            return Ok(None);
        };
        let object = (StoredJson::from_stored(stored.value).and_then(|json| json.to_value()))
            .map_err(|e| ApiError::Internal(format!("reading {key}: {e}")))?;
        Ok(Some(Arc::new(object)))
    }
}

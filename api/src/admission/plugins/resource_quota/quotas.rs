//! The ResourceQuotas of every namespace as the plugin reads them: parsed once per stored
//! version into an in-memory map by namespace that a [`Reflector`] keeps current, so a write
//! in a namespace without a quota costs one map lookup. Until the first listing is in, the
//! namespace's quotas are read from this replica's store (Kubernetes' live lookup before its
//! informer synced).

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::PoisonError;
use std::sync::RwLock;

use serde_json::Value;

use super::check::Quota;
use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::reflector::Reflector;
use crate::registry::StoredJson;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// Where ResourceQuotas are stored (the same key in every flavor).
pub const PREFIX: &str = "/registry/core/resourcequotas/";

/// The quotas by namespace, then name.
#[derive(Default)]
struct ByNamespace {
    quotas: RwLock<HashMap<String, BTreeMap<String, Quota>>>,
}

/// `<namespace>/<name>` of a stored key.
fn split(prefix: &str, key: &str) -> Option<(String, String)> {
    let (namespace, name) = key.strip_prefix(prefix)?.split_once('/')?;
    Some((namespace.to_owned(), name.to_owned()))
}

fn insert(
    map: &mut HashMap<String, BTreeMap<String, Quota>>,
    key: (String, String),
    object: &Value,
) {
    map.entry(key.0)
        .or_default()
        .insert(key.1, Quota::from_object(object));
}

impl Cache for ByNamespace {
    fn replace(&self, prefix: &str, objects: Vec<(String, Arc<Value>)>) {
        let mut fresh = HashMap::new();
        for (key, object) in objects {
            if let Some(key) = split(prefix, &key) {
                insert(&mut fresh, key, &object);
            }
        }
        *self.quotas.write().unwrap_or_else(PoisonError::into_inner) = fresh;
    }

    fn apply(&self, prefix: &str, events: Vec<CacheEvent>) {
        let mut quotas = self.quotas.write().unwrap_or_else(PoisonError::into_inner);
        for event in events {
            match event {
                CacheEvent::Upsert { key, object } => {
                    if let Some(key) = split(prefix, &key) {
                        insert(&mut quotas, key, &object);
                    }
                }
                CacheEvent::Delete { key } => {
                    let Some((namespace, name)) = split(prefix, &key) else {
                        continue;
                    };
                    if let Some(names) = quotas.get_mut(&namespace) {
                        names.remove(&name);
                        if names.is_empty() {
                            quotas.remove(&namespace);
                        }
                    }
                }
            }
        }
    }
}

/// The replica's ResourceQuotas, read from memory.
pub struct QuotaCache {
    storage: Arc<dyn Storage>,
    quotas: Arc<ByNamespace>,
    reflector: OnceLock<Reflector>,
}

impl QuotaCache {
    /// The quotas of `storage`, followed from the first write that asks for them.
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        Self {
            storage,
            quotas: Arc::default(),
            reflector: OnceLock::new(),
        }
    }

    /// The quotas of `namespace`, in name order (empty for most namespaces).
    pub async fn of(&self, namespace: &str) -> Result<Vec<Quota>, String> {
        let reflector = (self.reflector).get_or_init(|| {
            Reflector::start(self.storage.clone(), PREFIX.to_owned(), &self.quotas)
        });
        if reflector.revision() == 0 {
            return self.read(namespace).await;
        }
        let quotas = self
            .quotas
            .quotas
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        Ok(quotas
            .get(namespace)
            .map(|names| names.values().cloned().collect())
            .unwrap_or_default())
    }

    /// The quotas of `namespace` as this replica's store holds them.
    async fn read(&self, namespace: &str) -> Result<Vec<Quota>, String> {
        let prefix = format!("{PREFIX}{namespace}/");
        let page = (self
            .storage
            .list(&prefix, None, 0, ReadConsistency::Any)
            .await)
            .map_err(|e| format!("error resolving quota: {e}"))?;
        (page.items.into_iter())
            .map(|item| {
                let json = StoredJson::from_stored(item.value).map_err(|e| e.to_string())?;
                let object = json.to_value().map_err(|e| e.to_string())?;
                Ok(Quota::from_object(&object))
            })
            .collect()
    }
}

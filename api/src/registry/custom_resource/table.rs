//! The table of custom resource stores one replica serves: rebuilt from the definitions a
//! [`Reflector`] hands over (in revision order, from this replica's own store), so it is
//! current with what the replica has applied, and every replica that applied the same
//! definitions serves the same kinds. Readers take a snapshot (one `Arc` clone) and never
//! wait for a rebuild.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::PoisonError;
use std::sync::RwLock;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;

use super::conversion::WebhookCalls;
use super::definition::Definition;
use super::definition::Settings;
use super::definition::definition;
use crate::config::DEFAULT_MAX_OBJECT_BYTES;
use crate::flavor::Flavor;
use crate::random::RandomSource;
use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::reflector::Reflector;
use crate::registry::ResourceType;
use crate::registry::Store;
use crate::storage::Storage;

/// How long a request for an unknown resource waits for the table's first listing after
/// start-up before it is answered 404.
const FIRST_SYNC_WAIT: Duration = Duration::from_secs(5);

/// One state of the table: the definitions by stored key and the stores they serve.
#[derive(Default)]
struct Table {
    definitions: BTreeMap<String, Definition>,
    /// The serving definitions' stores by (group, version, plural).
    stores: HashMap<(String, String, String), Arc<Store>>,
}

impl Table {
    fn index(&mut self) {
        self.stores = (self.definitions.values())
            .filter(|d| d.serving)
            .flat_map(|d| &d.stores)
            .map(|s| {
                let r = s.resource();
                (
                    (r.group.clone(), r.version.clone(), r.plural.clone()),
                    s.clone(),
                )
            })
            .collect();
    }
}

/// The custom resource stores of one replica, kept current with its definitions.
pub struct CustomResources {
    settings: Mutex<Settings>,
    table: RwLock<Arc<Table>>,
    /// Bumped after every change of the table (discovery and OpenAPI rebuild on a change).
    generation: AtomicU64,
    reflector: OnceLock<Reflector>,
}

impl CustomResources {
    /// An empty table whose stores will be built for `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        Self {
            settings: Mutex::new(Settings {
                flavor,
                max_object_bytes: DEFAULT_MAX_OBJECT_BYTES,
                random: RandomSource::from_os_entropy(),
                webhooks: None,
                admission: None,
            }),
            table: RwLock::default(),
            generation: AtomicU64::new(0),
            reflector: OnceLock::new(),
        }
    }

    fn settings(&self) -> std::sync::MutexGuard<'_, Settings> {
        self.settings.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores built from now on refuse objects larger than `limit` bytes.
    pub fn set_max_object_bytes(&self, limit: usize) {
        self.settings().max_object_bytes = limit;
    }

    /// Stores built from now on draw uids and generated names from `random`.
    pub fn set_random(&self, random: &RandomSource) {
        self.settings().random = random.clone();
    }

    /// Stores built from now on admit writes through `admission`.
    pub fn set_admission(&self, admission: Arc<crate::admission::Admission>) {
        self.settings().admission = Some(admission);
    }

    /// Definitions built from now on call their conversion webhooks with `calls`.
    pub fn set_webhooks(&self, calls: WebhookCalls) {
        self.settings().webhooks = Some(Arc::new(calls));
    }

    /// Starts following the definitions stored under `prefix` (on the current tokio
    /// runtime); a second call does nothing.
    pub fn follow(self: &Arc<Self>, storage: Arc<dyn Storage>, prefix: String) {
        self.reflector
            .get_or_init(|| Reflector::start(storage, prefix, self));
    }

    /// Waits (a bounded while) until the table has listed the definitions once, so a
    /// request that arrives right after start-up finds the kinds already defined.
    pub async fn first_sync(&self) {
        if let Some(reflector) = self.reflector.get()
            && reflector.revision() == 0
        {
            let _ = tokio::time::timeout(FIRST_SYNC_WAIT, reflector.wait_for(1)).await;
        }
    }

    fn snapshot(&self) -> Arc<Table> {
        self.table
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The store serving `plural` in `group`/`version`, if a definition serves it.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Store>> {
        let key = (group.to_owned(), version.to_owned(), plural.to_owned());
        self.snapshot().stores.get(&key).cloned()
    }

    /// The stores of the kinds discovery lists (those of established definitions): groups
    /// in alphabetical order, each group's versions by priority.
    pub fn served_stores(&self) -> Vec<Arc<Store>> {
        let table = self.snapshot();
        let mut stores: Vec<Arc<Store>> = (table.definitions.values())
            .filter(|d| d.established)
            .flat_map(|d| d.stores.iter().cloned())
            .collect();
        stores.sort_by(|a, b| {
            let (a, b) = (a.resource(), b.resource());
            (a.group.cmp(&b.group))
                .then_with(|| super::compare_versions(&a.version, &b.version))
                .then_with(|| a.plural.cmp(&b.plural))
        });
        stores
    }

    /// The resource types of [`CustomResources::served_stores`], in that order.
    pub fn served_types(&self) -> Vec<ResourceType> {
        (self.served_stores().iter())
            .map(|s| s.resource().clone())
            .collect()
    }

    /// A number that changes whenever the table does.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Replaces the table with `change` applied to a copy of it. The change (which compiles
    /// definitions) runs outside the lock: readers keep the current table meanwhile. The one
    /// writer is the reflector's task, so no change is lost between the copy and the swap.
    fn update(&self, change: impl FnOnce(&mut BTreeMap<String, Definition>, &Settings)) {
        let settings = self.settings().clone();
        let mut definitions = self.snapshot().definitions.clone();
        change(&mut definitions, &settings);
        let mut next = Table {
            definitions,
            stores: HashMap::new(),
        };
        next.index();
        *self.table.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(next);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

impl Cache for CustomResources {
    fn replace(&self, _prefix: &str, objects: Vec<(String, Arc<Value>)>) {
        self.update(|definitions, settings| {
            let previous = std::mem::take(definitions);
            for (key, crd) in objects {
                let built = definition(&crd, settings, previous.get(&key));
                definitions.insert(key, built);
            }
        });
    }

    fn apply(&self, _prefix: &str, events: Vec<CacheEvent>) {
        self.update(|definitions, settings| {
            for event in events {
                match event {
                    CacheEvent::Upsert { key, object } => {
                        let built = definition(&object, settings, definitions.get(&key));
                        definitions.insert(key, built);
                    }
                    CacheEvent::Delete { key } => {
                        definitions.remove(&key);
                    }
                }
            }
        });
    }
}

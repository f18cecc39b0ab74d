//! The webhook configurations of one kind on this replica, kept current by a reflector: every
//! webhook read (and its `matchConditions` compiled) once per stored version of its
//! configuration, in Kubernetes' order (configurations by name, webhooks by position).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::RwLock;

use serde_json::Value;

use super::Webhook;
use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::reflector::Reflector;
use crate::storage::Storage;

/// The most webhooks one configuration contributes (the rest are ignored: a stored object
/// cannot exceed the object size limit anyway).
const MAX_WEBHOOKS_PER_CONFIGURATION: usize = 10_000;

/// One configuration read: the resource version it was read at and its webhooks.
struct Read {
    resource_version: String,
    webhooks: Vec<Arc<Webhook>>,
}

#[derive(Default)]
struct State {
    /// By stored key, which sorts as the configuration names do (one prefix).
    configurations: BTreeMap<String, Read>,
    /// Every webhook, in order.
    all: Arc<[Arc<Webhook>]>,
}

impl State {
    fn rebuild(&mut self) {
        self.all = (self.configurations.values())
            .flat_map(|read| read.webhooks.iter().cloned())
            .collect();
    }

    fn upsert(&mut self, key: String, object: &Value) {
        let version = object
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if self
            .configurations
            .get(&key)
            .is_some_and(|r| r.resource_version == version && !version.is_empty())
        {
            return;
        }
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let webhooks = (object.get("webhooks").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .take(MAX_WEBHOOKS_PER_CONFIGURATION)
            .enumerate()
            .map(|(i, hook)| Arc::new(Webhook::parse(name, i, hook)))
            .collect();
        let read = Read {
            resource_version: version.to_owned(),
            webhooks,
        };
        self.configurations.insert(key, read);
    }
}

/// The webhooks of one configuration kind, current on this replica.
pub struct Configurations {
    state: RwLock<State>,
}

impl Configurations {
    /// Follows the configurations stored under `prefix` of `storage` (a reflector task on
    /// the current runtime, ending when the cache is dropped).
    pub fn follow(storage: Arc<dyn Storage>, prefix: &str) -> Arc<Self> {
        let cache = Arc::new(Self {
            state: RwLock::new(State::default()),
        });
        Reflector::start(storage, prefix.to_owned(), &cache);
        cache
    }

    /// Every webhook, in the order they are called: a lock taken for an `Arc` clone.
    pub fn webhooks(&self) -> Arc<[Arc<Webhook>]> {
        match self.state.read() {
            Ok(state) => state.all.clone(),
            Err(poisoned) => poisoned.into_inner().all.clone(),
        }
    }

    fn update(&self, change: impl FnOnce(&mut State)) {
        let mut state = match self.state.write() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        change(&mut state);
        state.rebuild();
    }
}

impl Cache for Configurations {
    fn replace(&self, _prefix: &str, objects: Vec<(String, Arc<Value>)>) {
        self.update(|state| {
            let mut old = std::mem::take(&mut state.configurations);
            for (key, object) in objects {
                if let Some(read) = old.remove(&key) {
                    state.configurations.insert(key.clone(), read);
                }
                state.upsert(key, &object);
            }
        });
    }

    fn apply(&self, _prefix: &str, events: Vec<CacheEvent>) {
        self.update(|state| {
            for event in events {
                match event {
                    CacheEvent::Upsert { key, object } => state.upsert(key, &object),
                    CacheEvent::Delete { key } => {
                        state.configurations.remove(&key);
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn configuration(name: &str, version: &str, hooks: &[&str]) -> Arc<Value> {
        let webhooks: Vec<Value> = hooks.iter().map(|h| json!({"name": h})).collect();
        Arc::new(json!({
            "metadata": {"name": name, "resourceVersion": version},
            "webhooks": webhooks,
        }))
    }

    fn names(cache: &Configurations) -> Vec<String> {
        cache.webhooks().iter().map(|h| h.name.clone()).collect()
    }

    fn empty() -> Configurations {
        Configurations {
            state: RwLock::new(State::default()),
        }
    }

    #[test]
    fn webhooks_are_ordered_by_configuration_name_then_position() {
        let cache = empty();
        cache.replace(
            "/p/",
            vec![
                ("/p/b".into(), configuration("b", "1", &["b1", "b0"])),
                ("/p/a".into(), configuration("a", "2", &["a0"])),
            ],
        );
        assert_eq!(names(&cache), ["a0", "b1", "b0"]);
        cache.apply(
            "/p/",
            vec![
                CacheEvent::Delete { key: "/p/a".into() },
                CacheEvent::Upsert {
                    key: "/p/c".into(),
                    object: configuration("c", "3", &["c0"]),
                },
            ],
        );
        assert_eq!(names(&cache), ["b1", "b0", "c0"]);
        assert_eq!(cache.webhooks()[2].uid, "c/0");
    }

    #[test]
    fn a_webhook_is_read_again_only_when_its_configuration_changed() {
        let cache = empty();
        cache.replace(
            "/p/",
            vec![("/p/a".into(), configuration("a", "1", &["x"]))],
        );
        let first = cache.webhooks()[0].clone();
        cache.replace(
            "/p/",
            vec![("/p/a".into(), configuration("a", "1", &["x"]))],
        );
        assert!(Arc::ptr_eq(&first, &cache.webhooks()[0]));
        cache.replace(
            "/p/",
            vec![("/p/a".into(), configuration("a", "2", &["x"]))],
        );
        assert!(!Arc::ptr_eq(&first, &cache.webhooks()[0]));
        cache.replace("/p/", Vec::new());
        assert!(cache.webhooks().is_empty());
    }
}

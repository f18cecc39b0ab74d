//! The policies and bindings of this replica, kept current by two reflectors: each policy is
//! compiled when its generation changes (never per request), and every change publishes a
//! new [`Snapshot`] that requests read without holding a lock.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::RwLock;

use serde_json::Value;

use super::binding::Binding;
use super::definition::CompiledPolicy;
use super::definition::PolicyBody;
use super::resources::ResourceTable;
use crate::flavor::Flavor;
use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::reflector::Reflector;
use crate::storage::Storage;

/// A policy with the bindings that name it.
#[derive(Debug)]
pub struct Hook<B> {
    /// The compiled policy.
    pub policy: Arc<CompiledPolicy<B>>,
    /// Its bindings, by name.
    pub bindings: Vec<Arc<Binding>>,
}

/// The policies in force at one moment, by name.
#[derive(Debug)]
pub struct Snapshot<B> {
    /// Every policy, with its bindings.
    pub hooks: Vec<Hook<B>>,
}

impl<B> Default for Snapshot<B> {
    fn default() -> Self {
        Self { hooks: Vec::new() }
    }
}

struct State<B> {
    policies: BTreeMap<String, Arc<CompiledPolicy<B>>>,
    bindings: BTreeMap<String, Arc<Binding>>,
}

impl<B> Default for State<B> {
    fn default() -> Self {
        Self {
            policies: BTreeMap::new(),
            bindings: BTreeMap::new(),
        }
    }
}

/// The policies (of one kind, `B` its body) and their bindings, compiled.
pub struct PolicyCache<B> {
    policies_prefix: String,
    state: Mutex<State<B>>,
    snapshot: RwLock<Arc<Snapshot<B>>>,
}

impl<B: PolicyBody> PolicyCache<B> {
    /// A cache following the policies under `policies_prefix` and the bindings under
    /// `bindings_prefix` of `storage`.
    fn start(
        storage: &Arc<dyn Storage>,
        policies_prefix: String,
        bindings_prefix: String,
    ) -> Arc<Self> {
        let cache = Arc::new(Self {
            policies_prefix: policies_prefix.clone(),
            state: Mutex::default(),
            snapshot: RwLock::default(),
        });
        Reflector::start(storage.clone(), policies_prefix, &cache);
        Reflector::start(storage.clone(), bindings_prefix, &cache);
        cache
    }

    /// A cache following the `kind` (`validating`, `mutating`) admission policies and their
    /// bindings `resources` serves in `flavor`'s admissionregistration group (`None` when
    /// it serves neither).
    pub fn follow(
        storage: &Arc<dyn Storage>,
        resources: &ResourceTable,
        flavor: Flavor,
        kind: &str,
    ) -> Option<Arc<Self>> {
        let group = format!("admissionregistration.{}", flavor.group_domain());
        let policies = resources.by_resource(&group, "v1", &format!("{kind}admissionpolicies"))?;
        let bindings =
            resources.by_resource(&group, "v1", &format!("{kind}admissionpolicybindings"))?;
        Some(Self::start(
            storage,
            policies.key_prefix(),
            bindings.key_prefix(),
        ))
    }

    /// The policies in force now.
    pub fn snapshot(&self) -> Arc<Snapshot<B>> {
        self.snapshot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn upsert(&self, state: &mut State<B>, prefix: &str, key: String, object: &Value) {
        if prefix == self.policies_prefix {
            let uid = super::definition::meta(object, "uid")
                .as_str()
                .unwrap_or_default();
            let generation = super::definition::meta(object, "generation").as_i64();
            let current = state.policies.get(&key);
            if current.is_some_and(|p| p.version.0 == uid && Some(p.version.1) == generation) {
                return;
            }
            state
                .policies
                .insert(key, Arc::new(CompiledPolicy::compile(object)));
        } else {
            state.bindings.insert(key, Arc::new(Binding::read(object)));
        }
    }

    fn publish(&self, state: &State<B>) {
        let mut by_policy: BTreeMap<&str, Vec<Arc<Binding>>> = BTreeMap::new();
        for binding in state.bindings.values() {
            by_policy
                .entry(binding.policy.as_str())
                .or_default()
                .push(binding.clone());
        }
        let hooks = (state.policies.values())
            .map(|policy| Hook {
                policy: policy.clone(),
                bindings: by_policy.remove(policy.name.as_str()).unwrap_or_default(),
            })
            .collect();
        *self
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(Snapshot { hooks });
    }
}

impl<B: PolicyBody> Cache for PolicyCache<B> {
    fn replace(&self, prefix: &str, objects: Vec<(String, Arc<Value>)>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let kept: BTreeSet<String> = objects.iter().map(|(k, _)| k.clone()).collect();
        if prefix == self.policies_prefix {
            state.policies.retain(|k, _| kept.contains(k));
        } else {
            state.bindings.clear();
        }
        for (key, object) in objects {
            self.upsert(&mut state, prefix, key, &object);
        }
        self.publish(&state);
    }

    fn apply(&self, prefix: &str, events: Vec<CacheEvent>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for event in events {
            match event {
                CacheEvent::Upsert { key, object } => self.upsert(&mut state, prefix, key, &object),
                CacheEvent::Delete { key } => {
                    state.policies.remove(&key);
                    state.bindings.remove(&key);
                }
            }
        }
        self.publish(&state);
    }
}

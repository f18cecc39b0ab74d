//! Tests of the API's [`Reflector`] over the real storage adapter: a cache fed from a prefix
//! holds what the store holds, change by change, and the revision it reports is in it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;

use apiary_api::reflector::Cache;
use apiary_api::reflector::CacheEvent;
use apiary_api::reflector::Reflector;
use apiary_api::registry::StoredJson;
use apiary_api::storage::Storage;
use serde_json::Value;
use serde_json::json;

use super::ReplicaStorage;
use crate::testing::LocalReplica;

/// The names a cache holds, by key.
#[derive(Default)]
struct Names(Mutex<BTreeMap<String, String>>);

impl Names {
    fn snapshot(&self) -> BTreeMap<String, String> {
        self.0.lock().unwrap().clone()
    }
}

fn name(object: &Value) -> String {
    object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

impl Cache for Names {
    fn replace(&self, _prefix: &str, objects: Vec<(String, Arc<Value>)>) {
        let mut names = self.0.lock().unwrap();
        names.clear();
        names.extend(objects.into_iter().map(|(k, o)| (k, name(&o))));
    }

    fn apply(&self, _prefix: &str, events: Vec<CacheEvent>) {
        let mut names = self.0.lock().unwrap();
        for event in events {
            match event {
                CacheEvent::Upsert { key, object } => names.insert(key, name(&object)),
                CacheEvent::Delete { key } => names.remove(&key),
            };
        }
    }
}

fn object(name: &str) -> bytes::Bytes {
    StoredJson::to_stored(&json!({"metadata": {"name": name}})).unwrap()
}

// A cache sees the objects listed at start, then every create, update and delete under its
// prefix (and nothing outside it) once the reflector reports the write's revision.
#[tokio::test]
async fn a_cache_follows_its_prefix_change_by_change() {
    let storage: Arc<dyn Storage> =
        Arc::new(ReplicaStorage::new(Arc::new(LocalReplica::default())));
    storage.create("/r/roles/a", object("a")).await.unwrap();
    storage.create("/s/other", object("other")).await.unwrap();
    let names = Arc::new(Names::default());
    let reflector = Reflector::start(storage.clone(), "/r/".into(), &names);
    let listed = storage.create("/r/roles/b", object("b")).await.unwrap();
    reflector.wait_for(listed.mod_revision).await;
    assert_eq!(
        names.snapshot(),
        BTreeMap::from([
            ("/r/roles/a".into(), "a".into()),
            ("/r/roles/b".into(), "b".into())
        ])
    );
    let updated = (storage.update("/r/roles/a", object("a2"), 2).await).unwrap();
    let deleted = storage.delete("/r/roles/b", None).await.unwrap();
    storage.create("/s/more", object("more")).await.unwrap();
    reflector
        .wait_for(deleted.mod_revision.max(updated.mod_revision))
        .await;
    assert_eq!(
        names.snapshot(),
        BTreeMap::from([("/r/roles/a".into(), "a2".into())])
    );
    assert!(reflector.revision() >= deleted.mod_revision);
}

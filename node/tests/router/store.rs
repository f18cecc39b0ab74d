//! The generic store with a strategy of our own: generation, bootstrap idempotence.

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use chrono::TimeZone;
use chrono::Utc;
use serde_json::Value;
use serde_json::json;

use super::Backend;
use super::Inspect;
use super::empty_backend;
use apiary_api::Flavor;
use apiary_api::RandomSource;
use apiary_api::SystemClock;
use apiary_api::bootstrap::ensure_system_namespaces;
use apiary_api::error::ApiError;
use apiary_api::registry::CRUD_VERBS;
use apiary_api::registry::ResourceType;
use apiary_api::registry::Scope;
use apiary_api::registry::StorageLocation;
use apiary_api::registry::Store;
use apiary_api::registry::Strategy;
use apiary_api::registry::WriteOptions;
use apiary_api::registry::Written;
use apiary_api::request::ListOptions;
use apiary_api::storage::Guard;
use apiary_api::storage::ListPage;
use apiary_api::storage::ReadConsistency;
use apiary_api::storage::Storage;
use apiary_api::storage::StorageError;
use apiary_api::storage::StoredObject;

/// A kind with a spec and a status, as a custom resource would be.
struct Widget;

impl Strategy for Widget {}

fn widgets() -> Store {
    Store::new(
        ResourceType {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            short_names: vec![],
            categories: vec![],
            scope: Scope::Cluster,
            verbs: CRUD_VERBS.iter().map(|v| (*v).to_owned()).collect(),
            subresources: vec![],
            storage: StorageLocation {
                key_group: "example.com".into(),
                plural: "widgets".into(),
                group: "example.com".into(),
                version: "v1".into(),
                kind: "Widget".into(),
            },
            returns_deleted_object: false,
        },
        Box::new(Widget),
    )
}

fn parse(bytes: Vec<u8>) -> Value {
    serde_json::from_slice(&bytes).expect("json")
}

fn parse_written(written: Written) -> Value {
    parse(written.body)
}

/// Replaces the widget `w` with `obj` (a PUT without subresource), answering the stored object.
async fn update_w(store: &Store, storage: &dyn Storage, obj: &Value) -> Result<Value, ApiError> {
    let body = obj.to_string();
    let updated = store
        .update(
            storage,
            "",
            "w",
            "",
            body.as_bytes(),
            WriteOptions::default(),
        )
        .await?;
    Ok(parse_written(updated))
}

// R-RES-025: `creationTimestamp` is set on create and clients cannot change it.
#[tokio::test]
async fn generation_counts_changes_outside_metadata_and_status() {
    let storage = empty_backend();
    let store = widgets();
    let now = Utc
        .with_ymd_and_hms(2026, 1, 2, 3, 4, 5)
        .single()
        .expect("time");
    let body = json!({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1}});
    let w = parse_written(
        store
            .create(
                &storage,
                "",
                body.to_string().as_bytes(),
                now,
                WriteOptions::default(),
            )
            .await
            .expect("create"),
    );
    assert_eq!(w["metadata"]["generation"], 1);
    assert_eq!(w["metadata"]["creationTimestamp"], "2026-01-02T03:04:05Z");

    let mut labelled = w.clone();
    labelled["metadata"]["labels"] = json!({"a":"b"});
    labelled["status"] = json!({"ok":true});
    let l = update_w(&store, &storage, &labelled).await.expect("update");
    assert_eq!(
        l["metadata"]["generation"], 1,
        "metadata and status do not count"
    );

    let mut resized = l.clone();
    resized["spec"]["size"] = 2.into();
    resized["metadata"]["generation"] = 40.into();
    resized["metadata"]["creationTimestamp"] = "1999-01-01T00:00:00Z".into();
    let r = update_w(&store, &storage, &resized).await.expect("update");
    assert_eq!(
        r["metadata"]["generation"], 2,
        "clients cannot set the generation"
    );
    assert_eq!(r["metadata"]["creationTimestamp"], "2026-01-02T03:04:05Z");

    let mut other_uid = r.clone();
    other_uid["metadata"]["uid"] = "not-the-uid".into();
    let err = update_w(&store, &storage, &other_uid).await;
    assert!(matches!(err, Err(ApiError::Invalid { .. })), "{err:?}");

    let read = parse(
        store
            .get(&storage, "", "w", ReadConsistency::Linearizable)
            .await
            .expect("get"),
    );
    assert_eq!(read, r);
    let listed = parse(
        store
            .list(&storage, None, &ListOptions::default())
            .await
            .expect("list"),
    );
    assert_eq!(listed["kind"], "WidgetList");
    assert_eq!(listed["apiVersion"], "example.com/v1");
    assert_eq!(listed["items"][0], r);
}

#[tokio::test]
async fn bootstrap_is_idempotent_and_uses_the_create_path() {
    let storage = empty_backend();
    ensure_system_namespaces(
        &storage,
        Flavor::Platform,
        &SystemClock,
        &RandomSource::seeded(0),
    )
    .await
    .expect("first");
    let keys = storage.keys().await;
    assert_eq!(
        keys,
        vec![
            "/registry/core/namespaces/default",
            "/registry/core/namespaces/platform-node-lease",
            "/registry/core/namespaces/platform-public",
            "/registry/core/namespaces/platform-system",
        ]
    );
    let revision = storage.revision().await;
    let ns = apiary_api::registry::Registry::builtin(Flavor::Platform);
    let store = ns.namespaces().expect("namespaces");
    let before = platform_system(store, &storage).await;
    assert!(before["metadata"]["uid"].is_string());
    assert!(before["metadata"]["creationTimestamp"].is_string());
    ensure_system_namespaces(
        &storage,
        Flavor::Platform,
        &SystemClock,
        &RandomSource::seeded(0),
    )
    .await
    .expect("second");
    assert_eq!(storage.keys().await, keys);
    let after = platform_system(store, &storage).await;
    assert_eq!(after, before, "existing namespaces are left alone");
    assert!(storage.revision().await >= revision);
}

/// The namespace `platform-system`, read through the namespaces store.
async fn platform_system(namespaces: &Store, storage: &dyn Storage) -> Value {
    let read = namespaces
        .get(
            storage,
            "",
            "platform-system",
            ReadConsistency::Linearizable,
        )
        .await
        .expect("get");
    parse(read)
}

/// A store whose first writes lose races: creates find their key taken, updates find the
/// object moved on (as concurrent writers on other replicas would make them).
pub(super) struct Racing {
    pub(super) inner: Backend,
    pub(super) lost_creates: AtomicUsize,
    pub(super) lost_updates: AtomicUsize,
}

fn lose(counter: &AtomicUsize) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

#[async_trait::async_trait]
impl Storage for Racing {
    async fn create(&self, key: &str, value: Bytes) -> Result<StoredObject, StorageError> {
        if lose(&self.lost_creates) {
            return Err(StorageError::AlreadyExists { key: key.into() });
        }
        self.inner.create(key, value).await
    }
    async fn create_guarded(
        &self,
        key: &str,
        value: Bytes,
        guard: &Guard,
    ) -> Result<StoredObject, StorageError> {
        if lose(&self.lost_creates) {
            return Err(StorageError::AlreadyExists { key: key.into() });
        }
        self.inner.create_guarded(key, value, guard).await
    }
    async fn get(
        &self,
        key: &str,
        c: ReadConsistency,
    ) -> Result<Option<StoredObject>, StorageError> {
        self.inner.get(key, c).await
    }
    async fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
        c: ReadConsistency,
    ) -> Result<ListPage, StorageError> {
        self.inner.list(prefix, start_after, limit, c).await
    }
    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: u64,
    ) -> Result<StoredObject, StorageError> {
        if lose(&self.lost_updates) {
            return Err(StorageError::Conflict {
                key: key.into(),
                expected,
                actual: expected + 1,
            });
        }
        self.inner.update(key, value, expected).await
    }
    async fn delete(&self, key: &str, expected: Option<u64>) -> Result<StoredObject, StorageError> {
        self.inner.delete(key, expected).await
    }
    async fn watch(
        &self,
        prefix: &str,
        after: u64,
    ) -> Result<Box<dyn apiary_api::storage::WatchStream>, StorageError> {
        self.inner.watch(prefix, after).await
    }
}

// R-RES-021: a generated name that is taken is drawn again; a given name is not.
#[tokio::test]
async fn generated_names_are_redrawn_after_a_collision() {
    let storage = Racing {
        inner: empty_backend(),
        lost_creates: 2.into(),
        lost_updates: 0.into(),
    };
    let store = widgets();
    let now = Utc::now();
    let body = json!({"metadata":{"generateName":"w-"},"spec":{}}).to_string();
    let w = parse_written(
        store
            .create(&storage, "", body.as_bytes(), now, WriteOptions::default())
            .await
            .expect("third draw wins"),
    );
    assert!(
        w["metadata"]["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("w-"))
    );

    storage.lost_creates.store(1, Ordering::SeqCst);
    let named = json!({"metadata":{"name":"fixed"}}).to_string();
    let err = store
        .create(&storage, "", named.as_bytes(), now, WriteOptions::default())
        .await;
    assert!(
        matches!(err, Err(ApiError::AlreadyExists { .. })),
        "{err:?}"
    );
}

// R-RES-197 (CHECKLIST table): an unconditional update retries a lost race; a conditional
// one reports the conflict.
#[tokio::test]
async fn unconditional_updates_retry_lost_races() {
    let storage = Racing {
        inner: empty_backend(),
        lost_creates: 0.into(),
        lost_updates: 0.into(),
    };
    let store = widgets();
    let body = json!({"metadata":{"name":"w"},"spec":{"n":1}}).to_string();
    let w = parse_written(
        store
            .create(
                &storage,
                "",
                body.as_bytes(),
                Utc::now(),
                WriteOptions::default(),
            )
            .await
            .expect("create"),
    );
    storage.lost_updates.store(2, Ordering::SeqCst);
    let blind = json!({"metadata":{"name":"w"},"spec":{"n":2}});
    let u = update_w(&store, &storage, &blind).await.expect("retried");
    assert_eq!(u["spec"]["n"], 2);

    storage.lost_updates.store(1, Ordering::SeqCst);
    let mut conditional = u.clone();
    conditional["spec"]["n"] = 3.into();
    let err = update_w(&store, &storage, &conditional).await;
    assert!(matches!(err, Err(ApiError::Conflict { .. })), "{err:?}");
    assert_ne!(
        w["metadata"]["resourceVersion"],
        u["metadata"]["resourceVersion"]
    );
}

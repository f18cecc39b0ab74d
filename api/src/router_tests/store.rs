//! The generic store with a strategy of our own: generation, bootstrap idempotence.

use chrono::TimeZone;
use chrono::Utc;
use serde_json::Value;
use serde_json::json;

use super::mem_storage::MemStorage;
use crate::Flavor;
use crate::bootstrap::ensure_system_namespaces;
use crate::registry::CRUD_VERBS;
use crate::registry::ResourceType;
use crate::registry::Scope;
use crate::registry::Store;
use crate::registry::Strategy;
use crate::request::Selectors;
use crate::storage::ReadConsistency;

/// A kind with a spec and a status, as a custom resource would be.
struct Widget;

impl Strategy for Widget {
    fn decode(&self, body: &[u8]) -> Result<Value, serde_json::Error> {
        serde_json::from_slice(body)
    }
}

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
            scope: Scope::Cluster,
            verbs: CRUD_VERBS.iter().map(|v| (*v).to_owned()).collect(),
            subresources: vec![],
        },
        Box::new(Widget),
    )
}

fn parse(bytes: Vec<u8>) -> Value {
    serde_json::from_slice(&bytes).expect("json")
}

#[tokio::test]
async fn generation_counts_changes_outside_metadata_and_status() {
    let storage = MemStorage::default();
    let store = widgets();
    let now = Utc
        .with_ymd_and_hms(2026, 1, 2, 3, 4, 5)
        .single()
        .expect("time");
    let body = json!({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1}});
    let w = parse(
        store
            .create(&storage, "", body.to_string().as_bytes(), now)
            .await
            .expect("create"),
    );
    assert_eq!(w["metadata"]["generation"], 1);
    assert_eq!(w["metadata"]["creationTimestamp"], "2026-01-02T03:04:05Z");

    let mut labelled = w.clone();
    labelled["metadata"]["labels"] = json!({"a":"b"});
    labelled["status"] = json!({"ok":true});
    let l = parse(
        store
            .update(&storage, "", "w", "", labelled.to_string().as_bytes())
            .await
            .expect("update"),
    );
    assert_eq!(
        l["metadata"]["generation"], 1,
        "metadata and status do not count"
    );

    let mut resized = l.clone();
    resized["spec"]["size"] = 2.into();
    resized["metadata"]["generation"] = 40.into();
    resized["metadata"]["creationTimestamp"] = "1999-01-01T00:00:00Z".into();
    let r = parse(
        store
            .update(&storage, "", "w", "", resized.to_string().as_bytes())
            .await
            .expect("update"),
    );
    assert_eq!(
        r["metadata"]["generation"], 2,
        "clients cannot set the generation"
    );
    assert_eq!(r["metadata"]["creationTimestamp"], "2026-01-02T03:04:05Z");

    let mut other_uid = r.clone();
    other_uid["metadata"]["uid"] = "not-the-uid".into();
    let err = store
        .update(&storage, "", "w", "", other_uid.to_string().as_bytes())
        .await;
    assert!(
        matches!(err, Err(crate::error::ApiError::Invalid { .. })),
        "{err:?}"
    );

    let read = parse(
        store
            .get(&storage, "", "w", ReadConsistency::Linearizable)
            .await
            .expect("get"),
    );
    assert_eq!(read, r);
    let listed = parse(
        store
            .list(&storage, None, &Selectors::default(), ReadConsistency::Any)
            .await
            .expect("list"),
    );
    assert_eq!(listed["kind"], "WidgetList");
    assert_eq!(listed["apiVersion"], "example.com/v1");
    assert_eq!(listed["items"][0], r);
}

#[tokio::test]
async fn bootstrap_is_idempotent_and_uses_the_create_path() {
    let storage = MemStorage::default();
    ensure_system_namespaces(&storage, Flavor::Platform)
        .await
        .expect("first");
    let keys = storage.keys();
    assert_eq!(
        keys,
        vec![
            "/registry/core/namespaces/default",
            "/registry/core/namespaces/platform-node-lease",
            "/registry/core/namespaces/platform-public",
            "/registry/core/namespaces/platform-system",
        ]
    );
    let revision = storage.revision();
    let ns = crate::registry::Registry::builtin(Flavor::Platform);
    let store = ns.namespaces().expect("namespaces");
    let before = parse(
        store
            .get(
                &storage,
                "",
                "platform-system",
                ReadConsistency::Linearizable,
            )
            .await
            .expect("get"),
    );
    assert!(before["metadata"]["uid"].is_string());
    assert!(before["metadata"]["creationTimestamp"].is_string());
    ensure_system_namespaces(&storage, Flavor::Platform)
        .await
        .expect("second");
    assert_eq!(storage.keys(), keys);
    let after = parse(
        store
            .get(
                &storage,
                "",
                "platform-system",
                ReadConsistency::Linearizable,
            )
            .await
            .expect("get"),
    );
    assert_eq!(after, before, "existing namespaces are left alone");
    assert!(storage.revision() >= revision);
}

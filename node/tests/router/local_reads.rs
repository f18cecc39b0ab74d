//! One proposal per write: writes start from the replica's own state, and everything they
//! would answer without writing is decided again from a quorum read. Two routers share one
//! store, as two replicas do; one of them lags, serving its own ("Any") reads from an older
//! revision until it applies a write of its own, as a follower behind the leader does.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use apiary_api::ApiConfig;
use apiary_api::Flavor;
use apiary_api::storage::Guard;
use apiary_api::storage::ListPage;
use apiary_api::storage::Revision;
use apiary_api::storage::StorageError;
use apiary_api::storage::StoredObject;
use bytes::Bytes;
use http::StatusCode;
use serde_json::json;

use super::*;

/// A replica behind the store it shares: with `frozen` set, its own reads see the store as it
/// was at that revision, until one of its writes comes back (a replica answers a write only
/// once it has applied it). It counts its quorum reads and its proposals, and can have another
/// replica delete a namespace just before its next guarded create is proposed.
struct Lagging {
    inner: Arc<Backend>,
    frozen: AtomicU64,
    quorum_reads: AtomicUsize,
    proposals: AtomicUsize,
    delete_before_create: Mutex<Option<(Router, String)>>,
}

impl Lagging {
    fn new(inner: Arc<Backend>) -> Self {
        Self {
            inner,
            frozen: AtomicU64::new(0),
            quorum_reads: AtomicUsize::new(0),
            proposals: AtomicUsize::new(0),
            delete_before_create: Mutex::new(None),
        }
    }

    /// From now on, this replica's own state stays as the store is now.
    async fn freeze(&self) {
        let now = self.inner.revision().await;
        self.frozen.store(now, Ordering::SeqCst);
    }

    /// A write came back: this replica has applied everything up to it.
    fn caught_up<T>(&self, result: Result<T, StorageError>) -> Result<T, StorageError> {
        self.frozen.store(0, Ordering::SeqCst);
        self.proposals.fetch_add(1, Ordering::SeqCst);
        result
    }

    fn counts(&self) -> (usize, usize) {
        (
            self.quorum_reads.load(Ordering::SeqCst),
            self.proposals.load(Ordering::SeqCst),
        )
    }

    fn own_view(&self, consistency: ReadConsistency) -> ReadConsistency {
        match (consistency, self.frozen.load(Ordering::SeqCst)) {
            (ReadConsistency::Linearizable, _) => {
                self.quorum_reads.fetch_add(1, Ordering::SeqCst);
                consistency
            }
            (ReadConsistency::Any, frozen) if frozen > 0 => ReadConsistency::Exact(frozen),
            _ => consistency,
        }
    }
}

#[async_trait::async_trait]
impl Storage for Lagging {
    async fn create(&self, key: &str, value: Bytes) -> Result<StoredObject, StorageError> {
        let created = self.inner.create(key, value).await;
        self.caught_up(created)
    }

    async fn create_guarded(
        &self,
        key: &str,
        value: Bytes,
        guard: &Guard,
    ) -> Result<StoredObject, StorageError> {
        let racing = self.delete_before_create.lock().expect("lock").take();
        if let Some((elsewhere, namespace)) = racing {
            let deleted = admin_call(&elsewhere, "DELETE", &namespace, None).await;
            assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
        }
        let created = self.inner.create_guarded(key, value, guard).await;
        self.caught_up(created)
    }

    async fn get(
        &self,
        key: &str,
        consistency: ReadConsistency,
    ) -> Result<Option<StoredObject>, StorageError> {
        self.inner.get(key, self.own_view(consistency)).await
    }

    async fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
        consistency: ReadConsistency,
    ) -> Result<ListPage, StorageError> {
        let consistency = self.own_view(consistency);
        self.inner
            .list(prefix, start_after, limit, consistency)
            .await
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> Result<StoredObject, StorageError> {
        let updated = self.inner.update(key, value, expected).await;
        self.caught_up(updated)
    }

    async fn watch(
        &self,
        prefix: &str,
        after: Revision,
    ) -> Result<Box<dyn WatchStream>, StorageError> {
        self.inner.watch(prefix, after).await
    }

    async fn delete(
        &self,
        key: &str,
        expected: Option<Revision>,
    ) -> Result<StoredObject, StorageError> {
        let deleted = self.inner.delete(key, expected).await;
        self.caught_up(deleted)
    }
}

/// Two routers over one store: an up-to-date replica, and a lagging one.
async fn two_replicas() -> (Router, Router, Arc<Lagging>) {
    let (inner, _) = backend_in(Flavor::Kubernetes).await;
    let config = || ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    let lagging = Arc::new(Lagging::new(inner.clone()));
    let current = apiary_api::router(inner, config());
    let behind = apiary_api::router(lagging.clone(), config());
    (current, behind, lagging)
}

const CM: &str = "/api/v1/namespaces/default/configmaps";

fn configmap(name: &str, data: Value, resource_version: Option<&str>) -> String {
    let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name}, "data": data});
    if let Some(rv) = resource_version {
        obj["metadata"]["resourceVersion"] = rv.into();
    }
    obj.to_string()
}

fn rv(obj: &Value) -> String {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .expect("resourceVersion")
        .to_owned()
}

// R-RES-087, R-RES-088, R-RES-090, R-RES-062: on an up-to-date replica, a create, an update,
// a patch and a delete each make exactly one proposal and no quorum read before it.
#[tokio::test]
async fn a_write_is_one_proposal_without_a_quorum_read() {
    let (_, app, replica) = two_replicas().await;
    let before = replica.counts();
    let made = created(&app, CM, &configmap("one", json!({"a": "1"}), None)).await;
    assert_eq!(replica.counts(), (before.0, before.1 + 1), "create");

    let path = format!("{CM}/one");
    let body = configmap("one", json!({"a": "2"}), Some(&rv(&made)));
    let put = admin_call(&app, "PUT", &path, Some(&body)).await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.text());
    assert_eq!(replica.counts(), (before.0, before.1 + 2), "update");

    let patch = r#"{"data":{"b":"3"}}"#;
    let patched = send_as(&app, "PATCH", &path, "application/merge-patch+json", patch).await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.text());
    assert_eq!(patched.json()["data"], json!({"a": "2", "b": "3"}));
    assert_eq!(replica.counts(), (before.0, before.1 + 3), "patch");

    let deleted = admin_call(&app, "DELETE", &path, None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    assert_eq!(replica.counts(), (before.0, before.1 + 4), "delete");
}

// R-RES-069, R-RES-070: a PUT carrying the resourceVersion another replica answered succeeds
// on a replica that has not applied it yet, and a PUT carrying a stale one is 409 there too.
#[tokio::test]
async fn preconditions_are_judged_against_the_current_object_not_the_lagging_copy() {
    let (current, behind, replica) = two_replicas().await;
    let made = created(&current, CM, &configmap("p", json!({"v": "1"}), None)).await;
    replica.freeze().await;
    let path = format!("{CM}/p");
    let body = configmap("p", json!({"v": "2"}), Some(&rv(&made)));
    let moved = admin_call(&current, "PUT", &path, Some(&body)).await.json();

    let stale = configmap("p", json!({"v": "stale"}), Some(&rv(&made)));
    let refused = admin_call(&behind, "PUT", &path, Some(&stale)).await;
    assert_status(&refused, 409, "Conflict");

    replica.freeze().await;
    let body = configmap("p", json!({"v": "3"}), Some(&rv(&moved)));
    let moved_again = admin_call(&current, "PUT", &path, Some(&body)).await.json();
    let fresh = configmap("p", json!({"v": "4"}), Some(&rv(&moved_again)));
    let updated = admin_call(&behind, "PUT", &path, Some(&fresh)).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());
    assert_eq!(fetched(&current, &path).await["data"], json!({"v": "4"}));
}

// R-RES-088, R-RES-090: an unconditional update that would change nothing on the lagging copy
// still writes what it was sent, and a patch applies to the current object.
#[tokio::test]
async fn writes_without_preconditions_apply_to_the_current_object() {
    let (current, behind, replica) = two_replicas().await;
    created(&current, CM, &configmap("u", json!({"v": "1"}), None)).await;
    replica.freeze().await;
    let path = format!("{CM}/u");
    let two = configmap("u", json!({"v": "2"}), None);
    admin_call(&current, "PUT", &path, Some(&two)).await;

    let one = configmap("u", json!({"v": "1"}), None);
    let reverted = admin_call(&behind, "PUT", &path, Some(&one)).await;
    assert_eq!(reverted.status, StatusCode::OK, "{}", reverted.text());
    assert_eq!(fetched(&current, &path).await["data"], json!({"v": "1"}));

    replica.freeze().await;
    admin_call(&current, "PUT", &path, Some(&two)).await;
    let patch = r#"{"data":{"w":"x"}}"#;
    let patched = send_as(
        &behind,
        "PATCH",
        &path,
        "application/merge-patch+json",
        patch,
    )
    .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.text());
    assert_eq!(patched.json()["data"], json!({"v": "2", "w": "x"}));
}

// R-RES-062, R-RES-088: an object this replica has not applied yet is deleted and updated,
// not answered 404.
#[tokio::test]
async fn objects_created_elsewhere_are_found_by_writes() {
    let (current, behind, replica) = two_replicas().await;
    replica.freeze().await;
    created(&current, CM, &configmap("new", json!({"v": "1"}), None)).await;
    created(&current, CM, &configmap("newer", json!({"v": "1"}), None)).await;

    let put = configmap("newer", json!({"v": "2"}), None);
    let updated = admin_call(&behind, "PUT", &format!("{CM}/newer"), Some(&put)).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());

    replica.freeze().await;
    let deleted = admin_call(&behind, "DELETE", &format!("{CM}/new"), None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    let gone = admin_call(&current, "GET", &format!("{CM}/new"), None).await;
    assert_status(&gone, 404, "NotFound");

    let missing = admin_call(&behind, "DELETE", &format!("{CM}/never"), None).await;
    assert_status(&missing, 404, "NotFound");
}

/// POSTs a ConfigMap into `namespace` through `app`, which must refuse it as terminating;
/// nothing is stored.
async fn refused_as_terminating(app: &Router, current: &Router, namespace: &str) {
    let path = format!("/api/v1/namespaces/{namespace}/configmaps");
    let refused = admin_call(app, "POST", &path, Some(&cm("late"))).await;
    let status = assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "NamespaceTerminating"
    );
    let stored = admin_call(current, "GET", &format!("{path}/late"), None).await;
    assert_status(&stored, 404, "NotFound");
}

// No CHECKLIST ID (Kubernetes' NamespaceLifecycle admission): a replica that still sees a
// namespace open refuses a create in it once it is terminating, and a namespace that starts
// terminating while a create is in flight fails that create's transaction; a namespace only
// another replica has applied yet takes creates.
#[tokio::test]
async fn a_create_never_lands_in_a_namespace_that_started_terminating() {
    let (current, behind, replica) = two_replicas().await;
    let namespaces = "/api/v1/namespaces";
    created(&current, namespaces, r#"{"metadata":{"name":"closing"}}"#).await;
    replica.freeze().await;
    let deleting = admin_call(&current, "DELETE", "/api/v1/namespaces/closing", None).await;
    assert_eq!(deleting.status, StatusCode::OK, "{}", deleting.text());
    refused_as_terminating(&behind, &current, "closing").await;

    created(&current, namespaces, r#"{"metadata":{"name":"racing"}}"#).await;
    *replica.delete_before_create.lock().expect("lock") =
        Some((current.clone(), "/api/v1/namespaces/racing".to_owned()));
    refused_as_terminating(&behind, &current, "racing").await;
    let raced = replica.delete_before_create.lock().expect("lock").take();
    assert!(
        raced.is_none(),
        "the create was proposed, and lost to the namespace's change"
    );

    replica.freeze().await;
    created(&current, namespaces, r#"{"metadata":{"name":"fresh"}}"#).await;
    let path = "/api/v1/namespaces/fresh/configmaps";
    created(&behind, path, &cm("first")).await;
}

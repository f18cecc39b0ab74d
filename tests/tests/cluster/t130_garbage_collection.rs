//! The garbage collector on a real 3-replica cluster: owner chains three deep deleted with
//! each propagation policy (Background, Foreground, Orphan) and with orphanDependents
//! true/false; dangling and cross-namespace references; a cluster-scoped dependent naming a
//! namespaced owner reported with an `OwnerRefInvalidNamespace` Event; and a foreground
//! deletion half done when the leader is killed, finished by the next leader, as a watch
//! shows it.

use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HttpClient;
use apiary_tests::objects;
use apiary_tests::watch_stream::EventStream;
use http::Method;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;
use tokio::time::Instant;

/// How long the collector may take to converge after a change.
const CONVERGE: Duration = Duration::from_secs(40);

const NS: &str = "default";

fn path(kind: &str, namespace: &str, name: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/{kind}/{name}")
}

/// An owner reference to `owner` (a ConfigMap or Secret as read).
fn reference(owner: &Value, block: bool) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "blockOwnerDeletion": block,
    })
}

/// Creates the `kind` (configmaps or secrets) `name` in `namespace` with `metadata` merged
/// in; the created object.
async fn create(
    client: &HttpClient,
    kind: &str,
    namespace: &str,
    name: &str,
    meta: Value,
) -> Value {
    let kind_name = if kind == "configmaps" {
        "ConfigMap"
    } else {
        "Secret"
    };
    let mut metadata = json!({"name": name});
    for (k, v) in meta.as_object().cloned().unwrap_or_default() {
        metadata[k] = v;
    }
    let body = json!({"apiVersion": "v1", "kind": kind_name, "metadata": metadata});
    let collection = format!("/api/v1/namespaces/{namespace}/{kind}");
    let reply = client
        .post(&collection, &body)
        .await
        .expect("the replica answers");
    assert_eq!(
        reply.status,
        StatusCode::CREATED,
        "create {name}: {}",
        reply.text()
    );
    let mut created = reply.json(name).expect("a JSON object");
    created["kind"] = json!(kind_name);
    created
}

async fn get(client: &HttpClient, path: &str) -> Option<Value> {
    let reply = client.get(path).await.expect("the replica answers");
    match reply.status {
        StatusCode::OK => Some(reply.json(path).expect("a JSON object")),
        StatusCode::NOT_FOUND => None,
        status => panic!("GET {path}: {status}: {}", reply.text()),
    }
}

/// DELETE `path` with `options` (a DeleteOptions body); the status.
async fn delete(client: &HttpClient, path: &str, options: Value) -> StatusCode {
    let body = bytes::Bytes::from(serde_json::to_vec(&options).expect("DeleteOptions serialize"));
    let reply = client
        .send_typed(Method::DELETE, path, "application/json", body)
        .await
        .expect("the replica answers");
    assert!(reply.status.is_success(), "DELETE {path}: {}", reply.text());
    reply.status
}

/// Polls `path` until `done` holds for what it reads (`None`: not found), within
/// [`CONVERGE`].
async fn until(client: &HttpClient, path: &str, what: &str, done: impl Fn(Option<&Value>) -> bool) {
    let deadline = Instant::now() + CONVERGE;
    loop {
        let read = get(client, path).await;
        if done(read.as_ref()) {
            return;
        }
        assert!(Instant::now() < deadline, "{path}: never {what}: {read:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn until_gone(client: &HttpClient, path: &str) {
    until(client, path, "deleted", |o| o.is_none()).await;
}

fn owners(object: &Value) -> Vec<String> {
    object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// root -> (mid ConfigMap, mid Secret) -> leaf, with `finalizers` on root; the objects.
async fn chain(client: &HttpClient, prefix: &str, finalizers: &[&str], block: bool) -> [Value; 4] {
    let root = create(
        client,
        "configmaps",
        NS,
        &format!("{prefix}-root"),
        json!({"finalizers": finalizers}),
    )
    .await;
    let owned = json!({"ownerReferences": [reference(&root, block)]});
    let mid = create(
        client,
        "configmaps",
        NS,
        &format!("{prefix}-mid"),
        owned.clone(),
    )
    .await;
    let secret = create(client, "secrets", NS, &format!("{prefix}-secret"), owned).await;
    let leaf = create(
        client,
        "configmaps",
        NS,
        &format!("{prefix}-leaf"),
        json!({"ownerReferences": [reference(&mid, block)]}),
    )
    .await;
    [root, mid, secret, leaf]
}

/// The watch's events, as (type, name, deletionTimestamp set), up to `name`'s DELETED.
async fn events_until_deleted(watch: &mut EventStream, name: &str) -> Vec<(String, String, bool)> {
    let mut seen: Vec<(String, String, bool)> = Vec::new();
    while !seen
        .iter()
        .any(|(kind, n, _)| kind == "DELETED" && n == name)
    {
        let event = watch
            .next(CONVERGE)
            .await
            .expect("an event in time")
            .expect("the watch goes on");
        let deleting = event.object["metadata"]["deletionTimestamp"].is_string();
        let n = event.name().unwrap_or_default().to_owned();
        seen.push((event.kind, n, deleting));
    }
    seen
}

/// Where the first `kind` event of `name` is in `seen`.
fn position(seen: &[(String, String, bool)], kind: &str, name: &str) -> usize {
    seen.iter()
        .position(|(k, n, _)| k == kind && n == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {seen:?}"))
}

fn path_of(object: &Value) -> String {
    let kind = if object["kind"] == "Secret" {
        "secrets"
    } else {
        "configmaps"
    };
    path(
        kind,
        NS,
        object["metadata"]["name"].as_str().expect("a named object"),
    )
}

// Owner chains three deep with each way of deleting; dangling, half-dangling and
// cross-namespace references; a cluster-scoped dependent of a namespaced owner kind.
#[tokio::test]
async fn owner_chains_are_collected_as_their_deletion_asks() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let client = cluster.client(1).unwrap();
    let keeper = create(client, "configmaps", NS, "keeper", json!({})).await;

    // Background, and orphanDependents=false: the root goes at once, then its dependents,
    // then theirs.
    for (prefix, options) in [
        ("bg", json!({"propagationPolicy": "Background"})),
        ("nor", json!({"orphanDependents": false})),
    ] {
        let [root, mid, secret, leaf] = chain(client, prefix, &[], false).await;
        assert_eq!(
            delete(client, &path_of(&root), options).await,
            StatusCode::OK
        );
        for object in [&mid, &secret, &leaf] {
            until_gone(client, &path_of(object)).await;
        }
    }

    // Foreground: the root, held by `foregroundDeletion`, goes once no dependent blocks it;
    // each blocking dependent is deleted in the foreground too, so a watch sees the leaf go
    // before its owner, and both before the root. A finalizer set by hand works the same.
    for (prefix, finalizers) in [("fg", &[][..]), ("fgf", &["foregroundDeletion"][..])] {
        let [root, mid, secret, leaf] = chain(client, prefix, finalizers, true).await;
        let rv = objects::resource_version(&leaf).expect("a resourceVersion");
        let watch = format!("/api/v1/namespaces/{NS}/configmaps?watch=1&resourceVersion={rv}");
        let mut watch = EventStream::open(client, &watch)
            .await
            .expect("the watch opens");
        let options = if finalizers.is_empty() {
            json!({"propagationPolicy": "Foreground"})
        } else {
            json!({})
        };
        delete(client, &path_of(&root), options).await;
        let held = get(client, &path_of(&root))
            .await
            .expect("held by its finalizer");
        assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
        for object in [&mid, &secret, &leaf, &root] {
            until_gone(client, &path_of(object)).await;
        }
        let root_name = format!("{prefix}-root");
        let seen = events_until_deleted(&mut watch, &root_name).await;
        let at = |kind: &str, name: &str| position(&seen, kind, &format!("{prefix}-{name}"));
        assert!(at("MODIFIED", "root") < at("DELETED", "mid"), "{seen:?}");
        assert!(at("DELETED", "leaf") < at("DELETED", "mid"), "{seen:?}");
        assert!(at("DELETED", "mid") < at("DELETED", "root"), "{seen:?}");
    }

    // Orphan, and orphanDependents=true: the dependents lose their reference to the root and
    // stay; the root goes.
    for (prefix, options, status) in [
        ("or", json!({"propagationPolicy": "Orphan"}), StatusCode::OK),
        ("ort", json!({"orphanDependents": true}), StatusCode::OK),
    ] {
        let [root, mid, secret, leaf] = chain(client, prefix, &[], true).await;
        assert_eq!(delete(client, &path_of(&root), options).await, status);
        until_gone(client, &path_of(&root)).await;
        for object in [&mid, &secret] {
            until(client, &path_of(object), "orphaned", |o| {
                o.is_some_and(|o| owners(o).is_empty())
            })
            .await;
        }
        let kept = get(client, &path_of(&leaf))
            .await
            .expect("the leaf's owner stays");
        assert_eq!(owners(&kept), [format!("{prefix}-mid")]);
    }

    // Dangling: an owner that never existed (or has another uid) is absent.
    let mut ghost = reference(&keeper, false);
    ghost["uid"] = json!("00000000-0000-0000-0000-000000000000");
    let dangling = create(
        client,
        "configmaps",
        NS,
        "dangling",
        json!({"ownerReferences": [ghost.clone()]}),
    )
    .await;
    let half = create(
        client,
        "configmaps",
        NS,
        "half",
        json!({"ownerReferences": [ghost, reference(&keeper, false)]}),
    )
    .await;
    until_gone(client, &path_of(&dangling)).await;
    until(
        client,
        &path_of(&half),
        "rid of its dangling reference",
        |o| o.is_some_and(|o| owners(o) == ["keeper"]),
    )
    .await;

    // Cross-namespace: an owner in another namespace is absent from the dependent's.
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "elsewhere"}});
    assert_eq!(
        client.post("/api/v1/namespaces", &ns).await.unwrap().status,
        StatusCode::CREATED
    );
    let far = create(
        client,
        "configmaps",
        "elsewhere",
        "far",
        json!({"ownerReferences": [reference(&keeper, false)]}),
    )
    .await;
    until_gone(client, &path("configmaps", "elsewhere", "far")).await;
    drop(far);

    // A cluster-scoped dependent naming a namespaced kind is left alone and reported.
    let invalid = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "gc-invalid", "ownerReferences": [reference(&keeper, false)]}});
    let created = client.post("/api/v1/namespaces", &invalid).await.unwrap();
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let events =
        "/api/v1/namespaces/default/events?fieldSelector=reason%3DOwnerRefInvalidNamespace";
    until(client, events, "reporting the invalid reference", |list| {
        list.and_then(|l| l["items"].as_array())
            .is_some_and(|items| {
                items
                    .iter()
                    .any(|e| e["involvedObject"]["name"] == "gc-invalid" && e["type"] == "Warning")
            })
    })
    .await;
    assert!(
        get(client, "/api/v1/namespaces/gc-invalid").await.is_some(),
        "the Namespace stays"
    );
    assert!(
        get(client, &path_of(&keeper)).await.is_some(),
        "nothing else is deleted"
    );
    assert!(
        get(client, &path("configmaps", NS, "ort-leaf"))
            .await
            .is_some(),
        "nothing else is deleted"
    );
}

// A foreground deletion half done when the leader is killed is finished by the next leader;
// a watch sees the root MODIFIED (deletionTimestamp) at once and DELETED only after its
// blocking dependent.
#[tokio::test]
async fn the_next_leader_finishes_a_foreground_deletion() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let leader = cluster
        .wait_leader(Duration::from_secs(10))
        .await
        .expect("a leader");
    let survivor = (1..=3).find(|&i| i != leader).unwrap();
    let client = cluster.client(survivor).unwrap();
    let root = create(client, "configmaps", NS, "root", json!({})).await;
    let held =
        json!({"finalizers": ["example.com/hold"], "ownerReferences": [reference(&root, true)]});
    let dependent = create(client, "configmaps", NS, "dependent", held).await;
    let rv = dependent["metadata"]["resourceVersion"].as_str().unwrap();
    let mut watch = EventStream::open(
        client,
        &format!("/api/v1/namespaces/{NS}/configmaps?watch=1&resourceVersion={rv}"),
    )
    .await
    .unwrap();

    delete(
        client,
        &path_of(&root),
        json!({"propagationPolicy": "Foreground"}),
    )
    .await;
    // The collector deletes the dependent, which its own finalizer holds.
    until(client, &path_of(&dependent), "being deleted", |o| {
        o.is_some_and(|o| o["metadata"]["deletionTimestamp"].is_string())
    })
    .await;
    cluster.kill_replica(leader).unwrap();
    let next = cluster.wait_leader(Duration::from_secs(20)).await;
    assert!(
        next.is_some_and(|n| n != leader),
        "a survivor leads: {next:?}"
    );
    let now = get(client, &path_of(&dependent)).await.unwrap();
    let patch = json!({"metadata": {"finalizers": null, "resourceVersion": now["metadata"]["resourceVersion"]}});
    let body = bytes::Bytes::from(serde_json::to_vec(&patch).unwrap());
    let reply = client
        .send_typed(
            Method::PATCH,
            &path_of(&dependent),
            "application/merge-patch+json",
            body,
        )
        .await
        .unwrap();
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    until_gone(client, &path_of(&root)).await;

    let mut seen: Vec<(String, String, bool)> = Vec::new();
    while !seen
        .iter()
        .any(|(kind, name, _)| kind == "DELETED" && name == "root")
    {
        let event = watch
            .next(CONVERGE)
            .await
            .unwrap()
            .expect("the watch goes on");
        let name = event.name().unwrap_or_default().to_owned();
        let deleting = event.object["metadata"]["deletionTimestamp"].is_string();
        seen.push((event.kind, name, deleting));
    }
    let at = |kind: &str, name: &str, deleting: bool| {
        seen.iter()
            .position(|(k, n, d)| k == kind && n == name && *d == deleting)
            .unwrap_or_else(|| panic!("no {kind} {name} in {seen:?}"))
    };
    assert!(
        at("MODIFIED", "root", true) < at("MODIFIED", "dependent", true),
        "{seen:?}"
    );
    assert!(
        at("DELETED", "dependent", true) < at("DELETED", "root", true),
        "{seen:?}"
    );
}

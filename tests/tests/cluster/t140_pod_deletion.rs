//! Graceful deletion of pods and pod garbage collection on a real three-replica cluster: a
//! bound pod deleted stays Terminating until its node agent deletes it with grace period 0;
//! later deletes only shorten the grace; unbound pods and forced deletes go at once; pod GC
//! removes the pods of a deleted Node and the terminating pods of an out-of-service Node.

use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::HttpClient;
use apiary_tests::watch_stream::EventStream;
use apiary_tests::watch_stream::WatchEvent;
use chrono::DateTime;
use chrono::Utc;
use http::Method;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

/// The collection of pods in `default`.
const PODS: &str = "/api/v1/namespaces/default/pods";

/// How long pod GC may take to remove the pods of a deleted Node: its 40 s quarantine, then a
/// pass.
const NODE_GONE_LIMIT: Duration = Duration::from_secs(90);

/// A pod named `name`, bound to `node` unless it is empty.
fn pod(name: &str, node: &str) -> Value {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    });
    if !node.is_empty() {
        pod["spec"]["nodeName"] = json!(node);
    }
    pod
}

/// How long the `default` ServiceAccount of `default` may take to appear after a start: the
/// leader's controller creates it, and a pod is refused until the replica sees it.
const ACCOUNT_LIMIT: Duration = Duration::from_secs(30);

/// Waits until `client`'s replica has the `default` ServiceAccount of `default`, which every
/// pod here runs as.
async fn default_account(client: &HttpClient) {
    let path = "/api/v1/namespaces/default/serviceaccounts/default";
    let deadline = tokio::time::Instant::now() + ACCOUNT_LIMIT;
    while client.get(path).await.expect("the replica answers").status != StatusCode::OK {
        assert!(tokio::time::Instant::now() < deadline, "no default account");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Creates `object` in the collection `path` (a pod once the account it runs as exists);
/// answers the created object.
async fn create(client: &HttpClient, path: &str, object: &Value) -> Value {
    if path == PODS {
        default_account(client).await;
    }
    let created = client
        .post(path, object)
        .await
        .expect("the replica answers");
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    created.json(path).expect("a JSON object")
}

/// A Node named `name`: Ready, or NotReady with the out-of-service taint.
fn node(name: &str, ready: bool) -> Value {
    let mut node = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
    });
    if !ready {
        node["spec"]["taints"] = json!([{
            "key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown",
            "effect": "NoExecute",
        }]);
    }
    node
}

/// DELETE `path` with the `DeleteOptions` `options`; answers the status and body.
async fn delete(client: &HttpClient, path: &str, options: &Value) -> (StatusCode, Value) {
    let reply = client
        .send(Method::DELETE, path, Some(options))
        .await
        .expect("the replica answers");
    let body = serde_json::from_slice(&reply.body).unwrap_or(Value::Null);
    (reply.status, body)
}

/// `DeleteOptions` with `gracePeriodSeconds` = `grace`.
fn grace(grace: i64) -> Value {
    json!({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": grace})
}

/// Waits until GET `path` answers 404, within `limit`.
async fn until_gone(client: &HttpClient, path: &str, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let status = client.get(path).await.expect("the replica answers").status;
        if status == StatusCode::NOT_FOUND {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{path} still answers {status} after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A watch of the pod `name` from `revision` on.
async fn watch_pod(client: &HttpClient, name: &str, revision: &str) -> EventStream {
    let path =
        format!("{PODS}?watch=1&fieldSelector=metadata.name%3D{name}&resourceVersion={revision}");
    EventStream::open(client, &path)
        .await
        .expect("the watch opens")
}

/// The next `count` events of `watch`.
async fn events(watch: &mut EventStream, count: usize, limit: Duration) -> Vec<WatchEvent> {
    let mut events = Vec::new();
    while events.len() < count {
        let event = watch.next(limit).await.expect("an event in time");
        events.push(event.expect("the watch stays open"));
    }
    events
}

/// A timestamp of an object.
fn time(value: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(value.as_str().expect("a timestamp"))
        .expect("RFC 3339")
        .with_timezone(&Utc)
}

/// Asserts `object` is Terminating with `grace` seconds, its deletionTimestamp `grace` seconds
/// after a moment between `before` and `after` (whole seconds).
fn assert_terminating(object: &Value, grace: i64, before: DateTime<Utc>, after: DateTime<Utc>) {
    let meta = &object["metadata"];
    assert_eq!(meta["deletionGracePeriodSeconds"], grace, "{object}");
    let at = time(&meta["deletionTimestamp"]);
    let seconds = chrono::Duration::seconds(grace);
    assert!(
        at >= before + seconds - chrono::Duration::seconds(1)
            && at <= after + seconds + chrono::Duration::seconds(1),
        "deletionTimestamp {at} is not {grace}s after [{before}, {after}]"
    );
}

// R-RES-052, R-RES-062, R-RES-092
#[tokio::test]
async fn a_bound_pod_stays_terminating_until_its_node_deletes_it() {
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let admin = cluster.client(1).unwrap();
    create(admin, "/api/v1/nodes", &node("n1", true)).await;
    let mut bound = pod("bound", "n1");
    bound["spec"]["terminationGracePeriodSeconds"] = json!(30);
    let created = create(admin, PODS, &bound).await;
    let revision = created["metadata"]["resourceVersion"].as_str().unwrap();
    let mut watch = watch_pod(cluster.client(2).unwrap(), "bound", revision).await;
    let path = format!("{PODS}/bound");

    // The first delete keeps the pod, Terminating for the pod's own grace period.
    let before = Utc::now();
    let (status, answer) = delete(admin, &path, &json!({})).await;
    let after = Utc::now();
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_terminating(&answer, 30, before, after);
    let first = answer["metadata"]["deletionTimestamp"].clone();
    let read = admin.get(&path).await.unwrap().json(&path).unwrap();
    assert_eq!(read["metadata"]["deletionTimestamp"], first);

    // A longer grace never moves deletionTimestamp later; a shorter one moves it earlier, by
    // the difference of the two grace periods (Kubernetes counts from the first delete).
    let (status, answer) = delete(admin, &path, &grace(60)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["metadata"]["deletionTimestamp"], first, "{answer}");
    assert_eq!(answer["metadata"]["deletionGracePeriodSeconds"], 30);
    let (status, answer) = delete(admin, &path, &grace(10)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["metadata"]["deletionGracePeriodSeconds"], 10,
        "{answer}"
    );
    assert_eq!(
        time(&answer["metadata"]["deletionTimestamp"]),
        time(&first) - chrono::Duration::seconds(20),
        "{answer}"
    );

    // The node agent of n1 confirms the pod stopped: grace period 0 removes it.
    let agent = admin
        .clone()
        .with_header("impersonate-user", "system:node:n1")
        .unwrap()
        .with_header("impersonate-group", "system:nodes")
        .unwrap();
    let (status, answer) = delete(&agent, &path, &grace(0)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    until_gone(admin, &path, Duration::from_secs(5)).await;

    // A watch saw the pod become Terminating, its grace shortened, then, as in Kubernetes, the
    // grace-0 delete write grace period 0 before removing the pod.
    let seen = events(&mut watch, 4, Duration::from_secs(10)).await;
    let kinds: Vec<&str> = seen.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["MODIFIED", "MODIFIED", "MODIFIED", "DELETED"],
        "{seen:?}"
    );
    assert_eq!(seen[0].object["metadata"]["deletionTimestamp"], first);
    assert_eq!(seen[0].object["metadata"]["deletionGracePeriodSeconds"], 30);
    assert_eq!(seen[1].object["metadata"]["deletionGracePeriodSeconds"], 10);
    assert_eq!(seen[2].object["metadata"]["deletionGracePeriodSeconds"], 0);
}

// R-RES-052, R-RES-062
#[tokio::test]
async fn unbound_pods_and_forced_deletes_go_at_once() {
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let admin = cluster.client(1).unwrap();
    create(admin, "/api/v1/nodes", &node("n1", true)).await;

    // A pod never bound to a node has nothing to stop: it goes at once.
    create(admin, PODS, &pod("unbound", "")).await;
    let (status, answer) = delete(admin, &format!("{PODS}/unbound"), &json!({})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let read = admin.get(&format!("{PODS}/unbound")).await.unwrap();
    assert_eq!(read.status, StatusCode::NOT_FOUND, "{}", read.text());

    // gracePeriodSeconds=0 (kubectl's --grace-period=0 --force) removes a bound pod at once.
    create(admin, PODS, &pod("forced", "n1")).await;
    let (status, answer) = delete(admin, &format!("{PODS}/forced"), &grace(0)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let read = admin.get(&format!("{PODS}/forced")).await.unwrap();
    assert_eq!(read.status, StatusCode::NOT_FOUND, "{}", read.text());
}

// Pod GC: the pod of a deleted Node is marked Failed with the DisruptionTarget condition,
// then removed, once the Node has been gone for the quarantine; a pod of a Node that exists
// is left alone.
#[tokio::test]
async fn pod_gc_removes_the_pods_of_a_deleted_node() {
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let admin = cluster.client(1).unwrap();
    create(admin, "/api/v1/nodes", &node("stays", true)).await;
    create(admin, "/api/v1/nodes", &node("goes", true)).await;
    create(admin, PODS, &pod("kept", "stays")).await;
    let orphan = create(admin, PODS, &pod("orphan", "goes")).await;
    let revision = orphan["metadata"]["resourceVersion"].as_str().unwrap();
    let mut watch = watch_pod(cluster.client(3).unwrap(), "orphan", revision).await;

    let (status, answer) = delete(admin, "/api/v1/nodes/goes", &json!({})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    until_gone(admin, &format!("{PODS}/orphan"), NODE_GONE_LIMIT).await;

    // Marked Failed, then removed with grace period 0 (written first, as in Kubernetes).
    let seen = events(&mut watch, 3, Duration::from_secs(10)).await;
    let kinds: Vec<&str> = seen.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["MODIFIED", "MODIFIED", "DELETED"], "{seen:?}");
    let status = &seen[0].object["status"];
    assert_eq!(status["phase"], "Failed", "{status}");
    let conditions = status["conditions"].as_array().expect("conditions");
    let disruption = conditions
        .iter()
        .find(|c| c["type"] == "DisruptionTarget")
        .expect("a DisruptionTarget condition");
    assert_eq!(disruption["status"], "True");
    assert_eq!(disruption["reason"], "DeletionByPodGC");
    assert_eq!(seen[1].object["metadata"]["deletionGracePeriodSeconds"], 0);

    let kept = admin.get(&format!("{PODS}/kept")).await.unwrap();
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.text());
    let kept = kept.json(PODS).unwrap();
    assert_ne!(kept["status"]["phase"], "Failed", "{kept}");
}

// Pod GC removes a terminating pod of a NotReady Node with the out-of-service taint; a pod of
// that Node that is not terminating is left alone.
#[tokio::test]
async fn pod_gc_removes_terminating_pods_of_an_out_of_service_node() {
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let admin = cluster.client(1).unwrap();
    create(admin, "/api/v1/nodes", &node("down", false)).await;
    create(admin, PODS, &pod("running", "down")).await;
    let stopping = create(admin, PODS, &pod("stopping", "down")).await;
    let revision = stopping["metadata"]["resourceVersion"].as_str().unwrap();
    let mut watch = watch_pod(cluster.client(2).unwrap(), "stopping", revision).await;

    let path = format!("{PODS}/stopping");
    let (status, answer) = delete(admin, &path, &json!({})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["metadata"]["deletionGracePeriodSeconds"], 30,
        "a bound pod is kept Terminating: {answer}"
    );
    until_gone(admin, &path, Duration::from_secs(15)).await;

    // Terminating, then marked Failed, then removed (with the grace period 0 written first),
    // well before its 30 s grace period ran out.
    let seen = events(&mut watch, 4, Duration::from_secs(10)).await;
    let kinds: Vec<&str> = seen.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["MODIFIED", "MODIFIED", "MODIFIED", "DELETED"],
        "{seen:?}"
    );
    assert_eq!(seen[1].object["status"]["phase"], "Failed", "{seen:?}");
    assert_eq!(seen[2].object["metadata"]["deletionGracePeriodSeconds"], 0);

    let running = admin.get(&format!("{PODS}/running")).await.unwrap();
    assert_eq!(running.status, StatusCode::OK, "{}", running.text());
    let running = running.json(PODS).unwrap();
    assert!(
        running["metadata"]["deletionTimestamp"].is_null(),
        "{running}"
    );
}

// Pod GC is level-triggered: when the leader is killed while a deleted Node's pod waits out
// its quarantine, the next leader removes the pod.
#[tokio::test]
async fn pod_gc_finishes_after_the_leader_is_killed() {
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let leader = cluster
        .wait_leader(Duration::from_secs(10))
        .await
        .expect("the logs name the leader");
    let survivor = cluster.client(leader % 3 + 1).unwrap();
    create(survivor, "/api/v1/nodes", &node("goes", true)).await;
    create(survivor, PODS, &pod("orphan", "goes")).await;
    let (status, answer) = delete(survivor, "/api/v1/nodes/goes", &json!({})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    cluster.kill_replica(leader).unwrap();
    until_gone(
        survivor,
        &format!("{PODS}/orphan"),
        NODE_GONE_LIMIT + Duration::from_secs(30),
    )
    .await;
}

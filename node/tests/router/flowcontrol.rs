//! API Priority and Fairness through the router: the bootstrap objects and their upkeep,
//! v1 defaulting, and a saturated priority level answering 429 while another level serves,
//! with the response headers, the debug dumps and the `apiserver_flowcontrol_*` metrics.

use std::sync::Arc;

use apiary_api::auth::Attributes;
use apiary_api::auth::Authorizer;
use apiary_api::auth::Decision;
use apiary_api::flowcontrol::bootstrap::ensure_flow_control_objects;
use apiary_api::storage::Guard;
use apiary_api::storage::ListPage;
use apiary_api::storage::StorageError;
use apiary_api::storage::StoredObject;
use bytes::Bytes;
use serde_json::json;
use tokio::sync::Semaphore;

use super::*;

const FS_PATH: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
const PLC_PATH: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";
const DUMP: &str = "/debug/api_priority_and_fairness/";

/// Allows everything to everyone.
struct AllowAll;

#[async_trait::async_trait]
impl Authorizer for AllowAll {
    async fn authorize(&self, _: &Attributes<'_>) -> Decision {
        Decision::Allow
    }
}

/// The store, with every read of the ConfigMap `default/held` held until the gate opens; each
/// held read is announced on `entered`.
struct Gated {
    inner: Arc<Backend>,
    gate: Semaphore,
    entered: Semaphore,
}

#[async_trait::async_trait]
impl Storage for Gated {
    async fn create(&self, key: &str, value: Bytes) -> Result<StoredObject, StorageError> {
        self.inner.create(key, value).await
    }

    async fn create_guarded(
        &self,
        key: &str,
        value: Bytes,
        guard: &Guard,
    ) -> Result<StoredObject, StorageError> {
        self.inner.create_guarded(key, value, guard).await
    }

    async fn get(
        &self,
        key: &str,
        consistency: ReadConsistency,
    ) -> Result<Option<StoredObject>, StorageError> {
        if key.ends_with("/configmaps/default/held") {
            self.entered.add_permits(1);
            drop(self.gate.acquire().await);
        }
        self.inner.get(key, consistency).await
    }

    async fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
        consistency: ReadConsistency,
    ) -> Result<ListPage, StorageError> {
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
        self.inner.update(key, value, expected).await
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
        self.inner.delete(key, expected).await
    }
}

/// A user outside `system:masters`.
fn user(name: &str) -> ClientCertificate {
    ClientCertificate::new(cert(name, Some("dev")))
}

async fn backend_with_flow_control() -> Arc<Backend> {
    let (backend, _) = backend_in(Flavor::Kubernetes).await;
    let random = RandomSource::seeded(1);
    ensure_flow_control_objects(backend.as_ref(), Flavor::Kubernetes, &SystemClock, &random)
        .await
        .expect("flow-control bootstrap");
    backend
}

fn names(list: &Value) -> Vec<String> {
    let items = list["items"].as_array().expect("items");
    let mut names: Vec<String> = items
        .iter()
        .map(|i| {
            i["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    names.sort();
    names
}

// R-RES-239
#[tokio::test]
async fn bootstrap_objects_are_created_once_and_mandatory_ones_forced_back() {
    let backend = backend_with_flow_control().await;
    let config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    let app = apiary_api::router(backend.clone(), config);
    let levels = admin_call(&app, "GET", PLC_PATH, None).await.json();
    assert_eq!(
        names(&levels),
        [
            "catch-all",
            "exempt",
            "global-default",
            "leader-election",
            "node-high",
            "system",
            "workload-high",
            "workload-low"
        ]
    );
    let schemas = admin_call(&app, "GET", FS_PATH, None).await.json();
    assert_eq!(names(&schemas).len(), 11);
    let catch_all = admin_call(&app, "GET", &format!("{PLC_PATH}/catch-all"), None).await;
    let catch_all = catch_all.json();
    assert_eq!(
        catch_all["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"],
        "true"
    );
    assert_eq!(catch_all["spec"]["limited"]["nominalConcurrencyShares"], 5);

    let before = backend.revision().await;
    let random = RandomSource::seeded(2);
    ensure_flow_control_objects(backend.as_ref(), Flavor::Kubernetes, &SystemClock, &random)
        .await
        .unwrap();
    assert_eq!(
        backend.revision().await,
        before,
        "a second run writes nothing"
    );

    // An operator's changes: a mandatory level is forced back, a suggested schema that says
    // `false` is left alone, one that says `true` is brought back.
    let merge = "application/merge-patch+json";
    let patch = json!({"spec": {"limited": {"nominalConcurrencyShares": 50}}}).to_string();
    let patched = send_as(
        &app,
        "PATCH",
        &format!("{PLC_PATH}/catch-all"),
        merge,
        &patch,
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.text());
    let kept = json!({"metadata": {"annotations": {"apf.kubernetes.io/autoupdate-spec": "false"}},
        "spec": {"matchingPrecedence": 9000}})
    .to_string();
    let path = format!("{FS_PATH}/global-default");
    assert_eq!(
        send_as(&app, "PATCH", &path, merge, &kept).await.status,
        200
    );
    let reverted = json!({"spec": {"matchingPrecedence": 9500}}).to_string();
    let service_accounts = format!("{FS_PATH}/service-accounts");
    let patched = send_as(&app, "PATCH", &service_accounts, merge, &reverted).await;
    assert_eq!(patched.status, 200);
    ensure_flow_control_objects(backend.as_ref(), Flavor::Kubernetes, &SystemClock, &random)
        .await
        .unwrap();
    let catch_all = admin_call(&app, "GET", &format!("{PLC_PATH}/catch-all"), None).await;
    assert_eq!(
        catch_all.json()["spec"]["limited"]["nominalConcurrencyShares"],
        5
    );
    let global = admin_call(&app, "GET", &path, None).await.json();
    assert_eq!(global["spec"]["matchingPrecedence"], 9000);
    let service_accounts = admin_call(&app, "GET", &service_accounts, None)
        .await
        .json();
    assert_eq!(service_accounts["spec"]["matchingPrecedence"], 9000);
}

// R-VER-097, R-VER-098, R-VER-100
#[tokio::test]
async fn v1_defaults_nominal_shares_only_when_unset() {
    let (app, _) = app().await;
    let level = |name: &str, limited: Value| {
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration", "metadata": {"name": name},
            "spec": {"type": "Limited", "limited": limited}})
        .to_string()
    };
    let unset = level(
        "unset",
        json!({"limitResponse": {"type": "Queue", "queuing": {}}}),
    );
    let created = admin_call(&app, "POST", PLC_PATH, Some(&unset)).await;
    assert_eq!(created.status, 201, "{}", created.text());
    let limited = &created.json()["spec"]["limited"];
    assert_eq!(limited["nominalConcurrencyShares"], 30);
    assert_eq!(limited["lendablePercent"], 0);
    assert_eq!(
        limited["limitResponse"]["queuing"],
        json!({"handSize": 8, "queueLengthLimit": 50, "queues": 64})
    );
    let zero = level(
        "zero",
        json!({"nominalConcurrencyShares": 0, "limitResponse": {"type": "Reject"}}),
    );
    let created = admin_call(&app, "POST", PLC_PATH, Some(&zero)).await;
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(
        created.json()["spec"]["limited"]["nominalConcurrencyShares"],
        0
    );
    let beta = "/apis/flowcontrol.apiserver.k8s.io/v1beta3/prioritylevelconfigurations";
    assert_eq!(admin_call(&app, "GET", beta, None).await.status, 404);
    let bad = level(
        "bad",
        json!({"lendablePercent": 200, "limitResponse": {"type": "Reject"}}),
    );
    let refused = admin_call(&app, "POST", PLC_PATH, Some(&bad)).await;
    assert_status(&refused, 422, "Invalid");
}

/// Waits until the dump at `path` has a line starting with `prefix`; that line.
async fn dump_line(app: &Router, path: &str, prefix: &str) -> String {
    for _ in 0..500 {
        let dump = admin_call(app, "GET", &format!("{DUMP}{path}"), None).await;
        assert_eq!(dump.status, 200);
        if let Some(line) = dump.text().lines().find(|l| l.starts_with(prefix)) {
            return line.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no line {prefix:?} in {path}");
}

/// A scrape of `/metrics` as the admin.
async fn scrape(app: &Router) -> String {
    let reply = admin_call(app, "GET", "/metrics", None).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.text()
}

/// The value of the sample `name` with `labels` in a scrape of `/metrics`.
async fn sample(app: &Router, name: &str, labels: &[(&str, &str)]) -> f64 {
    let text = scrape(app).await;
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned())))
        .expect("a Prometheus text scrape");
    let found = scrape
        .samples
        .iter()
        .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)));
    match found.map(|s| &s.value) {
        Some(
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v),
        ) => *v,
        other => panic!("{name} {labels:?}: {other:?} in\n{text}"),
    }
}

// R-RES-239
#[tokio::test]
async fn a_saturated_level_answers_429_while_another_level_serves() {
    let backend = backend_with_flow_control().await;
    let gated = Arc::new(Gated {
        inner: backend,
        gate: Semaphore::new(0),
        entered: Semaphore::new(0),
    });
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config.authorizers = vec![Arc::new(AllowAll)];
    // 100 seats: the one share of alice's level is one seat of them.
    config.flow_control.max_requests_inflight = 80;
    config.flow_control.max_mutating_requests_inflight = 20;
    let app = apiary_api::router(gated.clone(), config);

    let level = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration", "metadata": {"name": "alice-level"},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1,
            "borrowingLimitPercent": 0, "limitResponse": {"type": "Queue",
                "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 1}}}}});
    let level = admin_call(&app, "POST", PLC_PATH, Some(&level.to_string())).await;
    assert_eq!(level.status, 201, "{}", level.text());
    let schema = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema", "metadata": {"name": "alice"},
        "spec": {"priorityLevelConfiguration": {"name": "alice-level"},
            "matchingPrecedence": 50, "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                    "namespaces": ["*"], "clusterScope": true}]}]}});
    let schema = admin_call(&app, "POST", FS_PATH, Some(&schema.to_string())).await;
    assert_eq!(schema.status, 201, "{}", schema.text());
    let (level_uid, schema_uid) = (
        level.json()["metadata"]["uid"].as_str().unwrap().to_owned(),
        schema.json()["metadata"]["uid"]
            .as_str()
            .unwrap()
            .to_owned(),
    );
    let line = dump_line(&app, "dump_priority_levels", "alice-level,").await;
    assert!(line.contains("true"), "idle: {line}");

    let (alice, bob) = (user("alice"), user("bob"));
    let held = format!("{CM_PATH}/held");
    let spawn_get = |who: ClientCertificate| {
        let (app, held) = (app.clone(), held.clone());
        tokio::spawn(async move { call(&app, "GET", &held, None, Some(who)).await })
    };
    let first = spawn_get(alice.clone());
    gated.entered.acquire().await.expect("held").forget();
    let second = spawn_get(alice.clone());
    let mut waiting = String::new();
    for _ in 0..500 {
        waiting = dump_line(&app, "dump_priority_levels", "alice-level,").await;
        let columns: Vec<&str> = waiting.split(',').map(str::trim).collect();
        if columns[4] == "1" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let columns: Vec<&str> = waiting.split(',').map(str::trim).collect();
    assert_eq!(
        &columns[1..6],
        ["1", "false", "false", "1", "1"],
        "{waiting}"
    );

    let third = call(&app, "GET", &held, None, Some(alice.clone())).await;
    let status = assert_status(&third, 429, "TooManyRequests");
    assert_eq!(
        status["message"],
        "Too many requests, please try again later."
    );
    assert_eq!(third.headers["retry-after"], "1");
    assert_eq!(
        third.headers["x-kubernetes-pf-flowschema-uid"],
        schema_uid.as_str()
    );
    assert_eq!(
        third.headers["x-kubernetes-pf-prioritylevel-uid"],
        level_uid.as_str()
    );

    // Bob is in another level and is served.
    let created = call(&app, "POST", CM_PATH, Some(&cm("bobs")), Some(bob)).await;
    assert_eq!(created.status, 201, "{}", created.text());
    let global = admin_call(&app, "GET", &format!("{PLC_PATH}/global-default"), None).await;
    let global_uid = global.json()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        created.headers["x-kubernetes-pf-prioritylevel-uid"],
        global_uid.as_str()
    );

    let queued = dump_line(&app, "dump_requests", "alice-level,").await;
    let columns: Vec<&str> = queued.split(',').map(str::trim).collect();
    assert_eq!(&columns[1..5], ["alice", "0", "0", "alice"], "{queued}");
    let queue = dump_line(&app, "dump_queues", "alice-level,").await;
    let columns: Vec<&str> = queue.split(',').map(str::trim).collect();
    assert_eq!(&columns[1..5], ["0", "1", "0", "0"], "{queue}");
    let bobs_dump = call(
        &app,
        "GET",
        &format!("{DUMP}dump_queues"),
        None,
        Some(user("bob")),
    )
    .await;
    assert_eq!(
        bobs_dump.status, 200,
        "the dumps are authorized like any path"
    );

    let rejected = [
        ("flow_schema", "alice"),
        ("priority_level", "alice-level"),
        ("reason", "queue-full"),
    ];
    let name = "apiserver_flowcontrol_rejected_requests_total";
    assert_eq!(sample(&app, name, &rejected).await, 1.0);
    let level_label = [("priority_level", "alice-level")];
    let nominal = "apiserver_flowcontrol_nominal_limit_seats";
    assert_eq!(sample(&app, nominal, &level_label).await, 1.0);
    let flow = [("flow_schema", "alice"), ("priority_level", "alice-level")];
    let inqueue = "apiserver_flowcontrol_current_inqueue_requests";
    assert_eq!(sample(&app, inqueue, &flow).await, 1.0);
    let executing = "apiserver_flowcontrol_current_executing_seats";
    assert_eq!(sample(&app, executing, &flow).await, 1.0);
    let text = scrape(&app).await;
    let refused_wait = "apiserver_flowcontrol_request_wait_duration_seconds_count{execute=\"false\",flow_schema=\"alice\",priority_level=\"alice-level\"} 1";
    assert!(text.contains(refused_wait), "{text}");

    // Open the gate: both of alice's requests finish, one after the other.
    gated.gate.add_permits(Semaphore::MAX_PERMITS);
    assert_eq!(first.await.unwrap().status, 404);
    assert_eq!(second.await.unwrap().status, 404);
    let dispatched = "apiserver_flowcontrol_dispatched_requests_total";
    assert_eq!(sample(&app, dispatched, &flow).await, 2.0);
    assert_eq!(sample(&app, executing, &flow).await, 0.0);
}

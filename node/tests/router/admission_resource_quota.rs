//! The `ResourceQuota` plugin through the router: writes over a quota are refused with
//! Kubernetes' messages, admitted writes are charged to the quota's `status.used` (dry runs
//! are not; racing writes cannot both take the last unit), compute quotas require containers
//! to state them, scopes choose the pods a quota counts, the configuration's
//! `limitedResources` need a covering quota, and the `resourcequota` controller fills a new
//! quota's status and frees what deleted objects used.
//!
//! Without the controller, a test writes a quota's status as the controller would, with a
//! sentinel (`count/podtemplates`, limited to 0, its `used` the status' serial number) that
//! tells when the plugin's copy of the quotas holds that status.

use std::sync::Arc;
use std::time::Duration;

use apiary_api::SystemClock;
use apiary_api::admission::AdmissionConfig;
use apiary_api::admission::PluginSelection;
use apiary_node::controllers::Controller;
use apiary_node::controllers::ControllerContext;
use apiary_node::controllers::changes::Changes;
use apiary_node::controllers::client::InProcessClient;
use apiary_node::controllers::rbac_bootstrap::reconcile_defaults;
use apiary_node::controllers::resource_quota::ResourceQuotaController;
use axum::Router;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::*;

const PODS: &str = "/api/v1/namespaces/default/pods";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const QUOTAS: &str = "/api/v1/namespaces/default/resourcequotas";
const TEMPLATES: &str = "/api/v1/namespaces/default/podtemplates";
const SENTINEL: &str = "count/podtemplates";

fn pod(name: &str, resources: Value) -> String {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": resources}]}})
    .to_string()
}

fn config_map(name: &str) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}).to_string()
}

/// Creates the quota `name` with `spec` (`hard` gets the sentinel).
async fn quota(app: &Router, name: &str, mut spec: Value) {
    spec["hard"][SENTINEL] = json!("0");
    let body = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name},
                      "spec": spec});
    created(app, QUOTAS, &body.to_string()).await;
}

/// Writes the status of quota `name` (`hard` and `used` as given, with the sentinel at
/// `serial`) and waits until the plugin judges with it.
async fn status(app: &Router, name: &str, hard: Value, used: Value, serial: u32) {
    let path = format!("{QUOTAS}/{name}");
    let mut object = fetched(app, &path).await;
    let (mut hard, mut used) = (hard, used);
    hard[SENTINEL] = json!("0");
    used[SENTINEL] = json!(serial.to_string());
    object["status"] = json!({"hard": hard, "used": used});
    let reply = admin_call(
        app,
        "PUT",
        &format!("{path}/status"),
        Some(&object.to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let probe = json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "probe"},
                       "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}});
    let seen = format!("used: {SENTINEL}={serial},");
    for _ in 0..200 {
        let reply = admin_call(
            app,
            "POST",
            &format!("{TEMPLATES}?dryRun=All"),
            Some(&probe.to_string()),
        )
        .await;
        if reply.text().contains(&seen) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the quota's status never reached the plugin");
}

/// Dry-run creates of the pod `probe` at `dry` until `done` holds for the reply.
async fn dry_run_until(app: &Router, dry: &str, done: impl Fn(&Reply) -> bool) -> Reply {
    for _ in 0..200 {
        let reply = admin_call(app, "POST", dry, Some(&pod("probe", json!({})))).await;
        if done(&reply) {
            return reply;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the plugin never judged the pod as expected");
}

/// The quota's `status.used` of `resource`.
async fn used(app: &Router, name: &str, resource: &str) -> Value {
    fetched(app, &format!("{QUOTAS}/{name}")).await["status"]["used"][resource].clone()
}

fn refusal(reply: &Reply) -> String {
    let status = assert_status(reply, 403, "Forbidden");
    status["message"].as_str().unwrap_or_default().to_owned()
}

// Writes are refused over the limit with Kubernetes' message and charged when admitted;
// each resource is counted on its own.
#[tokio::test]
async fn writes_are_charged_and_refused_over_the_limit() {
    let (app, _) = app().await;
    quota(
        &app,
        "q",
        json!({"hard": {"pods": "2", "count/configmaps": "3"}}),
    )
    .await;
    let hard = json!({"pods": "2", "count/configmaps": "3"});
    status(
        &app,
        "q",
        hard,
        json!({"pods": "0", "count/configmaps": "0"}),
        1,
    )
    .await;
    for name in ["a", "b", "c"] {
        created(&app, CONFIGMAPS, &config_map(name)).await;
    }
    let reply = admin_call(&app, "POST", CONFIGMAPS, Some(&config_map("d"))).await;
    assert_eq!(
        refusal(&reply),
        "configmaps \"d\" is forbidden: exceeded quota: q, requested: count/configmaps=1, \
         used: count/configmaps=3, limited: count/configmaps=3"
    );
    assert_eq!(used(&app, "q", "count/configmaps").await, "3");
    assert_eq!(used(&app, "q", "pods").await, "0", "pods are counted apart");
    for name in ["p1", "p2"] {
        created(&app, PODS, &pod(name, json!({}))).await;
    }
    let reply = admin_call(&app, "POST", PODS, Some(&pod("p3", json!({})))).await;
    assert_eq!(
        refusal(&reply),
        "pods \"p3\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, \
         limited: pods=2"
    );
    assert_eq!(used(&app, "q", "pods").await, "2");
}

// A quota on compute resources requires each container to state them and sums what pods
// request and limit.
#[tokio::test]
async fn compute_quotas_require_and_sum_requests_and_limits() {
    let (app, _) = app().await;
    let hard = json!({"requests.cpu": "1", "limits.memory": "1Gi"});
    quota(&app, "compute", json!({"hard": hard.clone()})).await;
    let zero = json!({"requests.cpu": "0", "limits.memory": "0"});
    status(&app, "compute", hard, zero, 1).await;
    let reply = admin_call(&app, "POST", PODS, Some(&pod("bare", json!({})))).await;
    assert_eq!(
        refusal(&reply),
        "pods \"bare\" is forbidden: failed quota: compute: must specify limits.memory for: c; \
         requests.cpu for: c"
    );
    let sized = json!({"requests": {"cpu": "600m"}, "limits": {"memory": "512Mi"}});
    created(&app, PODS, &pod("one", sized.clone())).await;
    assert_eq!(used(&app, "compute", "requests.cpu").await, "600m");
    assert_eq!(used(&app, "compute", "limits.memory").await, "512Mi");
    let reply = admin_call(&app, "POST", PODS, Some(&pod("two", sized))).await;
    assert_eq!(
        refusal(&reply),
        "pods \"two\" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, \
         used: requests.cpu=600m, limited: requests.cpu=1"
    );
}

// A scoped quota counts only the pods in its scope.
#[tokio::test]
async fn scoped_quotas_count_only_their_pods() {
    let (app, _) = app().await;
    quota(
        &app,
        "best-effort",
        json!({"hard": {"pods": "1"}, "scopes": ["BestEffort"]}),
    )
    .await;
    // A scoped quota does not match the sentinel's pod templates: the probe is a pod.
    let path = format!("{QUOTAS}/best-effort");
    let mut object = fetched(&app, &path).await;
    object["status"] = json!({"hard": {"pods": "1"}, "used": {"pods": "1"}});
    let reply = admin_call(
        &app,
        "PUT",
        &format!("{path}/status"),
        Some(&object.to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let dry = format!("{PODS}?dryRun=All");
    dry_run_until(&app, &dry, |r| r.status == StatusCode::FORBIDDEN).await;
    let reply = admin_call(&app, "POST", PODS, Some(&pod("plain", json!({})))).await;
    assert_eq!(
        refusal(&reply),
        "pods \"plain\" is forbidden: exceeded quota: best-effort, requested: pods=1, \
         used: pods=1, limited: pods=1"
    );
    let burstable = json!({"requests": {"cpu": "100m"}});
    created(&app, PODS, &pod("burstable", burstable)).await;
    assert_eq!(used(&app, "best-effort", "pods").await, "1", "not charged");
}

// R-RES-192: a dry run is judged by the quota but not charged to it.
#[tokio::test]
async fn dry_runs_are_judged_but_not_charged() {
    let (app, _) = app().await;
    quota(&app, "q", json!({"hard": {"pods": "1"}})).await;
    status(&app, "q", json!({"pods": "1"}), json!({"pods": "0"}), 1).await;
    let dry = format!("{PODS}?dryRun=All");
    let reply = admin_call(&app, "POST", &dry, Some(&pod("p", json!({})))).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert_eq!(used(&app, "q", "pods").await, "0");
    created(&app, PODS, &pod("p", json!({}))).await;
    assert_eq!(used(&app, "q", "pods").await, "1");
    let reply = admin_call(&app, "POST", &dry, Some(&pod("p2", json!({})))).await;
    assert!(
        refusal(&reply).contains("exceeded quota: q"),
        "a dry run over the limit"
    );
}

// Writes racing for the last unit: the quota's compare-and-swap lets exactly one win.
#[tokio::test]
async fn concurrent_creates_cannot_share_the_last_unit() {
    let (app, _) = app().await;
    quota(&app, "q", json!({"hard": {"count/configmaps": "1"}})).await;
    let hard = json!({"count/configmaps": "1"});
    status(&app, "q", hard, json!({"count/configmaps": "0"}), 1).await;
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let app = app.clone();
            tokio::spawn(async move {
                admin_call(
                    &app,
                    "POST",
                    CONFIGMAPS,
                    Some(&config_map(&format!("c{i}"))),
                )
                .await
            })
        })
        .collect();
    let mut won = 0;
    for racer in racers {
        let reply = racer.await.expect("racer");
        match reply.status {
            StatusCode::CREATED => won += 1,
            _ => assert!(
                refusal(&reply).contains("exceeded quota: q"),
                "{}",
                reply.text()
            ),
        }
    }
    assert_eq!(won, 1);
    assert_eq!(used(&app, "q", "count/configmaps").await, "1");
}

// A quota the controller has counted nothing for yet, though it limits pods, refuses pods.
#[tokio::test]
async fn a_quota_without_usage_refuses_as_status_unknown() {
    let (app, _) = app().await;
    quota(&app, "q", json!({"hard": {"pods": "2"}})).await;
    status(&app, "q", json!({"pods": "2"}), json!({}), 1).await;
    let reply = admin_call(&app, "POST", PODS, Some(&pod("p", json!({})))).await;
    assert_eq!(
        refusal(&reply),
        "pods \"p\" is forbidden: status unknown for quota: q, resources: pods"
    );
}

// The configuration's limitedResources: consuming cpu needs a quota covering it.
#[tokio::test]
async fn limited_resources_need_a_covering_quota() {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut api = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    api.admission = PluginSelection::new(&[], &[]).expect("known plugins");
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("quota.yaml"),
        "apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\n\
         limitedResources:\n- resource: pods\n  matchContains: [cpu]\n",
    )
    .expect("write");
    let file = dir.path().join("admission.yaml");
    std::fs::write(
        &file,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n\
         - name: ResourceQuota\n  path: quota.yaml\n",
    )
    .expect("write");
    api.admission_config = AdmissionConfig::read(&file).expect("valid configuration");
    let app = apiary_api::router(storage, api);
    let cpu = json!({"requests": {"cpu": "100m"}});
    let reply = admin_call(&app, "POST", PODS, Some(&pod("p", cpu.clone()))).await;
    assert_eq!(
        refusal(&reply),
        "pods \"p\" is forbidden: insufficient quota to consume: cpu,requests.cpu"
    );
    created(&app, PODS, &pod("plain", json!({}))).await;
    let hard = json!({"requests.cpu": "1", "cpu": "1"});
    quota(&app, "q", json!({"hard": hard.clone()})).await;
    status(&app, "q", hard, json!({"requests.cpu": "0", "cpu": "0"}), 1).await;
    created(&app, PODS, &pod("p", cpu)).await;
}

// The controller, as its own ServiceAccount under the default RBAC policy: a new quota's
// status is filled with what the namespace holds, admitted pods are charged, and a deleted
// pod's usage is freed by the next count.
#[tokio::test]
async fn the_controller_counts_quotas_and_frees_deleted_usage() {
    let (app, storage, rbac) = super::rbac::rbac_app().await;
    let loopback = InProcessClient::loopback(app.clone());
    reconcile_defaults(&loopback, Flavor::Kubernetes)
        .await
        .expect("default policy");
    super::rbac::settled(&storage, &rbac).await;
    created(&app, PODS, &pod("before", json!({}))).await;
    let body = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                      "spec": {"hard": {"pods": "1", "count/configmaps": "5"}}});
    created(&app, QUOTAS, &body.to_string()).await;

    let (changes, receiver) = watch::channel(0);
    let stop = CancellationToken::new();
    let context = ControllerContext {
        api: app.clone(),
        flavor: Flavor::Kubernetes,
        clock: Arc::new(SystemClock),
        changes: Changes::of_revisions(receiver),
    };
    let controller = {
        let stop = stop.clone();
        tokio::spawn(async move { ResourceQuotaController.run(context, stop).await })
    };
    let path = format!("{QUOTAS}/q");
    let reply = poll_until(&app, &changes, &path, "status counted", |r| {
        r.json()["status"]["used"]["pods"] == "1"
    })
    .await;
    assert_eq!(
        reply.json()["status"],
        json!({"hard": {"pods": "1", "count/configmaps": "5"},
               "used": {"pods": "1", "count/configmaps": "0"}})
    );
    let dry = format!("{PODS}?dryRun=All");
    let full = |r: &Reply| r.status == StatusCode::FORBIDDEN;
    let reply = dry_run_until(&app, &dry, full).await;
    assert_eq!(
        refusal(&reply),
        "pods \"probe\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, \
         limited: pods=1"
    );

    let deleted = admin_call(&app, "DELETE", &format!("{PODS}/before"), None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    poll_until(&app, &changes, &path, "usage freed", |r| {
        r.json()["status"]["used"]["pods"] == "0"
    })
    .await;
    dry_run_until(&app, &dry, |r| r.status == StatusCode::CREATED).await;
    created(&app, PODS, &pod("after", json!({}))).await;
    assert_eq!(used(&app, "q", "pods").await, "1", "charged by admission");
    let reply = admin_call(&app, "POST", PODS, Some(&pod("third", json!({})))).await;
    assert!(
        refusal(&reply).contains("exceeded quota: q"),
        "{}",
        reply.text()
    );
    stop.cancel();
    controller.await.expect("controller stops");
}

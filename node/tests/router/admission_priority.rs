//! The `Priority` plugin: a pod's PriorityClass resolved to its priority and preemption
//! policy, Kubernetes' refusals, and one `globalDefault` class at most.

use std::time::Duration;

use axum::Router;
use serde_json::Value;
use serde_json::json;

use super::admin_call;
use super::app;
use super::assert_status;
use super::created;
use super::snapshot;
use http::StatusCode;

const PODS: &str = "/api/v1/namespaces/default/pods";
const CLASSES: &str = "/apis/scheduling.k8s.io/v1/priorityclasses";

fn pod(name: &str, spec: Value) -> String {
    let mut spec = spec;
    spec["containers"] = json!([{"name": "c", "image": "i"}]);
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}).to_string()
}

fn class(name: &str, value: i64, extra: Value) -> String {
    let mut class = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": name}, "value": value});
    if let (Some(class), Some(extra)) = (class.as_object_mut(), extra.as_object()) {
        class.extend(extra.clone());
    }
    class.to_string()
}

async fn refused(app: &Router, path: &str, body: &str) -> String {
    let reply = admin_call(app, "POST", path, Some(body)).await;
    let status = assert_status(&reply, 403, "Forbidden");
    status["message"].as_str().unwrap_or_default().to_owned()
}

/// Dry-run creates of a pod naming no class until it gets `value` (the replica's copy of the
/// classes follows their writes asynchronously, as Kubernetes' informers do).
async fn until_default_priority(app: &Router, value: i64) -> Value {
    let path = format!("{PODS}?dryRun=All");
    let mut last = Value::Null;
    for _ in 0..100 {
        let reply = admin_call(app, "POST", &path, Some(&pod("probe", json!({})))).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        last = reply.json();
        if last["spec"]["priority"] == value {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the default priority never became {value}: {last}");
}

#[tokio::test]
async fn a_pod_naming_no_class_gets_priority_zero() {
    let (app, _) = app().await;
    let stored = created(&app, PODS, &pod("p", json!({}))).await;
    assert_eq!(stored["spec"]["priority"], 0);
    assert_eq!(stored["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    assert_eq!(stored["spec"].get("priorityClassName"), None);
}

#[tokio::test]
async fn a_named_class_gives_its_value_and_preemption_policy() {
    let (app, _) = app().await;
    created(
        &app,
        CLASSES,
        &class("high", 1000, json!({"preemptionPolicy": "Never"})),
    )
    .await;
    let stored = created(&app, PODS, &pod("p", json!({"priorityClassName": "high"}))).await;
    assert_eq!(stored["spec"]["priority"], 1000);
    assert_eq!(stored["spec"]["preemptionPolicy"], "Never");

    let same = json!({"priorityClassName": "high", "priority": 1000});
    let stored = created(&app, PODS, &pod("same", same)).await;
    assert_eq!(
        stored["spec"]["priority"], 1000,
        "the computed value may be given"
    );

    let node = json!({"priorityClassName": "system-node-critical"});
    let stored = created(&app, PODS, &pod("n", node)).await;
    assert_eq!(stored["spec"]["priority"], 2_000_001_000);
    let cluster = json!({"priorityClassName": "system-cluster-critical"});
    let stored = created(&app, PODS, &pod("c", cluster)).await;
    assert_eq!(stored["spec"]["priority"], 2_000_000_000);
}

#[tokio::test]
async fn unknown_classes_and_given_values_are_refused() {
    let (app, _) = app().await;
    let message = refused(&app, PODS, &pod("p", json!({"priorityClassName": "nope"}))).await;
    assert_eq!(
        message,
        "pods \"p\" is forbidden: no PriorityClass with name nope was found"
    );
    let message = refused(&app, PODS, &pod("p", json!({"priority": 7}))).await;
    assert_eq!(
        message,
        "pods \"p\" is forbidden: the integer value of priority (7) must not be provided in pod \
         spec; priority admission controller computed 0 from the given PriorityClass name"
    );
    let message = refused(&app, PODS, &pod("p", json!({"preemptionPolicy": "Never"}))).await;
    assert_eq!(
        message,
        "pods \"p\" is forbidden: the string value of PreemptionPolicy (Never) must not be \
         provided in pod spec; priority admission controller computed PreemptLowerPriority \
         from the given PriorityClass name"
    );
}

#[tokio::test]
async fn the_global_default_class_is_the_one_of_pods_naming_none() {
    let (app, _) = app().await;
    let default = json!({"globalDefault": true});
    created(&app, CLASSES, &class("low", 10, default.clone())).await;
    let probe = until_default_priority(&app, 10).await;
    assert_eq!(probe["spec"]["priorityClassName"], "low");

    let message = refused(&app, CLASSES, &class("other", 20, default.clone())).await;
    assert_eq!(
        message,
        "priorityclasses.scheduling.k8s.io \"other\" is forbidden: PriorityClass low is already \
         marked as default. Only one default can exist"
    );
    let path = format!("{CLASSES}/low");
    let reply = admin_call(&app, "PUT", &path, Some(&class("low", 10, default))).await;
    assert_eq!(
        reply.status,
        StatusCode::OK,
        "the default itself may be updated"
    );
}

// R-RES-192: a dry run passes admission: the answer shows the resolved priority and nothing
// is stored.
#[tokio::test]
async fn a_dry_run_answers_the_resolved_priority_and_stores_nothing() {
    let (app, storage) = app().await;
    let before = snapshot(&storage).await;
    let path = format!("{PODS}?dryRun=All");
    let reply = admin_call(&app, "POST", &path, Some(&pod("p", json!({})))).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert_eq!(reply.json()["spec"]["priority"], 0);
    assert_eq!(snapshot(&storage).await, before);
}

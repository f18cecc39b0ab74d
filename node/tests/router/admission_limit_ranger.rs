//! The `LimitRanger` plugin: a namespace's LimitRanges give new pods their default requests
//! and limits and bound pods and claims, with Kubernetes' messages.

use std::time::Duration;

use axum::Router;
use serde_json::Value;
use serde_json::json;

use super::admin_call;
use super::app;
use super::assert_status;
use super::created;
use http::StatusCode;

const PODS: &str = "/api/v1/namespaces/default/pods";
const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";
const RANGES: &str = "/api/v1/namespaces/default/limitranges";

fn pod(name: &str, resources: Value) -> String {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": resources}]}})
    .to_string()
}

/// Creates the LimitRange `limits` and waits until this replica's copy holds it (probing
/// with a dry-run pod create that `ready` judges).
async fn limit_range(app: &Router, limits: Value, ready: impl Fn(&super::Reply) -> bool) {
    let range = json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"},
                       "spec": {"limits": limits}});
    created(app, RANGES, &range.to_string()).await;
    let path = format!("{PODS}?dryRun=All");
    for _ in 0..100 {
        let reply = admin_call(app, "POST", &path, Some(&pod("probe", json!({})))).await;
        if ready(&reply) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the LimitRange never took effect");
}

#[tokio::test]
async fn new_pods_get_the_container_defaults_and_the_annotation() {
    let (app, _) = app().await;
    let limits = json!([{"type": "Container",
        "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m"}}]);
    limit_range(&app, limits, |r| {
        r.status == StatusCode::CREATED && r.json()["metadata"]["annotations"].is_object()
    })
    .await;
    let stored = created(
        &app,
        PODS,
        &pod("p", json!({"requests": {"memory": "64Mi"}})),
    )
    .await;
    assert_eq!(
        stored["spec"]["containers"][0]["resources"],
        json!({"requests": {"cpu": "100m", "memory": "64Mi"},
               "limits": {"cpu": "500m", "memory": "256Mi"}})
    );
    assert_eq!(
        stored["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu request for container c; cpu, memory limit for container c"
    );
    // The pod defaults (requests from limits) come first, as in Kubernetes.
    let stored = created(&app, PODS, &pod("q", json!({"limits": {"cpu": "1"}}))).await;
    assert_eq!(
        stored["spec"]["containers"][0]["resources"],
        json!({"requests": {"cpu": "1"}, "limits": {"cpu": "1", "memory": "256Mi"}})
    );
}

#[tokio::test]
async fn pods_and_claims_out_of_bounds_are_refused() {
    let (app, _) = app().await;
    let limits = json!([
        {"type": "Container", "max": {"cpu": "1"}},
        {"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}},
    ]);
    limit_range(&app, limits, |r| r.status == StatusCode::FORBIDDEN).await;

    let reply = admin_call(
        &app,
        "POST",
        PODS,
        Some(&pod("big", json!({"limits": {"cpu": "2"}}))),
    )
    .await;
    let status = assert_status(&reply, 403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"big\" is forbidden: maximum cpu usage per Container is 1, but limit is 2"
    );
    created(&app, PODS, &pod("fits", json!({"limits": {"cpu": "500m"}}))).await;

    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}}});
    let reply = admin_call(&app, "POST", CLAIMS, Some(&claim.to_string())).await;
    let status = assert_status(&reply, 403, "Forbidden");
    assert_eq!(
        status["message"],
        "persistentvolumeclaims \"c\" is forbidden: maximum storage usage per \
         PersistentVolumeClaim is 10Gi, but request is 20Gi"
    );
}

//! The `DefaultTolerationSeconds` plugin: pods tolerate the not-ready and unreachable
//! NoExecute taints for 300 seconds unless they already tolerate them.

use serde_json::Value;
use serde_json::json;

use super::app_in;
use super::created;
use apiary_api::flavor::Flavor;

const PODS: &str = "/api/v1/namespaces/default/pods";

fn pod(name: &str, tolerations: Value) -> String {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": tolerations}})
    .to_string()
}

fn default_toleration(key: &str) -> Value {
    json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
}

#[tokio::test]
async fn a_pod_without_them_gets_both_tolerations() {
    let (app, _) = app_in(Flavor::Kubernetes).await;
    let own = json!({"key": "team", "operator": "Equal", "value": "a", "effect": "NoSchedule"});
    let stored = created(&app, PODS, &pod("p", json!([own]))).await;
    assert_eq!(
        stored["spec"]["tolerations"],
        json!([
            own,
            default_toleration("node.kubernetes.io/not-ready"),
            default_toleration("node.kubernetes.io/unreachable"),
        ])
    );
}

#[tokio::test]
async fn tolerations_already_covering_the_taints_are_left_alone() {
    let (app, _) = app_in(Flavor::Kubernetes).await;
    let everything = json!([{"operator": "Exists"}]);
    let stored = created(&app, PODS, &pod("all", everything.clone())).await;
    assert_eq!(stored["spec"]["tolerations"], everything);

    let not_ready = json!({"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                           "effect": "NoExecute", "tolerationSeconds": 5});
    let stored = created(&app, PODS, &pod("one", json!([not_ready]))).await;
    assert_eq!(
        stored["spec"]["tolerations"],
        json!([
            not_ready,
            default_toleration("node.kubernetes.io/unreachable")
        ])
    );
}

#[tokio::test]
async fn the_platform_flavor_names_its_own_taints() {
    let (app, _) = app_in(Flavor::Platform).await;
    let stored = created(&app, PODS, &pod("p", Value::Null)).await;
    assert_eq!(
        stored["spec"]["tolerations"],
        json!([
            default_toleration("node.platform.io/not-ready"),
            default_toleration("node.platform.io/unreachable"),
        ])
    );
}

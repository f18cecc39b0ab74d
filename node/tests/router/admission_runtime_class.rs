//! The `RuntimeClass` plugin: a pod's RuntimeClass gives it its overhead and scheduling;
//! conflicts, overheads the class does not define and missing classes are refused.

use axum::Router;
use serde_json::Value;
use serde_json::json;

use super::admin_call;
use super::app;
use super::assert_status;
use super::created;

const PODS: &str = "/api/v1/namespaces/default/pods";
const CLASSES: &str = "/apis/node.k8s.io/v1/runtimeclasses";

fn pod(name: &str, spec: Value) -> String {
    let mut spec = spec;
    spec["containers"] = json!([{"name": "c", "image": "i"}]);
    spec["tolerations"] = spec
        .get("tolerations")
        .cloned()
        .unwrap_or(json!([{"operator": "Exists"}]));
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}).to_string()
}

fn class(name: &str, extra: Value) -> String {
    let mut class = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                           "metadata": {"name": name}, "handler": "runc"});
    if let (Some(class), Some(extra)) = (class.as_object_mut(), extra.as_object()) {
        class.extend(extra.clone());
    }
    class.to_string()
}

async fn refused(app: &Router, body: &str) -> String {
    let reply = admin_call(app, "POST", PODS, Some(body)).await;
    let status = assert_status(&reply, 403, "Forbidden");
    status["message"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn the_class_gives_its_overhead_and_scheduling() {
    let (app, _) = app().await;
    let gvisor = json!({
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {
            "nodeSelector": {"sandbox": "gvisor"},
            "tolerations": [{"key": "sandbox", "operator": "Equal", "value": "gvisor",
                             "effect": "NoSchedule"}],
        },
    });
    created(&app, CLASSES, &class("gvisor", gvisor)).await;
    let spec = json!({"runtimeClassName": "gvisor", "nodeSelector": {"zone": "a"},
                      "tolerations": [{"key": "team", "operator": "Exists"}]});
    let stored = created(&app, PODS, &pod("p", spec)).await;
    assert_eq!(
        stored["spec"]["overhead"],
        json!({"cpu": "250m", "memory": "120Mi"})
    );
    assert_eq!(
        stored["spec"]["nodeSelector"],
        json!({"sandbox": "gvisor", "zone": "a"})
    );
    let default = |key: &str| {
        json!({"key": format!("node.kubernetes.io/{key}"), "operator": "Exists",
               "effect": "NoExecute", "tolerationSeconds": 300})
    };
    let class_toleration =
        json!({"key": "sandbox", "operator": "Equal", "value": "gvisor", "effect": "NoSchedule"});
    assert_eq!(
        stored["spec"]["tolerations"],
        json!([
            {"key": "team", "operator": "Exists"},
            default("not-ready"),
            default("unreachable"),
            class_toleration,
        ])
    );

    let same =
        json!({"runtimeClassName": "gvisor", "overhead": {"cpu": "0.25", "memory": "120Mi"}});
    let stored = created(&app, PODS, &pod("same", same)).await;
    assert_eq!(
        stored["spec"]["overhead"]["cpu"], "250m",
        "an equal overhead may be given"
    );
}

#[tokio::test]
async fn a_wider_toleration_of_the_pod_absorbs_the_class_one() {
    let (app, _) = app().await;
    let scheduling = json!({"scheduling": {"tolerations": [
        {"key": "sandbox", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]}});
    created(&app, CLASSES, &class("c", scheduling)).await;
    let spec = json!({"runtimeClassName": "c", "tolerations": [{"operator": "Exists"}]});
    let stored = created(&app, PODS, &pod("p", spec)).await;
    assert_eq!(
        stored["spec"]["tolerations"],
        json!([{"operator": "Exists"}])
    );
}

#[tokio::test]
async fn conflicts_foreign_overheads_and_missing_classes_are_refused() {
    let (app, _) = app().await;
    let selecting = json!({"scheduling": {"nodeSelector": {"sandbox": "gvisor"}},
                           "overhead": {"podFixed": {"cpu": "1"}}});
    created(&app, CLASSES, &class("gvisor", selecting)).await;
    created(&app, CLASSES, &class("plain", json!({}))).await;

    let spec = json!({"runtimeClassName": "gvisor", "nodeSelector": {"sandbox": "kata"}});
    assert_eq!(
        refused(&app, &pod("p", spec)).await,
        "pods \"p\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = \
         gvisor; pod.spec.nodeSelector[sandbox] = kata"
    );
    let spec = json!({"runtimeClassName": "gvisor", "overhead": {"cpu": "2"}});
    assert_eq!(
        refused(&app, &pod("p", spec)).await,
        "pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's \
         defined Overhead"
    );
    let spec = json!({"runtimeClassName": "plain", "overhead": {"cpu": "2"}});
    assert_eq!(
        refused(&app, &pod("p", spec)).await,
        "pods \"p\" is forbidden: pod rejected: Pod Overhead set without corresponding \
         RuntimeClass defined Overhead"
    );
    let spec = json!({"overhead": {"cpu": "2"}});
    assert_eq!(
        refused(&app, &pod("p", spec)).await,
        "pods \"p\" is forbidden: pod rejected: Pod Overhead set without corresponding \
         RuntimeClass defined Overhead"
    );
    let spec = json!({"runtimeClassName": "missing"});
    assert_eq!(
        refused(&app, &pod("p", spec)).await,
        "pods \"p\" is forbidden: pod rejected: RuntimeClass \"missing\" not found"
    );
}

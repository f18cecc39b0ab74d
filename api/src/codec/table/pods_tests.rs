use chrono::TimeZone;
use serde_json::Value;
use serde_json::json;

use super::*;
use crate::flavor::Flavor;

fn ctx() -> PrintContext {
    PrintContext {
        now: Utc.with_ymd_and_hms(2026, 1, 1, 12, 0, 0).unwrap(),
        flavor: Flavor::Kubernetes,
    }
}

fn pod(spec: Value, status: Value) -> Value {
    json!({
        "metadata": {"name": "web-0", "namespace": "default", "creationTimestamp": "2026-01-01T10:00:00Z"},
        "spec": spec,
        "status": status,
    })
}

fn cells(pod: &Value) -> Vec<Value> {
    pod_row(pod, &ctx()).cells
}

fn running(name: &str, ready: bool, restarts: i64) -> Value {
    json!({"name": name, "ready": ready, "restartCount": restarts, "state": {"running": {"startedAt": "2026-01-01T10:00:05Z"}}})
}

#[test]
fn running_pod_counts_ready_containers_and_restarts_with_their_age() {
    let mut app = running("app", true, 3);
    app["lastState"] = json!({"terminated": {"exitCode": 1, "finishedAt": "2026-01-01T11:55:00Z"}});
    let p = pod(
        json!({"nodeName": "node-a", "containers": [{"name": "app"}, {"name": "log"}], "readinessGates": [{"conditionType": "example.com/lb"}, {"conditionType": "example.com/dns"}]}),
        json!({
            "phase": "Running",
            "podIPs": [{"ip": "10.0.0.7"}],
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "example.com/lb", "status": "True"}],
            "containerStatuses": [app, running("log", false, 0)]
        }),
    );
    assert_eq!(
        cells(&p),
        vec![
            json!("web-0"),
            json!("1/2"),
            json!("Running"),
            json!("3 (5m ago)"),
            json!("120m"),
            json!("10.0.0.7"),
            json!("node-a"),
            json!("<none>"),
            json!("1/2"),
        ]
    );
    assert!(pod_row(&p, &ctx()).conditions.is_empty());
}

#[test]
fn init_containers_show_progress_and_failures() {
    let spec =
        json!({"initContainers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "app"}]});
    let waiting = |reason: &str| json!({"name": "app", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": reason}}});
    let progress = pod(
        spec.clone(),
        json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "a", "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            {"name": "b", "restartCount": 0, "state": {"running": {}}}
        ], "containerStatuses": [waiting("PodInitializing")]}),
    );
    assert_eq!(cells(&progress)[2], json!("Init:1/2"));
    let crash = pod(
        spec.clone(),
        json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "a", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
        ]}),
    );
    assert_eq!(cells(&crash)[2], json!("Init:CrashLoopBackOff"));
    assert_eq!(cells(&crash)[3], json!("4"));
    let exit = pod(
        spec.clone(),
        json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "a", "restartCount": 0, "state": {"terminated": {"exitCode": 2}}}
        ]}),
    );
    assert_eq!(cells(&exit)[2], json!("Init:ExitCode:2"));
    let signal = pod(
        spec,
        json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "a", "restartCount": 0, "state": {"terminated": {"exitCode": 137, "signal": 9}}}
        ]}),
    );
    assert_eq!(cells(&signal)[2], json!("Init:Signal:9"));
}

#[test]
fn container_reasons_win_over_the_phase() {
    let p = pod(
        json!({"containers": [{"name": "app"}]}),
        json!({"phase": "Running", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 7, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
        ]}),
    );
    assert_eq!(
        cells(&p)[1..4],
        [json!("0/1"), json!("CrashLoopBackOff"), json!("7")]
    );
    let exit = pod(
        json!({"containers": [{"name": "app"}]}),
        json!({"phase": "Failed", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 3}}}
        ]}),
    );
    assert_eq!(cells(&exit)[2], json!("ExitCode:3"));
    let row = pod_row(&exit, &ctx());
    assert_eq!(row.conditions[0]["reason"], json!("Failed"));
}

#[test]
fn completed_pods_carry_the_completed_condition() {
    let p = pod(
        json!({"containers": [{"name": "app"}]}),
        json!({"phase": "Succeeded", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
        ]}),
    );
    let row = pod_row(&p, &ctx());
    assert_eq!(row.cells[2], json!("Completed"));
    assert_eq!(
        row.conditions,
        vec![
            json!({"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."})
        ]
    );
}

#[test]
fn a_completed_container_beside_a_running_one_is_running_or_not_ready() {
    let status = |ready: &str| {
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": ready}], "containerStatuses": [
            running("a", true, 0),
            {"name": "b", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
        ]})
    };
    let spec = json!({"containers": [{"name": "a"}, {"name": "b"}]});
    assert_eq!(
        cells(&pod(spec.clone(), status("True")))[2],
        json!("Running")
    );
    assert_eq!(cells(&pod(spec, status("False")))[2], json!("NotReady"));
}

#[test]
fn deletion_gated_scheduling_and_lost_nodes() {
    let mut deleting = pod(
        json!({"containers": [{"name": "app"}]}),
        json!({"phase": "Running", "containerStatuses": [running("app", true, 0)]}),
    );
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T11:59:00Z");
    assert_eq!(cells(&deleting)[2], json!("Terminating"));
    let mut lost = deleting.clone();
    lost["status"]["reason"] = json!("NodeLost");
    assert_eq!(cells(&lost)[2], json!("Unknown"));
    let gated = pod(
        json!({"containers": [{"name": "app"}], "schedulingGates": [{"name": "wait"}]}),
        json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
    );
    assert_eq!(
        cells(&gated)[1..3],
        [json!("0/1"), json!("SchedulingGated")]
    );
    assert_eq!(
        cells(&gated)[5..],
        [
            json!("<none>"),
            json!("<none>"),
            json!("<none>"),
            json!("<none>")
        ]
    );
}

#[test]
fn started_sidecars_count_as_containers_and_their_restarts_stay() {
    let p = pod(
        json!({"initContainers": [{"name": "proxy", "restartPolicy": "Always"}], "containers": [{"name": "app"}]}),
        json!({
            "phase": "Running",
            "conditions": [{"type": "Initialized", "status": "True"}],
            "initContainerStatuses": [{"name": "proxy", "ready": true, "started": true, "restartCount": 2, "state": {"running": {}}}],
            "containerStatuses": [running("app", true, 1)]
        }),
    );
    assert_eq!(
        cells(&p)[1..4],
        [json!("2/2"), json!("Running"), json!("3")]
    );
}

#[test]
fn pod_templates_list_containers_images_and_labels() {
    let t = json!({
        "metadata": {"name": "t"},
        "template": {"metadata": {"labels": {"run": "x", "app": "y"}}, "spec": {"containers": [
            {"name": "a", "image": "nginx:1"}, {"name": "b", "image": "busybox"}
        ]}}
    });
    assert_eq!(
        pod_template_row(&t, &ctx()).cells,
        vec![
            json!("t"),
            json!("a,b"),
            json!("nginx:1,busybox"),
            json!("app=y,run=x")
        ]
    );
}

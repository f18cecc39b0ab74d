//! Tests of a pod's quota usage: compute resources, scopes, finished pods.

use chrono::TimeZone;
use serde_json::json;

use super::*;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

fn container(name: &str, resources: Value) -> Value {
    json!({"name": name, "image": "i", "resources": resources})
}

#[test]
fn a_pod_costs_its_containers_requests_and_limits() {
    let pod = json!({"spec": {"containers": [
        container("a", json!({"requests": {"cpu": "100m", "memory": "64Mi", "nvidia.com/gpu": "1",
                                           "hugepages-2Mi": "2Mi"},
                              "limits": {"cpu": "200m"}})),
        container("b", json!({"requests": {"cpu": "400m"}, "limits": {"cpu": "1", "memory": "1Gi"}})),
    ]}});
    assert_eq!(
        usage(&pod, now()).to_string(),
        "count/pods=1,cpu=500m,hugepages-2Mi=2Mi,limits.cpu=1200m,limits.memory=1Gi,memory=64Mi,\
         pods=1,requests.cpu=500m,requests.hugepages-2Mi=2Mi,requests.memory=64Mi,\
         requests.nvidia.com/gpu=1"
    );
}

#[test]
fn init_containers_and_sidecars_raise_the_pod_requests_as_kubernetes_sums_them() {
    let pod = json!({"spec": {
        "initContainers": [
            {"name": "sidecar", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": "100m"}}},
            container("setup", json!({"requests": {"cpu": "2"}})),
        ],
        "containers": [container("app", json!({"requests": {"cpu": "500m"}}))],
        "overhead": {"cpu": "10m"}}});
    // max(500m + 100m, 2 + 100m) + 10m overhead
    assert_eq!(
        usage(&pod, now())
            .get("requests.cpu")
            .map(|q| q.to_string()),
        Some("2110m".into())
    );
}

#[test]
fn finished_pods_and_pods_past_their_deletion_grace_cost_only_their_count() {
    let finished = json!({"spec": {"containers": [container("a", json!({"requests": {"cpu": "1"}}))]},
                          "status": {"phase": "Succeeded"}});
    assert_eq!(usage(&finished, now()).to_string(), "count/pods=1");
    let deleted = json!({"metadata": {"deletionTimestamp": "2025-12-31T23:59:00Z",
                                      "deletionGracePeriodSeconds": 30},
                         "spec": {"containers": []}});
    assert_eq!(usage(&deleted, now()).to_string(), "count/pods=1");
    let grace = json!({"metadata": {"deletionTimestamp": "2025-12-31T23:59:50Z",
                                    "deletionGracePeriodSeconds": 30},
                       "spec": {"containers": []}});
    assert_eq!(usage(&grace, now()).to_string(), "count/pods=1,pods=1");
}

#[test]
fn pod_scopes_follow_deadline_qos_priority_and_affinity() {
    let scope = |name: &str| ScopeSelector {
        scope: name.into(),
        operator: "Exists".into(),
        values: Vec::new(),
    };
    let best_effort = json!({"spec": {"containers": [container("a", json!({}))]}});
    let burstable = json!({"spec": {"activeDeadlineSeconds": 10, "priorityClassName": "high",
        "containers": [container("a", json!({"requests": {"cpu": "1"}}))],
        "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "k", "namespaces": ["other"]}]}}}});
    assert!(matches_scope(&scope("BestEffort"), &best_effort));
    assert!(matches_scope(&scope("NotTerminating"), &best_effort));
    assert!(!matches_scope(&scope("PriorityClass"), &best_effort));
    assert!(!matches_scope(
        &scope("CrossNamespacePodAffinity"),
        &best_effort
    ));
    assert!(matches_scope(&scope("NotBestEffort"), &burstable));
    assert!(matches_scope(&scope("Terminating"), &burstable));
    assert!(matches_scope(&scope("PriorityClass"), &burstable));
    assert!(matches_scope(
        &scope("CrossNamespacePodAffinity"),
        &burstable
    ));
    let in_low = ScopeSelector {
        scope: "PriorityClass".into(),
        operator: "In".into(),
        values: vec!["low".into()],
    };
    assert!(!matches_scope(&in_low, &burstable));
}

#[test]
fn cpu_and_memory_quotas_require_every_container_to_state_them() {
    let pod = json!({"spec": {
        "initContainers": [container("init", json!({"limits": {"cpu": "1"}}))],
        "containers": [container("b", json!({"requests": {"cpu": "1"}})), container("a", json!({}))]}});
    let required = [
        "limits.cpu".to_owned(),
        "requests.memory".to_owned(),
        "pods".to_owned(),
    ];
    assert_eq!(
        constraints(&required, &pod),
        Err("must specify limits.cpu for: a,b; requests.memory for: a,b,init".to_owned())
    );
    assert_eq!(
        constraints(&["pods".to_owned(), "requests.storage".to_owned()], &pod),
        Ok(())
    );
}

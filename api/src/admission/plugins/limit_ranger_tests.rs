use serde_json::json;

use super::*;

fn range(limits: Value) -> Value {
    json!({"spec": {"limits": limits}})
}

fn container(name: &str, requests: Value, limits: Value) -> Value {
    json!({"name": name, "resources": {"requests": requests, "limits": limits}})
}

#[test]
fn defaults_fill_only_what_containers_lack_and_say_so() {
    let range = range(json!([{"type": "Container",
        "default": {"cpu": "500m", "memory": "256Mi"},
        "defaultRequest": {"cpu": "100m"}}]));
    let mut pod = json!({"spec": {
        "containers": [container("a", json!({}), json!({"cpu": "1"}))],
        "initContainers": [{"name": "i"}]}});
    let notes = apply_defaults(&range, &mut pod);
    assert_eq!(
        notes,
        [
            "cpu request for container a",
            "memory limit for container a",
            "cpu request for init container i",
            "cpu, memory limit for init container i",
        ]
    );
    assert_eq!(
        pod["spec"]["containers"][0]["resources"],
        json!({"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "memory": "256Mi"}})
    );
}

#[test]
fn container_bounds_give_kubernetes_messages() {
    let range = range(json!([{"type": "Container",
        "min": {"cpu": "100m"}, "max": {"memory": "1Gi"},
        "maxLimitRequestRatio": {"cpu": "2"}}]));
    let pod = |requests: Value, limits: Value| json!({"spec": {"containers": [container("c", requests, limits)]}});
    let fine = pod(
        json!({"cpu": "100m"}),
        json!({"cpu": "200m", "memory": "1Gi"}),
    );
    assert!(pod_errors(&range, &fine).is_empty());

    let low = pod(
        json!({"cpu": "50m"}),
        json!({"cpu": "100m", "memory": "2Gi"}),
    );
    assert_eq!(
        pod_errors(&range, &low),
        [
            "minimum cpu usage per Container is 100m, but request is 50m",
            "maximum memory usage per Container is 1Gi, but limit is 2Gi",
        ]
    );
    let none = pod(json!({}), json!({}));
    assert_eq!(
        pod_errors(&range, &none),
        [
            "minimum cpu usage per Container is 100m.  No request is specified",
            "maximum memory usage per Container is 1Gi.  No limit is specified",
            "cpu max limit to request ratio per Container is 2, but no request is specified or \
             request is 0",
        ]
    );
    let wide = pod(
        json!({"cpu": "100m"}),
        json!({"cpu": "300m", "memory": "1Gi"}),
    );
    assert_eq!(
        pod_errors(&range, &wide),
        ["cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000"]
    );
    assert_eq!(
        aggregate(&pod_errors(&range, &low)),
        format!("[{}]", pod_errors(&range, &low).join(", "))
    );
}

#[test]
fn pod_bounds_sum_the_containers_and_count_init_containers_at_their_peak() {
    let pod = json!({"spec": {
    "containers": [
        container("a", json!({"cpu": "200m"}), json!({})),
        container("b", json!({"cpu": "300m"}), json!({})),
    ],
    "initContainers": [
        container("init", json!({"cpu": "1"}), json!({})),
        {"name": "sidecar", "restartPolicy": "Always",
         "resources": {"requests": {"cpu": "100m"}}},
    ]}});
    let (requests, _) = pod_resources(&pod);
    assert_eq!(
        find(&requests, "cpu").map(|q| q.to_string()),
        Some("1".to_owned())
    );
    let range = range(json!([{"type": "Pod", "max": {"cpu": "500m"}}]));
    assert_eq!(
        pod_errors(&range, &pod),
        ["maximum cpu usage per Pod is 500m.  No limit is specified"]
    );

    let sidecar_first = json!({"spec": {
    "containers": [container("a", json!({"cpu": "200m"}), json!({}))],
    "initContainers": [
        {"name": "sidecar", "restartPolicy": "Always",
         "resources": {"requests": {"cpu": "300m"}}},
        container("init", json!({"cpu": "400m"}), json!({})),
    ]}});
    let (requests, _) = pod_resources(&sidecar_first);
    assert_eq!(
        find(&requests, "cpu").map(|q| q.to_string()),
        Some("700m".to_owned()),
        "the init container runs beside the sidecar: 400m + 300m beats 200m + 300m"
    );
}

#[test]
fn claims_are_bounded_on_their_storage_request() {
    let range = range(json!([{"type": "PersistentVolumeClaim",
        "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}]));
    let claim = |size: &str| json!({"spec": {"resources": {"requests": {"storage": size}}}});
    assert!(claim_errors(&range, &claim("5Gi")).is_empty());
    assert_eq!(
        claim_errors(&range, &claim("20Gi")),
        ["maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"]
    );
    assert_eq!(
        claim_errors(&range, &claim("500Mi")),
        ["minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"]
    );
}

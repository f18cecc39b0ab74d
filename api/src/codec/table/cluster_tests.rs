use chrono::TimeZone;
use chrono::Utc;
use serde_json::json;

use super::*;
use crate::flavor::Flavor;

fn ctx(flavor: Flavor) -> PrintContext {
    PrintContext {
        now: Utc.with_ymd_and_hms(2026, 1, 1, 1, 0, 0).unwrap(),
        flavor,
    }
}

#[test]
fn nodes_show_readiness_roles_and_system_info() {
    let node = json!({
        "metadata": {"name": "n1", "creationTimestamp": "2026-01-01T00:00:00Z",
                     "labels": {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "", "kubernetes.io/role": "infra"}},
        "spec": {"unschedulable": true},
        "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}],
                   "addresses": [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP", "address": "192.168.0.2"}],
                   "nodeInfo": {"kubeletVersion": "v1.35.0", "osImage": "Debian"}}
    });
    assert_eq!(
        node_row(&node, &ctx(Flavor::Kubernetes)).cells,
        vec![
            json!("n1"),
            json!("Ready,SchedulingDisabled"),
            json!("control-plane,infra"),
            json!("60m"),
            json!("v1.35.0"),
            json!("192.168.0.2"),
            json!("<none>"),
            json!("Debian"),
            json!("<unknown>"),
            json!("<unknown>")
        ]
    );
    let bare = json!({"metadata": {"name": "n2"}});
    assert_eq!(
        node_row(&bare, &ctx(Flavor::Platform)).cells[1..3],
        [json!("Unknown"), json!("<none>")]
    );
}

#[test]
fn config_secrets_accounts_and_namespaces_count_their_entries() {
    let cm = json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
    assert_eq!(
        config_map_row(&cm, &ctx(Flavor::Kubernetes)).cells[1],
        json!(3)
    );
    let secret = json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"k": "dg=="}});
    assert_eq!(
        secret_row(&secret, &ctx(Flavor::Kubernetes)).cells[1..3],
        [json!("Opaque"), json!(1)]
    );
    let sa = json!({"metadata": {"name": "default"}});
    assert_eq!(
        service_account_row(&sa, &ctx(Flavor::Kubernetes)).cells[1],
        json!(0)
    );
    let ns = json!({"metadata": {"name": "kube-system"}, "status": {"phase": "Active"}});
    assert_eq!(
        namespace_row(&ns, &ctx(Flavor::Kubernetes)).cells[1],
        json!("Active")
    );
}

#[test]
fn quotas_split_requests_from_limits() {
    let quota = json!({"metadata": {"name": "q"}, "status": {
        "hard": {"pods": "10", "limits.cpu": "4", "requests.cpu": "2"},
        "used": {"pods": "3", "requests.cpu": "500m"}
    }});
    assert_eq!(
        resource_quota_row(&quota, &ctx(Flavor::Kubernetes)).cells[1..3],
        [
            json!("pods: 3/10, requests.cpu: 500m/2"),
            json!("limits.cpu: 0/4")
        ]
    );
}

#[test]
fn claims_components_leases_and_priority_classes() {
    let claim = json!({"metadata": {"name": "gpu"}, "status": {"allocation": {}, "reservedFor": [{"name": "p"}]}});
    assert_eq!(
        resource_claim_row(&claim, &ctx(Flavor::Kubernetes)).cells[1],
        json!("allocated,reserved")
    );
    let pending = json!({"metadata": {"name": "gpu", "deletionTimestamp": "2026-01-01T00:00:00Z"}});
    assert_eq!(
        resource_claim_row(&pending, &ctx(Flavor::Kubernetes)).cells[1],
        json!("deleted")
    );
    let cs = json!({"metadata": {"name": "etcd-0"}, "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]});
    assert_eq!(
        component_status_row(&cs, &ctx(Flavor::Kubernetes)).cells[1..4],
        [json!("Healthy"), json!("ok"), json!("")]
    );
    let lease = json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "a_1"}});
    assert_eq!(
        lease_row(&lease, &ctx(Flavor::Kubernetes)).cells[1],
        json!("a_1")
    );
    let pc = json!({"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"});
    assert_eq!(
        priority_class_row(&pc, &ctx(Flavor::Kubernetes)).cells[1..5],
        [
            json!(1000),
            json!(false),
            json!("<unknown>"),
            json!("Never")
        ]
    );
}

//! Tests of the evaluators: which writes each handles and the usage it counts.

use chrono::Utc;
use serde_json::json;

use super::*;

#[test]
fn quota_resource_names_find_their_evaluator() {
    let of = Evaluator::for_quota_resource;
    assert_eq!(of("pods"), Some(Evaluator::Pods));
    assert_eq!(of("requests.nvidia.com/gpu"), Some(Evaluator::Pods));
    assert_eq!(of("count/pods"), Some(Evaluator::Pods));
    assert_eq!(of("services.nodeports"), Some(Evaluator::Services));
    assert_eq!(
        of("gold.storageclass.storage.k8s.io/requests.storage"),
        Some(Evaluator::Claims)
    );
    assert_eq!(of("requests.storage"), Some(Evaluator::Claims));
    assert_eq!(of("configmaps"), Some(Evaluator::of("", "configmaps")));
    assert_eq!(
        of("count/deployments.apps"),
        Some(Evaluator::Count {
            group: "apps".into(),
            plural: "deployments".into()
        })
    );
    assert_eq!(of("services.bogus"), None);
    assert_eq!(of("bogus"), None);
}

#[test]
fn object_counts_are_charged_on_create_only() {
    let widgets = Evaluator::of("example.com", "widgets");
    let object = json!({});
    let write = |operation, subresource| Write {
        operation,
        subresource,
        object: &object,
        old: None,
    };
    assert!(widgets.handles(&write(Operation::Create, "")));
    assert!(!widgets.handles(&write(Operation::Update, "")));
    assert!(!widgets.handles(&write(Operation::Create, "status")));
    assert_eq!(
        widgets.usage(&object, Utc::now()).to_string(),
        "count/widgets.example.com=1"
    );
    let secrets = Evaluator::of("", "secrets");
    assert_eq!(
        secrets.usage(&object, Utc::now()).to_string(),
        "count/secrets=1,secrets=1"
    );
    assert!(secrets.covers("secrets") && secrets.covers("count/secrets"));
    assert!(!Evaluator::of("apps", "secrets").covers("secrets"));
    assert!(!Evaluator::Pods.handles(&write(Operation::Create, "binding")));
    assert!(Evaluator::Services.handles(&write(Operation::Update, "")));
}

#[test]
fn services_cost_their_node_ports_and_load_balancers() {
    let service = |spec: Value| json!({"spec": spec});
    let usage = |spec| {
        Evaluator::Services
            .usage(&service(spec), Utc::now())
            .to_string()
    };
    assert_eq!(
        usage(json!({"type": "ClusterIP", "ports": [{"port": 80}]})),
        "count/services=1,services=1,services.loadbalancers=0,services.nodeports=0"
    );
    assert_eq!(
        usage(json!({"type": "NodePort", "ports": [{"port": 80}, {"port": 443}]})),
        "count/services=1,services=1,services.loadbalancers=0,services.nodeports=2"
    );
    assert_eq!(
        usage(
            json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false,
                     "ports": [{"port": 80, "nodePort": 30001}, {"port": 443}]})
        ),
        "count/services=1,services=1,services.loadbalancers=1,services.nodeports=1"
    );
}

#[test]
fn claims_cost_their_storage_also_by_class_rounded_to_whole_bytes() {
    let claim = json!({"spec": {"storageClassName": "gold",
        "resources": {"requests": {"storage": "1500m"}}}});
    assert_eq!(
        Evaluator::Claims.usage(&claim, Utc::now()).to_string(),
        "count/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,\
         gold.storageclass.storage.k8s.io/requests.storage=2,persistentvolumeclaims=1,\
         requests.storage=2"
    );
    let allocated = json!({"spec": {"resources": {"requests": {"storage": "1Gi"}}},
                           "status": {"allocatedResources": {"storage": "2Gi"}}});
    assert_eq!(
        Evaluator::Claims
            .usage(&allocated, Utc::now())
            .get("requests.storage")
            .map(|q| q.to_string()),
        Some("2Gi".into())
    );
}

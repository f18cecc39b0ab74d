//! The Service rules, one per test, with upstream's messages.

use serde_json::json;

use super::*;

fn svc(spec: Value) -> Value {
    let mut obj = json!({"metadata": {"name": "web", "namespace": "default"}, "spec": spec});
    ServiceStrategy.default_fields(&mut obj);
    ServiceStrategy.prepare_for_create(&mut obj);
    obj
}

/// Each error as `field: message`.
fn errors(obj: &Value) -> Vec<String> {
    ServiceStrategy
        .validate(obj)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn ports(ports: Value) -> Value {
    svc(json!({"clusterIP": "10.96.0.10", "ports": ports}))
}

#[test]
fn defaults_follow_kubernetes() {
    let obj = svc(json!({"clusterIP": "10.96.0.10", "ports": [{"port": 80}]}));
    let spec = &obj["spec"];
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(spec["clusterIPs"], json!(["10.96.0.10"]));
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    assert_eq!(spec["ipFamilies"], json!(["IPv4"]));
    assert_eq!(spec["ports"][0]["protocol"], "TCP");
    assert_eq!(spec["ports"][0]["targetPort"], 80);
    assert!(errors(&obj).is_empty(), "{:?}", errors(&obj));

    let headless = svc(json!({"clusterIP": "None"}));
    assert_eq!(headless["spec"]["ipFamilyPolicy"], "RequireDualStack");
    assert_eq!(headless["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
    assert!(errors(&headless).is_empty(), "{:?}", errors(&headless));
    let lb = svc(json!({"type": "LoadBalancer", "ports": [{"port": 80}]}));
    assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
    assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster");
}

#[test]
fn type_and_session_affinity_are_enums() {
    let obj = svc(json!({"type": "Weird", "sessionAffinity": "Sticky", "ports": [{"port": 80}]}));
    assert_eq!(
        errors(&obj),
        vec![
            r#"spec.type: Unsupported value: "Weird": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort""#,
            r#"spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None""#,
        ]
    );
}

#[test]
fn ports_are_required_unless_headless_or_external_name() {
    assert_eq!(errors(&svc(json!({}))), vec!["spec.ports: Required value"]);
    assert!(errors(&svc(json!({"clusterIP": "None"}))).is_empty());
    assert!(errors(&svc(json!({"type": "ExternalName", "externalName": "a.b"}))).is_empty());
}

#[test]
fn port_rules() {
    assert_eq!(
        errors(&ports(json!([{"port": 0}]))),
        vec![
            "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
            "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
        ],
        "targetPort defaults to port, and is checked as Kubernetes does"
    );
    assert_eq!(
        errors(&ports(json!([{"port": 80, "protocol": "ICMP"}]))),
        vec![
            r#"spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP""#
        ]
    );
    assert_eq!(
        errors(&ports(json!([{"name": "http", "port": 80}, {"port": 81}]))),
        vec!["spec.ports[1].name: Required value"]
    );
    assert_eq!(
        errors(&ports(
            json!([{"name": "http", "port": 80}, {"name": "http", "port": 81}])
        )),
        vec![r#"spec.ports[1].name: Duplicate value: "http""#]
    );
    assert_eq!(
        errors(&ports(json!([{"port": 80, "targetPort": 70000}]))),
        vec![
            "spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive"
        ]
    );
    assert_eq!(
        errors(&ports(json!([{"port": 80, "nodePort": 30080}]))),
        vec!["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]
    );
    assert_eq!(
        errors(&ports(json!([{"name": "Http", "port": 80}]))).len(),
        1,
        "port names are DNS labels"
    );
}

#[test]
fn external_name_rules() {
    assert_eq!(
        errors(&svc(json!({"type": "ExternalName"}))),
        vec!["spec.externalName: Required value"]
    );
    let with_ip =
        svc(json!({"type": "ExternalName", "externalName": "a.b", "clusterIP": "10.96.0.1"}));
    assert_eq!(
        errors(&with_ip),
        vec!["spec.clusterIPs: Forbidden: may not be set for ExternalName services"]
    );
    assert!(
        errors(&svc(
            json!({"type": "ExternalName", "externalName": "example.com."})
        ))
        .is_empty()
    );
}

#[test]
fn cluster_ip_fields_must_agree_and_be_single_stack_ipv4() {
    let mismatch = json!({"metadata": {"name": "web"}, "spec": {"type": "ClusterIP",
        "sessionAffinity": "None", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.2"],
        "ports": [{"port": 80, "protocol": "TCP"}]}});
    assert_eq!(
        errors(&mismatch),
        vec![
            r#"spec.clusterIPs: Invalid value: ["10.96.0.2"]: first value must match `clusterIP`"#
        ]
    );
    assert_eq!(
        errors(&ports_with_ip("x")),
        vec![
            r#"spec.clusterIPs[0]: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"#
        ]
    );
    assert_eq!(
        errors(&ports_with_ip("fd00::1")),
        vec![
            r#"spec.clusterIPs[0]: Invalid value: ["fd00::1"]: IPv6 is not configured on this cluster"#
        ]
    );
    let dual = svc(json!({"ipFamilyPolicy": "RequireDualStack", "ports": [{"port": 80}]}));
    assert_eq!(
        errors(&dual),
        vec![
            r#"spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services"#
        ]
    );
    let v6 = svc(json!({"ipFamilies": ["IPv6"], "ports": [{"port": 80}]}));
    assert_eq!(
        errors(&v6),
        vec![r#"spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster"#]
    );
}

fn ports_with_ip(ip: &str) -> Value {
    svc(json!({"clusterIP": ip, "ports": [{"port": 80}]}))
}

#[test]
fn names_are_dns_1035_labels() {
    let mut obj = ports(json!([{"port": 80}]));
    obj["metadata"]["name"] = "1web".into();
    assert_eq!(errors(&obj).len(), 1);
    assert!(
        errors(&obj)[0].starts_with(r#"metadata.name: Invalid value: "1web": a DNS-1035 label"#)
    );
    assert_eq!(ServiceStrategy.name_rule(), NameRule::DnsLabel);
}

#[test]
fn the_cluster_ip_may_not_change_once_set() {
    let old = ports(json!([{"port": 80}]));
    let mut new = old.clone();
    new["spec"]["clusterIP"] = "10.96.0.11".into();
    new["spec"]["clusterIPs"] = json!(["10.96.0.11"]);
    assert_eq!(
        ServiceStrategy
            .validate_update(&new, &old)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        vec![r#"spec.clusterIPs[0]: Invalid value: ["10.96.0.11"]: may not change once set"#]
    );
    new["spec"]["type"] = "ExternalName".into();
    assert!(
        ServiceStrategy.validate_update(&new, &old).is_empty(),
        "to ExternalName"
    );
    let mut unset = old.clone();
    unset["spec"]["clusterIPs"] = json!([]);
    assert_eq!(
        ServiceStrategy.validate_update(&unset, &old)[0].to_string(),
        "spec.clusterIPs[0]: Invalid value: []: primary clusterIP can not be unset"
    );
}

#[test]
fn an_update_keeps_the_allocated_values_it_leaves_out() {
    let old = json!({"spec": {"type": "NodePort", "clusterIP": "10.96.0.10",
        "clusterIPs": ["10.96.0.10"], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
        "ports": [{"name": "a", "port": 80, "nodePort": 30001}, {"name": "b", "port": 81, "nodePort": 30002}]}});
    let mut new = json!({"spec": {"type": "NodePort",
        "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81, "nodePort": 30001}]}});
    ServiceStrategy.prepare_for_update(&mut new, &old);
    assert_eq!(new["spec"]["clusterIP"], "10.96.0.10");
    assert_eq!(new["spec"]["clusterIPs"], json!(["10.96.0.10"]));
    assert!(
        new["spec"]["ports"][0].get("nodePort").is_none(),
        "30001 is used by another port now: {new}"
    );
    let mut to_cluster_ip =
        json!({"spec": {"type": "ClusterIP", "ports": [{"name": "a", "port": 80}]}});
    ServiceStrategy.prepare_for_update(&mut to_cluster_ip, &old);
    assert!(to_cluster_ip["spec"]["ports"][0].get("nodePort").is_none());
    assert_eq!(to_cluster_ip["spec"]["clusterIP"], "10.96.0.10");
}

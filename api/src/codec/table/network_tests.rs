use chrono::TimeZone;
use chrono::Utc;
use serde_json::json;

use super::*;
use crate::flavor::Flavor;

fn ctx() -> PrintContext {
    PrintContext {
        now: Utc.with_ymd_and_hms(2026, 1, 1, 0, 10, 0).unwrap(),
        flavor: Flavor::Kubernetes,
    }
}

#[test]
fn services_print_type_addresses_and_ports() {
    let svc = json!({
        "metadata": {"name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"type": "NodePort", "clusterIPs": ["10.96.0.10"], "selector": {"app": "web"},
                 "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}
    });
    assert_eq!(
        service_row(&svc, &ctx()).cells,
        vec![
            json!("web"),
            json!("NodePort"),
            json!("10.96.0.10"),
            json!("<none>"),
            json!("80:30080/TCP,53/UDP"),
            json!("10m"),
            json!("app=web")
        ]
    );
    let lb = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "ports": []}});
    assert_eq!(
        service_row(&lb, &ctx()).cells[2..5],
        [json!("<none>"), json!("<pending>"), json!("<none>")]
    );
    let lb_up = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "externalIPs": ["1.2.3.4"]},
        "status": {"loadBalancer": {"ingress": [{"hostname": "b.example"}, {"ip": "5.6.7.8"}]}}});
    assert_eq!(
        service_row(&lb_up, &ctx()).cells[3],
        json!("5.6.7.8,b.example,1.2.3.4")
    );
    let ext = json!({"metadata": {"name": "x"}, "spec": {"type": "ExternalName", "externalName": "db.example"}});
    assert_eq!(service_row(&ext, &ctx()).cells[3], json!("db.example"));
}

#[test]
fn endpoints_show_three_addresses_then_a_count() {
    let ep = json!({"metadata": {"name": "web"}, "subsets": [
        {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443}]},
        {"addresses": [{"ip": "fd00::1"}]}
    ]});
    assert_eq!(
        endpoints_row(&ep, &ctx()).cells[1],
        json!("10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more...")
    );
    let none = json!({"metadata": {"name": "e"}});
    assert_eq!(endpoints_row(&none, &ctx()).cells[1], json!("<none>"));
    let slice = json!({"metadata": {"name": "web-abc"}, "addressType": "IPv4",
        "ports": [{"port": 80}, {"name": "dns"}, {}],
        "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}]});
    assert_eq!(
        endpoint_slice_row(&slice, &ctx()).cells[1..4],
        [json!("IPv4"), json!("80,dns,*"), json!("10.0.0.1,10.0.0.2")]
    );
}

#[test]
fn ingresses_classes_and_policies() {
    let ing = json!({"metadata": {"name": "shop"}, "spec": {
        "ingressClassName": "nginx",
        "rules": [{"host": "a.example"}, {}, {"host": "b.example"}, {"host": "c.example"}, {"host": "d.example"}],
        "tls": [{"hosts": ["a.example"]}]
    }, "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}});
    assert_eq!(
        ingress_row(&ing, &ctx()).cells[1..5],
        [
            json!("nginx"),
            json!("a.example,b.example,c.example + 2 more..."),
            json!("192.0.2.1"),
            json!("80, 443")
        ]
    );
    let bare = json!({"metadata": {"name": "x"}, "spec": {}});
    assert_eq!(
        ingress_row(&bare, &ctx()).cells[1..5],
        [json!("<none>"), json!("*"), json!(""), json!("80")]
    );
    let class = json!({"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx",
        "parameters": {"apiGroup": "example.com", "kind": "Params", "name": "p"}}});
    assert_eq!(
        ingress_class_row(&class, &ctx()).cells[2],
        json!("Params.example.com/p")
    );
    let policy = json!({"metadata": {"name": "deny"}, "spec": {"podSelector": {}}});
    assert_eq!(
        network_policy_row(&policy, &ctx()).cells[1],
        json!("<none>")
    );
    let ip = json!({"metadata": {"name": "10.96.0.1"}, "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "default", "name": "kubernetes"}}});
    assert_eq!(
        ip_address_row(&ip, &ctx()).cells[1],
        json!("services/default/kubernetes")
    );
}

//! Networking: services, endpoints, endpoint slices, ingresses, ingress classes, network
//! policies, service CIDRs and IP addresses.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::discovery::v1 as discovery;
use k8s_openapi::api::networking::v1 as networking;
use serde_json::Value;

use super::columns::AGE;
use super::columns::Column;
use super::columns::Doc;
use super::columns::NAME;
use super::columns::schema_of;
use super::format;
use super::format::int;
use super::format::text;
use super::printer::Group;
use super::printer::PrintContext;
use super::printer::Printer;
use super::printer::Row;

/// The printers of this family.
pub(super) const PRINTERS: &[Printer] = &[
    Printer {
        group: Group::Core,
        resources: &["services"],
        columns: &[
            NAME,
            Column::string("Type", Doc::Field(schema_of::<core::ServiceSpec>, "type")),
            Column::string(
                "Cluster-IP",
                Doc::Field(schema_of::<core::ServiceSpec>, "clusterIP"),
            ),
            Column::string(
                "External-IP",
                Doc::Field(schema_of::<core::ServiceSpec>, "externalIPs"),
            ),
            Column::string(
                "Port(s)",
                Doc::Field(schema_of::<core::ServiceSpec>, "ports"),
            ),
            AGE,
            Column::string(
                "Selector",
                Doc::Field(schema_of::<core::ServiceSpec>, "selector"),
            )
            .wide(),
        ],
        row: service_row,
        order: None,
    },
    Printer {
        group: Group::Core,
        resources: &["endpoints"],
        columns: &[
            NAME,
            Column::string(
                "Endpoints",
                Doc::Field(schema_of::<core::Endpoints>, "subsets"),
            ),
            AGE,
        ],
        row: endpoints_row,
        order: None,
    },
    Printer {
        group: Group::Domain("discovery"),
        resources: &["endpointslices"],
        columns: &[
            NAME,
            Column::string(
                "AddressType",
                Doc::Field(schema_of::<discovery::EndpointSlice>, "addressType"),
            ),
            Column::string(
                "Ports",
                Doc::Field(schema_of::<discovery::EndpointSlice>, "ports"),
            ),
            Column::string(
                "Endpoints",
                Doc::Field(schema_of::<discovery::EndpointSlice>, "endpoints"),
            ),
            AGE,
        ],
        row: endpoint_slice_row,
        order: None,
    },
    Printer {
        group: Group::Domain("networking"),
        resources: &["ingresses"],
        columns: &[
            NAME,
            Column::string(
                "Class",
                Doc::Text(
                    "The name of the IngressClass resource that should be used for additional \
                     configuration",
                ),
            ),
            Column::string(
                "Hosts",
                Doc::Text(
                    "Hosts that incoming requests are matched against before the ingress rule",
                ),
            ),
            Column::string(
                "Address",
                Doc::Text("Address is a list containing ingress points for the load-balancer"),
            ),
            Column::string("Ports", Doc::Text("Ports of TLS configurations that open")),
            AGE,
        ],
        row: ingress_row,
        order: None,
    },
    Printer {
        group: Group::Domain("networking"),
        resources: &["ingressclasses"],
        columns: &[
            NAME,
            Column::string(
                "Controller",
                Doc::Text("Controller that is responsible for handling this class"),
            ),
            Column::string(
                "Parameters",
                Doc::Text("A reference to a resource with additional parameters"),
            ),
            AGE,
        ],
        row: ingress_class_row,
        order: None,
    },
    Printer {
        group: Group::Domain("networking"),
        resources: &["networkpolicies"],
        columns: &[
            NAME,
            Column::string(
                "Pod-Selector",
                Doc::Field(schema_of::<networking::NetworkPolicySpec>, "podSelector"),
            ),
            AGE,
        ],
        row: network_policy_row,
        order: None,
    },
    Printer {
        group: Group::Domain("networking"),
        resources: &["servicecidrs"],
        columns: &[
            NAME,
            Column::string(
                "CIDRs",
                Doc::Field(schema_of::<networking::ServiceCIDRSpec>, "cidrs"),
            ),
            AGE,
        ],
        row: service_cidr_row,
        order: None,
    },
    Printer {
        group: Group::Domain("networking"),
        resources: &["ipaddresses"],
        columns: &[
            NAME,
            Column::string(
                "ParentRef",
                Doc::Field(schema_of::<networking::IPAddressSpec>, "parentRef"),
            ),
        ],
        row: ip_address_row,
        order: None,
    },
];

fn name(v: &Value) -> Value {
    text(v, "/metadata/name").into()
}

/// The load balancer ingress points (IP, else hostname), sorted and distinct.
fn load_balancer(v: &Value, pointer: &str) -> String {
    let points: BTreeSet<&str> = format::items(v, pointer)
        .iter()
        .map(|i| match text(i, "/ip") {
            "" => text(i, "/hostname"),
            ip => ip,
        })
        .filter(|p| !p.is_empty())
        .collect();
    points.into_iter().collect::<Vec<_>>().join(",")
}

fn external_ip(svc: &Value) -> String {
    let external: Vec<&str> = format::items(svc, "/spec/externalIPs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match text(svc, "/spec/type") {
        "ClusterIP" | "NodePort" if !external.is_empty() => external.join(","),
        "ClusterIP" | "NodePort" => "<none>".to_owned(),
        "LoadBalancer" => {
            let lb = load_balancer(svc, "/status/loadBalancer/ingress");
            if !external.is_empty() {
                let mut all: Vec<&str> = lb.split(',').filter(|s| !s.is_empty()).collect();
                all.extend(external);
                all.join(",")
            } else if lb.is_empty() {
                "<pending>".to_owned()
            } else {
                lb
            }
        }
        "ExternalName" => text(svc, "/spec/externalName").to_owned(),
        _ => "<unknown>".to_owned(),
    }
}

fn service_row(svc: &Value, ctx: &PrintContext) -> Row {
    let cluster_ip = format::items(svc, "/spec/clusterIPs")
        .first()
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let ports: Vec<String> = format::items(svc, "/spec/ports")
        .iter()
        .map(|p| {
            let protocol = text(p, "/protocol");
            match int(p, "/nodePort") {
                n if n > 0 => format!("{}:{n}/{protocol}", int(p, "/port")),
                _ => format!("{}/{protocol}", int(p, "/port")),
            }
        })
        .collect();
    vec![
        name(svc),
        text(svc, "/spec/type").into(),
        cluster_ip.into(),
        external_ip(svc).into(),
        format::or(&ports.join(","), "<none>").into(),
        format::age(svc, ctx.now).into(),
        format::labels(svc.pointer("/spec/selector")).into(),
    ]
    .into()
}

/// The addresses of an Endpoints (`ip:port`, or `ip` for subsets without ports), at most
/// three then `+ N more...`.
fn endpoints_cell(ep: &Value) -> String {
    let subsets = format::items(ep, "/subsets");
    if subsets.is_empty() {
        return "<none>".to_owned();
    }
    let mut list = Vec::new();
    let mut total = 0;
    for subset in subsets {
        let addresses = format::items(subset, "/addresses");
        let ports = format::items(subset, "/ports");
        if ports.is_empty() {
            total += addresses.len();
            list.extend(addresses.iter().map(|a| text(a, "/ip").to_owned()));
            continue;
        }
        for port in ports {
            total += addresses.len();
            let number = int(port, "/port");
            list.extend(addresses.iter().map(|a| {
                let ip = text(a, "/ip");
                if ip.contains(':') {
                    format!("[{ip}]:{number}")
                } else {
                    format!("{ip}:{number}")
                }
            }));
        }
    }
    let shown = list.iter().take(3).cloned().collect::<Vec<_>>().join(",");
    if total > 3 {
        format!("{shown} + {} more...", total - 3)
    } else {
        shown
    }
}

fn endpoints_row(ep: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(ep),
        endpoints_cell(ep).into(),
        format::age(ep, ctx.now).into(),
    ]
    .into()
}

fn endpoint_slice_row(slice: &Value, ctx: &PrintContext) -> Row {
    let ports: Vec<String> = format::items(slice, "/ports")
        .iter()
        .map(|p| match p.get("port").and_then(Value::as_i64) {
            Some(n) => n.to_string(),
            None => match p.get("name").and_then(Value::as_str) {
                Some(name) => name.to_owned(),
                None => "*".to_owned(),
            },
        })
        .collect();
    let addresses: Vec<String> = format::items(slice, "/endpoints")
        .iter()
        .flat_map(|e| format::items(e, "/addresses"))
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    vec![
        name(slice),
        text(slice, "/addressType").into(),
        format::list_with_more(&ports, ports.len(), 3).into(),
        format::list_with_more(&addresses, addresses.len(), 3).into(),
        format::age(slice, ctx.now).into(),
    ]
    .into()
}

fn ingress_row(ing: &Value, ctx: &PrintContext) -> Row {
    let rules = format::items(ing, "/spec/rules");
    let (mut hosts, mut more) = (Vec::new(), false);
    for rule in rules {
        more |= hosts.len() == 3;
        if !more && !text(rule, "/host").is_empty() {
            hosts.push(text(rule, "/host"));
        }
    }
    let hosts_cell = if hosts.is_empty() {
        "*".to_owned()
    } else if more {
        format!("{} + {} more...", hosts.join(","), rules.len() - 3)
    } else {
        hosts.join(",")
    };
    let ports = if format::items(ing, "/spec/tls").is_empty() {
        "80"
    } else {
        "80, 443"
    };
    vec![
        name(ing),
        format::or(text(ing, "/spec/ingressClassName"), "<none>").into(),
        hosts_cell.into(),
        load_balancer(ing, "/status/loadBalancer/ingress").into(),
        ports.into(),
        format::age(ing, ctx.now).into(),
    ]
    .into()
}

fn ingress_class_row(class: &Value, ctx: &PrintContext) -> Row {
    let parameters = match class.pointer("/spec/parameters") {
        Some(p) if p.is_object() => {
            let kind = match p.get("apiGroup").and_then(Value::as_str) {
                Some(group) => format!("{}.{group}", text(p, "/kind")),
                None => text(p, "/kind").to_owned(),
            };
            format!("{kind}/{}", text(p, "/name"))
        }
        _ => "<none>".to_owned(),
    };
    vec![
        name(class),
        text(class, "/spec/controller").into(),
        parameters.into(),
        format::age(class, ctx.now).into(),
    ]
    .into()
}

fn network_policy_row(policy: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(policy),
        format::selector_cell(policy.pointer("/spec/podSelector")).into(),
        format::age(policy, ctx.now).into(),
    ]
    .into()
}

fn service_cidr_row(cidr: &Value, ctx: &PrintContext) -> Row {
    let cidrs: Vec<&str> = format::items(cidr, "/spec/cidrs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    vec![
        name(cidr),
        cidrs.join(",").into(),
        format::age(cidr, ctx.now).into(),
    ]
    .into()
}

/// Kubernetes sends the age after the parent reference, without a column for it.
fn ip_address_row(ip: &Value, ctx: &PrintContext) -> Row {
    let parent = match ip.pointer("/spec/parentRef") {
        Some(p) if p.is_object() => {
            let resource = match text(p, "/group") {
                "" => text(p, "/resource").to_lowercase(),
                group => format!("{}.{group}", text(p, "/resource")).to_lowercase(),
            };
            match text(p, "/namespace") {
                "" => format!("{resource}/{}", text(p, "/name")),
                ns => format!("{resource}/{ns}/{}", text(p, "/name")),
            }
        }
        _ => "<none>".to_owned(),
    };
    vec![name(ip), parent.into(), format::age(ip, ctx.now).into()].into()
}

#[cfg(test)]
#[path = "network_tests.rs"]
mod tests;

//! Service: defaults, validation and update rules (Kubernetes' `SetDefaults_Service`,
//! `ValidateService`, `ValidateServiceUpdate` and the service strategy's
//! `patchAllocatedValues`), for a single-stack IPv4 cluster. Cluster IPs and node ports are
//! allocated by the store ([`crate::registry::allocator`]), after these rules pass.

use std::collections::HashSet;
use std::net::IpAddr;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::registry::Strategy;
use crate::registry::allocator::service_type;
use crate::registry::allocator::wants_node_ports;
use crate::validation::FieldError;
use crate::validation::NameRule;
use crate::validation::validate_dns_label;
use crate::validation::validate_dns_subdomain;

const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const AFFINITIES: &[&str] = &["ClientIP", "None"];
const POLICIES: &[&str] = &["PreferDualStack", "RequireDualStack", "SingleStack"];
const FAMILIES: &[&str] = &["IPv4", "IPv6"];
const PORT_RANGE_MSG: &str = "must be between 1 and 65535, inclusive";
const IP_MSG: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// The strategy of `v1` Service.
#[derive(Debug, Default)]
pub struct ServiceStrategy;

fn spec(obj: &Value) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

fn spec_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    let Value::Object(root) = obj else {
        return None;
    };
    root.entry("spec")
        .or_insert_with(|| json!({}))
        .as_object_mut()
}

fn str_of<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or_default()
}

fn strings(v: &Value, field: &str) -> Vec<String> {
    v.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

fn is_headless(obj: &Value) -> bool {
    str_of(spec(obj), "clusterIP") == "None"
}

fn has_selector(obj: &Value) -> bool {
    spec(obj)
        .get("selector")
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty())
}

/// Fills `ipFamilyPolicy` and `ipFamilies` as Kubernetes' allocator does on a single-stack
/// IPv4 cluster: SingleStack and `[IPv4]`, except a headless Service without selector, which
/// asks for both families.
fn default_ip_families(obj: &mut Value) {
    if service_type(obj) == "ExternalName" {
        return;
    }
    let headless_selectorless = is_headless(obj) && !has_selector(obj);
    let Some(spec) = spec_mut(obj) else { return };
    if !spec.contains_key("ipFamilyPolicy") {
        let policy = if headless_selectorless {
            "RequireDualStack"
        } else {
            "SingleStack"
        };
        spec.insert("ipFamilyPolicy".to_owned(), policy.into());
    }
    let mut families = strings(&Value::Object(spec.clone()), "ipFamilies");
    if families.is_empty() {
        families.push("IPv4".to_owned());
    }
    if headless_selectorless
        && families.len() == 1
        && str_of(&Value::Object(spec.clone()), "ipFamilyPolicy") != "SingleStack"
    {
        let other = if families[0] == "IPv4" {
            "IPv6"
        } else {
            "IPv4"
        };
        families.push(other.to_owned());
    }
    spec.insert("ipFamilies".to_owned(), families.into());
}

impl Strategy for ServiceStrategy {
    /// Service names are DNS-1035 labels; the label rule here, the leading letter in
    /// [`Strategy::validate`].
    fn name_rule(&self) -> NameRule {
        NameRule::DnsLabel
    }

    /// Kubernetes keeps no generation for Services.
    fn tracks_generation(&self) -> bool {
        false
    }

    fn default_fields(&self, obj: &mut Value) {
        let kind = service_type(obj).to_owned();
        let Some(spec) = spec_mut(obj) else { return };
        spec.entry("type").or_insert_with(|| "ClusterIP".into());
        spec.entry("sessionAffinity")
            .or_insert_with(|| "None".into());
        if kind != "ExternalName" {
            spec.entry("internalTrafficPolicy")
                .or_insert_with(|| "Cluster".into());
        }
        if kind == "NodePort" || kind == "LoadBalancer" {
            spec.entry("externalTrafficPolicy")
                .or_insert_with(|| "Cluster".into());
        }
        if kind == "LoadBalancer" {
            spec.entry("allocateLoadBalancerNodePorts")
                .or_insert(Value::Bool(true));
        }
        let ip = spec
            .get("clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let ips = strings(&Value::Object(spec.clone()), "clusterIPs");
        if ips.is_empty() && !ip.is_empty() {
            spec.insert("clusterIPs".to_owned(), vec![ip].into());
        } else if ip.is_empty() && !ips.is_empty() {
            spec.insert("clusterIP".to_owned(), ips[0].clone().into());
        }
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                port.entry("protocol").or_insert_with(|| "TCP".into());
                if !port.contains_key("targetPort")
                    && let Some(p) = port.get("port").cloned()
                {
                    port.insert("targetPort".to_owned(), p);
                }
            }
        }
    }

    /// A new Service starts with an empty status.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Value::Object(root) = obj {
            root.insert("status".to_owned(), json!({"loadBalancer": {}}));
        }
        default_ip_families(obj);
    }

    /// An update that leaves out the allocated values keeps them, as Kubernetes'
    /// `patchAllocatedValues`: the cluster IPs while both versions have one, and each port's
    /// node port (matched by port name) while both types expose node ports.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let both_ip = service_type(old) != "ExternalName" && service_type(new) != "ExternalName";
        let both_ports = wants_node_ports(old) && wants_node_ports(new);
        let old_spec = spec(old).clone();
        let Some(spec) = spec_mut(new) else { return };
        if both_ip {
            for field in ["clusterIP", "clusterIPs", "ipFamilyPolicy", "ipFamilies"] {
                if let Some(v) = old_spec.get(field)
                    && !spec.contains_key(field)
                {
                    spec.insert(field.to_owned(), v.clone());
                }
            }
            if str_of(&Value::Object(spec.clone()), "clusterIP").is_empty()
                && let Some(ip) = old_spec.get("clusterIP")
            {
                spec.insert("clusterIP".to_owned(), ip.clone());
            }
        }
        if both_ports {
            let by_name: Vec<(String, i64)> = old_spec
                .get("ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|p| (str_of(p, "name").to_owned(), node_port(p)))
                .collect();
            if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
                let used: HashSet<i64> = ports.iter().map(node_port).collect();
                for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                    if port.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                        continue;
                    }
                    let name = port.get("name").and_then(Value::as_str).unwrap_or("");
                    if let Some((_, np)) = by_name.iter().find(|(n, _)| n == name)
                        && *np != 0
                        && !used.contains(np)
                    {
                        port.insert("nodePort".to_owned(), (*np).into());
                    }
                }
            }
        }
        default_ip_families(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            errs.push(FieldError::invalid("metadata.name", name, DNS1035_MSG));
        }
        let spec = spec(obj);
        let kind = str_of(spec, "type");
        if !TYPES.contains(&kind) {
            errs.push(FieldError::not_supported("spec.type", kind, TYPES));
        }
        validate_ports(obj, kind, &mut errs);
        validate_cluster_ips(obj, kind, &mut errs);
        if kind == "ExternalName" {
            let external = str_of(spec, "externalName");
            if external.is_empty() {
                errs.push(FieldError::required("spec.externalName", ""));
            } else {
                let trimmed = external.strip_suffix('.').unwrap_or(external);
                for msg in validate_dns_subdomain(trimmed) {
                    errs.push(FieldError::invalid("spec.externalName", external, msg));
                }
            }
        }
        let affinity = str_of(spec, "sessionAffinity");
        if !AFFINITIES.contains(&affinity) {
            errs.push(FieldError::not_supported(
                "spec.sessionAffinity",
                affinity,
                AFFINITIES,
            ));
        }
        errs
    }

    /// The cluster IPs may not change once set, unless the type changes to or from
    /// ExternalName (Kubernetes' `validateUpgradeDowngradeClusterIPs`).
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if service_type(old) == "ExternalName" || service_type(new) == "ExternalName" {
            return errs;
        }
        if is_headless(old) && is_headless(new) {
            return errs;
        }
        let old_ips = strings(spec(old), "clusterIPs");
        let new_ips = strings(spec(new), "clusterIPs");
        let value: Value = new_ips.clone().into();
        let changed = |errs: &mut Vec<FieldError>, i: usize| {
            errs.push(FieldError::invalid(
                format!("spec.clusterIPs[{i}]"),
                value.clone(),
                "may not change once set",
            ));
        };
        if new_ips.is_empty() && !old_ips.is_empty() {
            errs.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                value.clone(),
                "primary clusterIP can not be unset",
            ));
        } else if old_ips.len() == new_ips.len() {
            for i in (0..old_ips.len()).filter(|i| old_ips[*i] != new_ips[*i]) {
                changed(&mut errs, i);
            }
        } else if old_ips.first() != new_ips.first() && !old_ips.is_empty() {
            changed(&mut errs, 0);
        }
        errs
    }
}

fn node_port(port: &Value) -> i64 {
    port.get("nodePort").and_then(Value::as_i64).unwrap_or(0)
}

fn validate_ports(obj: &Value, kind: &str, errs: &mut Vec<FieldError>) {
    let ports: Vec<Value> = spec(obj)
        .get("ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if ports.is_empty() && !is_headless(obj) && kind != "ExternalName" {
        errs.push(FieldError::required("spec.ports", ""));
    }
    let mut names = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let path = format!("spec.ports[{i}]");
        let name = str_of(port, "name");
        if name.is_empty() {
            if ports.len() > 1 {
                errs.push(FieldError::required(format!("{path}.name"), ""));
            }
        } else {
            for msg in validate_dns_label(name) {
                errs.push(FieldError::invalid(format!("{path}.name"), name, msg));
            }
            if !names.insert(name.to_owned()) {
                errs.push(FieldError::duplicate(format!("{path}.name"), name));
            }
        }
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        if !(1..=65535).contains(&number) {
            errs.push(FieldError::invalid(
                format!("{path}.port"),
                number,
                PORT_RANGE_MSG,
            ));
        }
        let protocol = str_of(port, "protocol");
        if !PROTOCOLS.contains(&protocol) {
            errs.push(FieldError::not_supported(
                format!("{path}.protocol"),
                protocol,
                PROTOCOLS,
            ));
        }
        if let Some(target) = port.get("targetPort").and_then(Value::as_i64)
            && !(1..=65535).contains(&target)
        {
            errs.push(FieldError::invalid(
                format!("{path}.targetPort"),
                target,
                PORT_RANGE_MSG,
            ));
        }
        let node = node_port(port);
        if node != 0 && kind == "ClusterIP" {
            errs.push(FieldError::forbidden(
                format!("{path}.nodePort"),
                "may not be used when `type` is 'ClusterIP'",
            ));
        } else if node != 0 && !(1..=65535).contains(&node) {
            errs.push(FieldError::invalid(
                format!("{path}.nodePort"),
                node,
                PORT_RANGE_MSG,
            ));
        }
    }
}

/// `clusterIP`, `clusterIPs`, `ipFamilyPolicy` and `ipFamilies` (Kubernetes'
/// `ValidateServiceClusterIPsRelatedFields`, and the single-stack IPv4 cluster's checks).
fn validate_cluster_ips(obj: &Value, kind: &str, errs: &mut Vec<FieldError>) {
    let spec = spec(obj);
    let ip = str_of(spec, "clusterIP");
    let ips = strings(spec, "clusterIPs");
    let ips_value: Value = ips.clone().into();
    if kind == "ExternalName" {
        if !ips.is_empty() {
            errs.push(FieldError::forbidden(
                "spec.clusterIPs",
                "may not be set for ExternalName services",
            ));
        }
        return;
    }
    if !ip.is_empty() {
        if ips.is_empty() {
            errs.push(FieldError::required("spec.clusterIPs", ""));
        } else if ips[0] != ip {
            errs.push(FieldError::invalid(
                "spec.clusterIPs",
                ips_value.clone(),
                "first value must match `clusterIP`",
            ));
        }
    } else if !ips.is_empty() {
        errs.push(FieldError::invalid(
            "spec.clusterIPs",
            ips_value.clone(),
            "must be empty when `clusterIP` is not specified",
        ));
    }
    for (i, each) in ips.iter().enumerate() {
        if each == "None" {
            if i > 0 || ips.len() > 1 {
                errs.push(FieldError::invalid(
                    "spec.clusterIPs",
                    ips_value.clone(),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        if each.parse::<IpAddr>().is_err() {
            errs.push(FieldError::invalid(
                format!("spec.clusterIPs[{i}]"),
                each.as_str(),
                IP_MSG,
            ));
        } else if each.parse::<std::net::Ipv6Addr>().is_ok() {
            errs.push(FieldError::invalid(
                format!("spec.clusterIPs[{i}]"),
                ips_value.clone(),
                "IPv6 is not configured on this cluster",
            ));
        }
    }
    let policy = str_of(spec, "ipFamilyPolicy");
    if !policy.is_empty() && !POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported(
            "spec.ipFamilyPolicy",
            policy,
            POLICIES,
        ));
    }
    let headless_selectorless = is_headless(obj) && !has_selector(obj);
    if policy == "RequireDualStack" && !headless_selectorless {
        errs.push(FieldError::invalid(
            "spec.ipFamilyPolicy",
            policy,
            "this cluster is not configured for dual-stack services",
        ));
    }
    for (i, family) in strings(spec, "ipFamilies").iter().enumerate() {
        let path = format!("spec.ipFamilies[{i}]");
        if !FAMILIES.contains(&family.as_str()) {
            errs.push(FieldError::not_supported(path, family.as_str(), FAMILIES));
        } else if family == "IPv6" && !headless_selectorless {
            errs.push(FieldError::invalid(
                path,
                family.as_str(),
                "not configured on this cluster",
            ));
        }
    }
}

#[cfg(test)]
mod tests;

//! `ValidatePodSpec` for a Pod and every pod template: containers (names, images, pull
//! policy, ports, mounts, resources), volumes, and the restart and DNS policies, worded as
//! upstream's core validation.

use std::collections::BTreeSet;

use serde_json::Value;

use super::fields::array_at;
use super::fields::int_at;
use super::fields::str_at;
use crate::validation::FieldError;
use crate::validation::parse_quantity_nanos;
use crate::validation::validate_dns_label;

/// upstream's `restartPolicy` values, in its order.
pub const RESTART_POLICIES: &[&str] = &["Always", "OnFailure", "Never"];
const DNS_POLICIES: &[&str] = &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
const PULL_POLICIES: &[&str] = &["Always", "IfNotPresent", "Never"];
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

/// The problems of the pod spec `spec` found at `path` (`spec`, `spec.template.spec`).
pub fn validate_pod_spec(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let volumes = validate_volumes(spec, path, &mut errs);
    if array_at(spec, "/containers").is_empty() {
        errs.push(FieldError::required(format!("{path}.containers"), ""));
    }
    let mut names = BTreeSet::new();
    for list in ["initContainers", "containers"] {
        for (i, c) in array_at(spec, &format!("/{list}")).iter().enumerate() {
            let at = format!("{path}.{list}[{i}]");
            validate_container(c, &at, &volumes, &mut names, &mut errs);
        }
    }
    enum_field(spec, "restartPolicy", path, RESTART_POLICIES, &mut errs);
    enum_field(spec, "dnsPolicy", path, DNS_POLICIES, &mut errs);
    if let Some(v) = int_at(spec, "/activeDeadlineSeconds").filter(|v| *v <= 0) {
        errs.push(FieldError::invalid(
            format!("{path}.activeDeadlineSeconds"),
            v,
            "must be between 1 and 2147483647, inclusive",
        ));
    }
    errs
}

/// A required enum field: `Required value` when empty, `Unsupported value` when unknown.
fn enum_field(obj: &Value, field: &str, path: &str, allowed: &[&str], errs: &mut Vec<FieldError>) {
    match str_at(obj, &format!("/{field}")) {
        "" => errs.push(FieldError::required(format!("{path}.{field}"), "")),
        v if allowed.contains(&v) => {}
        v => errs.push(FieldError::not_supported(
            format!("{path}.{field}"),
            v,
            allowed,
        )),
    }
}

/// Checks `spec.volumes` and returns the volume names.
fn validate_volumes(spec: &Value, path: &str, errs: &mut Vec<FieldError>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, v) in array_at(spec, "/volumes").iter().enumerate() {
        let at = format!("{path}.volumes[{i}].name");
        let name = str_at(v, "/name");
        if name.is_empty() {
            errs.push(FieldError::required(at, ""));
        } else if !names.insert(name.to_owned()) {
            errs.push(FieldError::duplicate(at, name));
        } else {
            errs.extend(
                validate_dns_label(name)
                    .into_iter()
                    .map(|m| FieldError::invalid(at.clone(), name, m)),
            );
        }
    }
    names
}

fn validate_container(
    c: &Value,
    at: &str,
    volumes: &BTreeSet<String>,
    names: &mut BTreeSet<String>,
    errs: &mut Vec<FieldError>,
) {
    let name = str_at(c, "/name");
    if name.is_empty() {
        errs.push(FieldError::required(format!("{at}.name"), ""));
    } else if !names.insert(name.to_owned()) {
        errs.push(FieldError::duplicate(format!("{at}.name"), name));
    } else {
        errs.extend(
            validate_dns_label(name)
                .into_iter()
                .map(|m| FieldError::invalid(format!("{at}.name"), name, m)),
        );
    }
    if str_at(c, "/image").is_empty() {
        errs.push(FieldError::required(format!("{at}.image"), ""));
    }
    enum_field(c, "imagePullPolicy", at, PULL_POLICIES, errs);
    for (j, p) in array_at(c, "/ports").iter().enumerate() {
        let pat = format!("{at}.ports[{j}]");
        let port = int_at(p, "/containerPort").unwrap_or(0);
        if !(1..=65535).contains(&port) {
            errs.push(FieldError::invalid(
                format!("{pat}.containerPort"),
                port,
                PORT_RANGE,
            ));
        }
        if let Some(host) = int_at(p, "/hostPort").filter(|h| *h != 0 && !(1..=65535).contains(h)) {
            errs.push(FieldError::invalid(
                format!("{pat}.hostPort"),
                host,
                PORT_RANGE,
            ));
        }
        enum_field(p, "protocol", &pat, PROTOCOLS, errs);
    }
    for (j, m) in array_at(c, "/volumeMounts").iter().enumerate() {
        let mat = format!("{at}.volumeMounts[{j}]");
        let name = str_at(m, "/name");
        if name.is_empty() {
            errs.push(FieldError::required(format!("{mat}.name"), ""));
        } else if !volumes.contains(name) {
            errs.push(FieldError::not_found(format!("{mat}.name"), name));
        }
        if str_at(m, "/mountPath").is_empty() {
            errs.push(FieldError::required(format!("{mat}.mountPath"), ""));
        }
    }
    validate_resources(c, &format!("{at}.resources"), errs);
}

/// Every request must be at most its limit (`resource.Quantity.Cmp`).
fn validate_resources(c: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(Value::Object(requests)) = c.pointer("/resources/requests") else {
        return;
    };
    for (resource, request) in requests {
        let limit = c
            .pointer(&format!("/resources/limits/{resource}"))
            .and_then(Value::as_str);
        let (Some(request), Some(limit)) = (request.as_str(), limit) else {
            continue;
        };
        if let (Some(r), Some(l)) = (parse_quantity_nanos(request), parse_quantity_nanos(limit))
            && r > l
        {
            errs.push(FieldError::invalid(
                format!("{path}.requests"),
                request,
                format!("must be less than or equal to {resource} limit of {limit}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(spec: Value) -> Vec<String> {
        validate_pod_spec(&spec, "spec")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn valid() -> Value {
        json!({
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
            "containers": [{"name": "app", "image": "nginx", "imagePullPolicy": "Always"}]
        })
    }

    #[test]
    fn a_defaulted_spec_is_valid() {
        assert!(messages(valid()).is_empty());
    }

    #[test]
    fn containers_names_and_images_are_required() {
        let mut s = valid();
        s["containers"] = json!([]);
        assert_eq!(messages(s), ["spec.containers: Required value"]);
        let mut s = valid();
        s["containers"] = json!([{"imagePullPolicy": "Always"}]);
        assert_eq!(
            messages(s),
            [
                "spec.containers[0].name: Required value",
                "spec.containers[0].image: Required value"
            ]
        );
    }

    #[test]
    fn container_names_are_unique_labels_across_init_and_regular() {
        let mut s = valid();
        s["initContainers"] = json!([{"name": "app", "image": "x", "imagePullPolicy": "Never"}]);
        assert_eq!(
            messages(s),
            [r#"spec.containers[0].name: Duplicate value: "app""#]
        );
        let mut s = valid();
        s["containers"][0]["name"] = "App".into();
        let m = messages(s);
        assert_eq!(m.len(), 1);
        assert!(
            m[0].starts_with(
                r#"spec.containers[0].name: Invalid value: "App": a lowercase RFC 1123 label"#
            ),
            "{m:?}"
        );
    }

    #[test]
    fn policies_list_upstreams_supported_values() {
        let mut s = valid();
        s["restartPolicy"] = "Sometimes".into();
        s["dnsPolicy"] = "Mine".into();
        s["containers"][0]["imagePullPolicy"] = "Maybe".into();
        assert_eq!(
            messages(s),
            [
                r#"spec.containers[0].imagePullPolicy: Unsupported value: "Maybe": supported values: "Always", "IfNotPresent", "Never""#,
                r#"spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never""#,
                r#"spec.dnsPolicy: Unsupported value: "Mine": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None""#,
            ]
        );
    }

    #[test]
    fn ports_need_a_range_and_a_protocol() {
        let mut s = valid();
        s["containers"][0]["ports"] = json!([
            {"containerPort": 0, "protocol": "TCP"},
            {"containerPort": 80, "hostPort": 70000, "protocol": "ICMP"}
        ]);
        assert_eq!(
            messages(s),
            [
                "spec.containers[0].ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.containers[0].ports[1].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
                r#"spec.containers[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP""#,
            ]
        );
    }

    #[test]
    fn volumes_are_unique_and_mounts_name_one() {
        let mut s = valid();
        s["volumes"] = json!([{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]);
        s["containers"][0]["volumeMounts"] =
            json!([{"name": "data", "mountPath": "/d"}, {"name": "v"}]);
        assert_eq!(
            messages(s),
            [
                r#"spec.volumes[1].name: Duplicate value: "v""#,
                r#"spec.containers[0].volumeMounts[0].name: Not found: "data""#,
                "spec.containers[0].volumeMounts[1].mountPath: Required value",
            ]
        );
    }

    #[test]
    fn requests_may_not_exceed_limits() {
        let mut s = valid();
        s["containers"][0]["resources"] = json!({
            "requests": {"cpu": "2", "memory": "1Gi"},
            "limits": {"cpu": "1", "memory": "2Gi"}
        });
        assert_eq!(
            messages(s),
            [
                r#"spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1"#
            ]
        );
    }

    #[test]
    fn requests_and_limits_compare_exactly() {
        // As floats these are equal; Kubernetes compares quantities exactly.
        let mut s = valid();
        s["containers"][0]["resources"] = json!({
            "requests": {"cpu": "9007199254740993"},
            "limits": {"cpu": "9007199254740992"}
        });
        assert_eq!(
            messages(s),
            [
                r#"spec.containers[0].resources.requests: Invalid value: "9007199254740993": must be less than or equal to cpu limit of 9007199254740992"#
            ]
        );
        let mut s = valid();
        s["containers"][0]["resources"] = json!({
            "requests": {"cpu": "1000m", "memory": "1Gi"},
            "limits": {"cpu": "1", "memory": "1073741824"}
        });
        assert!(messages(s).is_empty());
    }

    #[test]
    fn active_deadline_is_positive() {
        let mut s = valid();
        s["activeDeadlineSeconds"] = 0.into();
        assert_eq!(
            messages(s),
            [
                "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"
            ]
        );
    }
}

//! Ingress (`networking/v1`): Kubernetes' `ValidateIngressSpec` (rules, paths, backends,
//! TLS hosts, class name) and the class annotation rule, the annotation in the flavor's
//! domain.

use std::net::IpAddr;

use k8s_openapi::api::networking::v1::Ingress;
use serde_json::Value;

use super::row::kind;
use crate::flavor::Flavor;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::validate_dns_subdomain;
use crate::validation::validate_dns1035_label;
use crate::validation::validate_port_name;
use crate::validation::validate_port_number;
use crate::validation::validate_wildcard_dns_subdomain;

/// The path types, sorted as upstream lists them.
const PATH_TYPES: &[&str] = &["Exact", "ImplementationSpecific", "Prefix"];
const INVALID_SEQUENCES: &[&str] = &["//", "/./", "/../", "%2f", "%2F"];
const INVALID_SUFFIXES: &[&str] = &["/..", "/."];

/// The strategy of `networking/v1` Ingress: the generic steps plus the spec rules.
pub struct IngressStrategy {
    base: Box<dyn Strategy>,
    flavor: Flavor,
}

impl IngressStrategy {
    /// The Ingress strategy of `flavor` (which spells the group and the class annotation).
    pub fn new(flavor: Flavor) -> Self {
        Self {
            base: kind::<Ingress>().new_strategy(flavor),
            flavor,
        }
    }
}

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn invalid_each(path: &str, value: &str, msgs: Vec<String>, errs: &mut Vec<FieldError>) {
    errs.extend(
        msgs.into_iter()
            .map(|m| FieldError::invalid(path, value, m)),
    );
}

/// A host of a rule or a TLS entry: a subdomain, or `*.` and a subdomain.
fn host(host: &str, path: &str, errs: &mut Vec<FieldError>) {
    let msgs = if host.contains('*') {
        validate_wildcard_dns_subdomain(host)
    } else {
        validate_dns_subdomain(host)
    };
    invalid_each(path, host, msgs, errs);
}

/// `validateIngressBackend`: a service (name, and a port name or number) or a resource.
fn backend(b: &Value, path: &str, errs: &mut Vec<FieldError>) {
    match (b.get("resource"), b.get("service")) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            path,
            "",
            "cannot set both resource and service backends",
        )),
        (Some(r), None) => {
            if let Some(group) = r.get("apiGroup").and_then(Value::as_str) {
                invalid_each(
                    &format!("{path}.resource.apiGroup"),
                    group,
                    validate_dns_subdomain(group),
                    errs,
                );
            }
            for field in ["kind", "name"] {
                if text(r, &format!("/{field}")).is_empty() {
                    errs.push(FieldError::required(
                        format!("{path}.resource.{field}"),
                        format!("{field} is required"),
                    ));
                }
            }
        }
        (None, Some(s)) => {
            let name = text(s, "/name");
            if name.is_empty() {
                errs.push(FieldError::required(format!("{path}.service.name"), ""));
            } else {
                let at = format!("{path}.service.name");
                invalid_each(&at, name, validate_dns1035_label(name), errs);
            }
            let port_name = text(s, "/port/name");
            let number = s
                .pointer("/port/number")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            match (port_name.is_empty(), number == 0) {
                (false, false) => errs.push(FieldError::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                )),
                (false, true) => {
                    let at = format!("{path}.service.port.name");
                    invalid_each(&at, port_name, validate_port_name(port_name), errs);
                }
                (true, false) => {
                    let at = format!("{path}.service.port.number");
                    errs.extend(
                        validate_port_number(number)
                            .into_iter()
                            .map(|m| FieldError::invalid(at.as_str(), number, m)),
                    );
                }
                (true, true) => {
                    errs.push(FieldError::required(
                        path,
                        "port name or number is required",
                    ));
                }
            }
        }
        (None, None) => errs.push(FieldError::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
}

/// `validateHTTPIngressPath`. The typed decode turns a missing `pathType` into `""`, so an
/// empty one counts as missing.
fn http_path(p: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let path_type = p.get("pathType").and_then(Value::as_str);
    let Some(path_type) = path_type.filter(|t| !t.is_empty()) else {
        errs.push(FieldError::required(
            format!("{at}.pathType"),
            "pathType must be specified",
        ));
        return;
    };
    let path = text(p, "/path");
    let path_at = format!("{at}.path");
    let absolute = || FieldError::invalid(path_at.as_str(), path, "must be an absolute path");
    match path_type {
        "Exact" | "Prefix" => {
            if !path.starts_with('/') {
                errs.push(absolute());
            }
            for seq in INVALID_SEQUENCES.iter().filter(|s| path.contains(**s)) {
                errs.push(FieldError::invalid(
                    path_at.as_str(),
                    path,
                    format!("must not contain '{seq}'"),
                ));
            }
            for suffix in INVALID_SUFFIXES.iter().filter(|s| path.ends_with(**s)) {
                errs.push(FieldError::invalid(
                    path_at.as_str(),
                    path,
                    format!("cannot end with '{suffix}'"),
                ));
            }
        }
        "ImplementationSpecific" => {
            if !path.is_empty() && !path.starts_with('/') {
                errs.push(absolute());
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{at}.pathType"),
            other,
            PATH_TYPES,
        )),
    }
    backend(
        p.get("backend").unwrap_or(&Value::Null),
        &format!("{at}.backend"),
        errs,
    );
}

/// `validateIngressRules`.
fn rules(rules: &[Value], errs: &mut Vec<FieldError>) {
    for (i, rule) in rules.iter().enumerate() {
        let h = text(rule, "/host");
        if !h.is_empty() {
            let at = format!("spec.rules[{i}].host");
            if h.parse::<IpAddr>().is_ok() {
                errs.push(FieldError::invalid(
                    at.as_str(),
                    h,
                    "must be a DNS name, not an IP address",
                ));
            }
            host(h, &at, errs);
        }
        let Some(http) = rule.get("http").filter(|v| !v.is_null()) else {
            continue;
        };
        let paths = http.get("paths").and_then(Value::as_array);
        if paths.is_none_or(Vec::is_empty) {
            errs.push(FieldError::required(
                format!("spec.rules[{i}].http.paths"),
                "",
            ));
        }
        for (j, p) in paths.into_iter().flatten().enumerate() {
            http_path(p, &format!("spec.rules[{i}].http.paths[{j}]"), errs);
        }
    }
}

impl Strategy for IngressStrategy {
    fn tracks_generation(&self) -> bool {
        self.base.tracks_generation()
    }

    /// `ValidateIngressSpec` and the class annotation rule (upstream checks the latter on
    /// create only; here every write, so an update cannot introduce a mismatch either).
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let rule_list = spec
            .get("rules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let default_backend = spec.get("defaultBackend").filter(|v| !v.is_null());
        if rule_list.is_empty() && default_backend.is_none() {
            errs.push(FieldError::invalid(
                "spec",
                spec.get("rules").cloned().unwrap_or(Value::Null),
                "either `defaultBackend` or `rules` must be specified",
            ));
        }
        if let Some(b) = default_backend {
            backend(b, "spec.defaultBackend", &mut errs);
        }
        rules(&rule_list, &mut errs);
        let tls = spec.get("tls").and_then(Value::as_array);
        for (i, entry) in tls.into_iter().flatten().enumerate() {
            let hosts = entry.get("hosts").and_then(Value::as_array);
            for (j, h) in hosts.into_iter().flatten().enumerate() {
                host(
                    h.as_str().unwrap_or_default(),
                    &format!("spec.tls[{i}].hosts[{j}]"),
                    &mut errs,
                );
            }
            let secret = text(entry, "/secretName");
            if !secret.is_empty() {
                let at = format!("spec.tls[{i}].secretName");
                invalid_each(&at, secret, validate_dns_subdomain(secret), &mut errs);
            }
        }
        let class = spec.get("ingressClassName").and_then(Value::as_str);
        if let Some(class) = class {
            let at = "spec.ingressClassName";
            invalid_each(at, class, validate_dns_subdomain(class), &mut errs);
        }
        let annotation = format!("{}/ingress.class", self.flavor.label_domain());
        let annotated = obj
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(&annotation))
            .and_then(Value::as_str);
        if let (Some(a), Some(c)) = (annotated, class)
            && a != c
        {
            errs.push(FieldError::invalid(
                format!("annotations.{annotation}"),
                a,
                "must match `ingressClassName` when both are specified",
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rendered(obj: Value) -> Vec<String> {
        IngressStrategy::new(Flavor::Kubernetes)
            .validate(&obj)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn with_rules(rules: Value) -> Value {
        json!({"spec": {"rules": rules}})
    }

    fn svc(port: Value) -> Value {
        json!({"service": {"name": "web", "port": port}})
    }

    #[test]
    fn a_valid_ingress() {
        let ok = with_rules(json!([{"host": "*.example.com", "http": {"paths": [
            {"path": "/", "pathType": "Prefix", "backend": svc(json!({"number": 80}))},
            {"pathType": "ImplementationSpecific", "backend": {"resource": {"kind": "Bucket", "name": "b"}}}
        ]}}]));
        assert!(rendered(ok).is_empty());
    }

    #[test]
    fn spec_needs_rules_or_default_backend() {
        assert_eq!(
            rendered(json!({"spec": {}})),
            vec!["spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"]
        );
        assert!(
            rendered(json!({"spec": {"defaultBackend": svc(json!({"name": "http"}))}})).is_empty()
        );
    }

    #[test]
    fn hosts() {
        let errs = rendered(with_rules(
            json!([{"host": "10.0.0.1"}, {"host": "a.*.com"}]),
        ));
        assert_eq!(errs.len(), 2);
        assert_eq!(
            errs[0],
            r#"spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address"#
        );
        assert!(errs[1].starts_with(
            r#"spec.rules[1].host: Invalid value: "a.*.com": a wildcard DNS-1123 subdomain"#
        ));
        assert_eq!(
            rendered(with_rules(json!([{"http": {"paths": []}}]))),
            vec!["spec.rules[0].http.paths: Required value"]
        );
    }

    // R-RES-030: a path without pathType is refused.
    #[test]
    fn paths() {
        let errs = rendered(with_rules(json!([{"http": {"paths": [
            {"path": "/", "pathType": "", "backend": svc(json!({"number": 80}))},
            {"path": "/", "pathType": "Regex", "backend": svc(json!({"number": 80}))},
            {"path": "x//y/.", "pathType": "Exact", "backend": svc(json!({"number": 80}))}
        ]}}])));
        assert_eq!(
            errs,
            vec![
                "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
                r#"spec.rules[0].http.paths[1].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix""#,
                r#"spec.rules[0].http.paths[2].path: Invalid value: "x//y/.": must be an absolute path"#,
                r#"spec.rules[0].http.paths[2].path: Invalid value: "x//y/.": must not contain '//'"#,
                r#"spec.rules[0].http.paths[2].path: Invalid value: "x//y/.": cannot end with '/.'"#,
            ]
        );
    }

    #[test]
    fn backends() {
        let path = |backend: Value| {
            with_rules(
                json!([{"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}]),
            )
        };
        let at = "spec.rules[0].http.paths[0].backend";
        assert_eq!(
            rendered(path(
                json!({"service": {"name": "web", "port": {"name": "http", "number": 80}}})
            )),
            vec![format!(
                r#"{at}: Invalid value: "": cannot set both port name & port number"#
            )]
        );
        assert_eq!(
            rendered(path(json!({"service": {"name": "web", "port": {}}}))),
            vec![format!(
                "{at}: Required value: port name or number is required"
            )]
        );
        assert_eq!(
            rendered(path(
                json!({"service": {"name": "web", "port": {"number": 70000}}, "resource": {"kind": "K", "name": "n"}})
            )),
            vec![format!(
                r#"{at}: Invalid value: "": cannot set both resource and service backends"#
            )]
        );
        assert_eq!(
            rendered(path(
                json!({"service": {"name": "web", "port": {"number": 70000}}})
            )),
            vec![format!(
                "{at}.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive"
            )]
        );
        assert_eq!(
            rendered(path(json!({}))),
            vec![format!(
                r#"{at}: Invalid value: "": resource or service backend is required"#
            )]
        );
        let bad_name = rendered(path(
            json!({"service": {"name": "1web", "port": {"number": 80}}}),
        ));
        assert!(bad_name[0].starts_with(&format!(
            r#"{at}.service.name: Invalid value: "1web": a DNS-1035 label"#
        )));
    }

    #[test]
    fn class_annotation_must_match_the_field() {
        let obj = json!({
            "metadata": {"annotations": {"kubernetes.io/ingress.class": "nginx"}},
            "spec": {"ingressClassName": "traefik", "defaultBackend": svc(json!({"number": 80}))}
        });
        assert_eq!(
            rendered(obj),
            vec![
                r#"annotations.kubernetes.io/ingress.class: Invalid value: "nginx": must match `ingressClassName` when both are specified"#
            ]
        );
    }
}

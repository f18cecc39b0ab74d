//! The client config of a webhook the server calls (conversion webhooks now, admission
//! webhooks next): Kubernetes' `ValidateWebhookURL` (HTTPS, a host, no user information,
//! query or fragment) and `ValidateWebhookService` (name, namespace, port, path segments).

use serde_json::Value;

use super::FieldError;
use super::validate_dns_subdomain;
use super::validate_port_number;

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Kubernetes' `ValidateWebhookURL` with HTTPS required.
pub fn validate_webhook_url(path: &str, url: &str) -> Vec<FieldError> {
    const FORM: &str = "; desired format: https://host[/path]";
    let mut errs = Vec::new();
    let (rest, fragment) = url.split_once('#').unwrap_or((url, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (scheme, rest) = rest.split_once("://").unwrap_or(("", rest));
    let authority = if scheme.is_empty() {
        ""
    } else {
        rest.split('/').next().unwrap_or("")
    };
    let (user, host) = authority.rsplit_once('@').unwrap_or(("", authority));
    if scheme != "https" {
        errs.push(FieldError::invalid(
            path,
            scheme,
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if host.is_empty() {
        errs.push(FieldError::invalid(
            path,
            host,
            format!("host must be specified{FORM}"),
        ));
    }
    if authority.contains('@') {
        errs.push(FieldError::invalid(
            path,
            user,
            "user information is not permitted in the URL",
        ));
    }
    if !fragment.is_empty() {
        errs.push(FieldError::invalid(
            path,
            fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if !query.is_empty() {
        errs.push(FieldError::invalid(
            path,
            query,
            "query parameters are not permitted in the URL",
        ));
    }
    errs
}

/// Kubernetes' `ValidateWebhookService`.
pub fn validate_webhook_service(path: &str, service: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["name", "namespace"] {
        if str_at(service, field).is_empty() {
            errs.push(FieldError::required(format!("{path}.{field}"), ""));
        }
    }
    let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
    let msgs = validate_port_number(port);
    if !msgs.is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.port"),
            port,
            format!("port is not valid: {}", msgs.join(", ")),
        ));
    }
    let url_path = str_at(service, "path");
    if url_path.is_empty() || url_path == "/" {
        return errs;
    }
    let at = format!("{path}.path");
    if url_path == "//" {
        errs.push(FieldError::invalid(
            at,
            url_path,
            "segment[0] may not be empty",
        ));
        return errs;
    }
    if !url_path.starts_with('/') {
        errs.push(FieldError::invalid(&at, url_path, "must start with a '/'"));
    }
    let trimmed = url_path.get(1..).unwrap_or("");
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    for (i, step) in trimmed.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(
                &at,
                url_path,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for msg in validate_dns_subdomain(step) {
            errs.push(FieldError::invalid(
                &at,
                url_path,
                format!("segment[{i}]: {msg}"),
            ));
        }
    }
    errs
}

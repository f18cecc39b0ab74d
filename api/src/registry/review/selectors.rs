//! The selector attributes of an access review (`resourceAttributes.fieldSelector` and
//! `.labelSelector`, spec 001 "Authorization", R-ACC-172): validated as Kubernetes validates
//! them (a raw selector or requirements, not both; requirement operators and values), then
//! handed to the authorizers as a request's selectors reach them, as the selector text.

use k8s_openapi::api::authorization::v1::FieldSelectorAttributes;
use k8s_openapi::api::authorization::v1::LabelSelectorAttributes;
use k8s_openapi::api::authorization::v1::ResourceAttributes;
use serde_json::json;

use crate::validation::FieldError;
use crate::validation::validate_qualified_name;

/// The problems of `attributes`' selectors; `path` is where the attributes are.
pub(super) fn errors(attributes: &ResourceAttributes, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(field) = &attributes.field_selector {
        errs.extend(field_errors(field, &format!("{path}.fieldSelector")));
    }
    if let Some(label) = &attributes.label_selector {
        errs.extend(label_errors(label, &format!("{path}.labelSelector")));
    }
    errs
}

/// Kubernetes' shared rule: exactly one of `rawSelector` and `requirements`.
fn raw_or_requirements(raw: &str, requirements: usize, path: &str) -> Vec<FieldError> {
    if !raw.is_empty() && requirements > 0 {
        vec![FieldError::invalid(
            format!("{path}.rawSelector"),
            raw,
            "may not specified at the same time as requirements",
        )]
    } else if raw.is_empty() && requirements == 0 {
        vec![FieldError::required(
            format!("{path}.requirements"),
            format!("when {path} is specified, requirements or rawSelector is required"),
        )]
    } else {
        Vec::new()
    }
}

/// `ValidateFieldSelectorRequirement`, unknown operators allowed (newer clients).
fn field_errors(selector: &FieldSelectorAttributes, path: &str) -> Vec<FieldError> {
    let requirements = selector.requirements.as_deref().unwrap_or_default();
    let raw = selector.raw_selector.as_deref().unwrap_or_default();
    let mut errs = raw_or_requirements(raw, requirements.len(), path);
    for (i, r) in requirements.iter().enumerate() {
        let at = format!("{path}.requirements[{i}]");
        if r.key.is_empty() {
            errs.push(FieldError::required(
                format!("{at}.key"),
                "must be specified",
            ));
        }
        let values = r.values.as_deref().unwrap_or_default();
        match r.operator.as_str() {
            "In" | "NotIn" if values.len() != 1 => errs.push(FieldError::invalid(
                format!("{at}.values"),
                json!(values),
                "must be only one value when `operator` is 'In' or 'NotIn' for fieldSelector",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
                format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            _ => {}
        }
    }
    errs
}

/// `ValidateLabelSelectorRequirement`, unknown operators allowed (newer clients).
fn label_errors(selector: &LabelSelectorAttributes, path: &str) -> Vec<FieldError> {
    let requirements = selector.requirements.as_deref().unwrap_or_default();
    let raw = selector.raw_selector.as_deref().unwrap_or_default();
    let mut errs = raw_or_requirements(raw, requirements.len(), path);
    for (i, r) in requirements.iter().enumerate() {
        let at = format!("{path}.requirements[{i}]");
        let values = r.values.as_deref().unwrap_or_default();
        match r.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
                format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            _ => {}
        }
        for msg in validate_qualified_name(&r.key) {
            errs.push(FieldError::invalid(format!("{at}.key"), r.key.clone(), msg));
        }
    }
    errs
}

/// The field selector text the attributes stand for (empty: none): the raw selector, or
/// the requirements as `key=value` / `key!=value` terms. Requirements with other operators
/// have no text form and do not limit the request, as Kubernetes leaves them.
pub(super) fn field_text(selector: Option<&FieldSelectorAttributes>) -> String {
    let Some(selector) = selector else {
        return String::new();
    };
    if let Some(raw) = selector.raw_selector.as_deref().filter(|r| !r.is_empty()) {
        return raw.to_owned();
    }
    let terms: Vec<String> = (selector.requirements.iter().flatten())
        .filter_map(|r| {
            let value = r.values.as_deref()?.first()?;
            match r.operator.as_str() {
                "In" => Some(format!("{}={value}", r.key)),
                "NotIn" => Some(format!("{}!={value}", r.key)),
                _ => None,
            }
        })
        .collect();
    terms.join(",")
}

/// The label selector text the attributes stand for (empty: none): the raw selector, or
/// the requirements in selector syntax (`k in (a,b)`, `k notin (a)`, `k`, `!k`).
pub(super) fn label_text(selector: Option<&LabelSelectorAttributes>) -> String {
    let Some(selector) = selector else {
        return String::new();
    };
    if let Some(raw) = selector.raw_selector.as_deref().filter(|r| !r.is_empty()) {
        return raw.to_owned();
    }
    let terms: Vec<String> = (selector.requirements.iter().flatten())
        .filter_map(|r| {
            let values = r.values.as_deref().unwrap_or_default().join(",");
            match r.operator.as_str() {
                "In" => Some(format!("{} in ({values})", r.key)),
                "NotIn" => Some(format!("{} notin ({values})", r.key)),
                "Exists" => Some(r.key.clone()),
                "DoesNotExist" => Some(format!("!{}", r.key)),
                _ => None,
            }
        })
        .collect();
    terms.join(",")
}

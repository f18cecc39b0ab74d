//! MutatingWebhookConfiguration and ValidatingWebhookConfiguration
//! (`admissionregistration/v1`): Kubernetes' v1 defaults (R-VER-119..121: `failurePolicy`
//! Fail, `matchPolicy` Equivalent, `timeoutSeconds` 10, empty selectors, rules' scope `*`,
//! `reinvocationPolicy` Never, service port 443) and the rules of its
//! `ValidateMutatingWebhookConfiguration` / `ValidateValidatingWebhookConfiguration`, with
//! its field paths and messages.

use std::collections::HashSet;

use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use serde_json::Value;
use serde_json::json;

use super::row::kind;
use crate::cel::Program;
use crate::flavor::Flavor;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::validate_dns_subdomain;
use crate::validation::validate_dns1035_label;
use crate::validation::validate_label_selector;
use crate::validation::validate_qualified_name;
use crate::validation::validate_webhook_service;
use crate::validation::validate_webhook_url;

/// The AdmissionReview versions this server speaks, in Kubernetes' order.
pub const ADMISSION_REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];
/// The most `matchConditions` one webhook may have.
const MAX_MATCH_CONDITIONS: usize = 64;
/// The variables a `matchConditions` expression may use.
pub const MATCH_CONDITION_VARIABLES: &[&str] = &["object", "oldObject", "request", "authorizer"];

/// Which of the two configuration kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookKind {
    /// MutatingWebhookConfiguration (has `reinvocationPolicy`).
    Mutating,
    /// ValidatingWebhookConfiguration.
    Validating,
}

/// The strategy of a webhook configuration kind: the generic steps plus the v1 defaults and
/// the webhook rules.
pub struct WebhookConfigurationStrategy {
    base: Box<dyn Strategy>,
    kind: WebhookKind,
}

impl WebhookConfigurationStrategy {
    /// The strategy of `kind` in `flavor`.
    pub fn new(which: WebhookKind, flavor: Flavor) -> Self {
        let row = match which {
            WebhookKind::Mutating => kind::<MutatingWebhookConfiguration>(),
            WebhookKind::Validating => kind::<ValidatingWebhookConfiguration>(),
        };
        Self {
            base: row.api_extensions().new_strategy(flavor),
            kind: which,
        }
    }
}

impl Strategy for WebhookConfigurationStrategy {
    fn tracks_generation(&self) -> bool {
        self.base.tracks_generation()
    }

    fn default_fields(&self, obj: &mut Value) {
        let hooks = obj.get_mut("webhooks").and_then(Value::as_array_mut);
        for hook in hooks.into_iter().flatten() {
            default_webhook(hook, self.kind);
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        validate_configuration(obj, self.kind, true)
    }

    /// Names need to be unique on an update only when they were in the old object, as
    /// Kubernetes' `requireUniqueWebhookNames` allows.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_configuration(new, self.kind, names_unique(old))
    }
}

/// `SetDefaults_MutatingWebhook` / `SetDefaults_ValidatingWebhook`, `SetDefaults_Rule`,
/// `SetDefaults_ServiceReference`.
fn default_webhook(hook: &mut Value, kind: WebhookKind) {
    let Some(map) = hook.as_object_mut() else {
        return;
    };
    let mut set = |field: &str, value: Value| {
        if map.get(field).is_none_or(Value::is_null) {
            map.insert(field.to_owned(), value);
        }
    };
    set("failurePolicy", json!("Fail"));
    set("matchPolicy", json!("Equivalent"));
    set("namespaceSelector", json!({}));
    set("objectSelector", json!({}));
    set("timeoutSeconds", json!(10));
    if kind == WebhookKind::Mutating {
        set("reinvocationPolicy", json!("Never"));
    }
    let rules = map.get_mut("rules").and_then(Value::as_array_mut);
    for rule in rules.into_iter().flatten().filter_map(Value::as_object_mut) {
        if rule.get("scope").is_none_or(Value::is_null) {
            rule.insert("scope".to_owned(), json!("*"));
        }
    }
    let service = map
        .get_mut("clientConfig")
        .and_then(|c| c.get_mut("service"));
    if let Some(service) = service.and_then(Value::as_object_mut)
        && service.get("port").is_none_or(Value::is_null)
    {
        service.insert("port".to_owned(), json!(443));
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    (v.get(key).and_then(Value::as_array).into_iter().flatten())
        .map(|s| s.as_str().unwrap_or_default().to_owned())
        .collect()
}

fn names_unique(obj: &Value) -> bool {
    let mut seen = HashSet::new();
    (obj.get("webhooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .all(|h| seen.insert(str_at(h, "name").unwrap_or_default()))
}

/// The rules of one configuration; `unique_names`: duplicate webhook names are refused
/// (R-VER-124).
fn validate_configuration(obj: &Value, kind: WebhookKind, unique_names: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = HashSet::new();
    let hooks = obj.get("webhooks").and_then(Value::as_array);
    for (i, hook) in hooks.into_iter().flatten().enumerate() {
        let path = format!("webhooks[{i}]");
        let name = str_at(hook, "name").unwrap_or_default();
        if unique_names && !seen.insert(name) {
            errs.push(FieldError::duplicate(format!("{path}.name"), name));
        }
        errs.extend(validate_webhook(hook, kind, &path));
    }
    errs
}

fn validate_webhook(hook: &Value, kind: WebhookKind, path: &str) -> Vec<FieldError> {
    let mut errs = validate_fully_qualified_name(
        &format!("{path}.name"),
        str_at(hook, "name").unwrap_or_default(),
    );
    let rules = hook.get("rules").and_then(Value::as_array);
    for (j, rule) in rules.into_iter().flatten().enumerate() {
        errs.extend(validate_rule_with_operations(
            rule,
            &format!("{path}.rules[{j}]"),
        ));
    }
    let choice = |field: &str, supported: &[&str], errs: &mut Vec<FieldError>| {
        if let Some(value) = hook.get(field).filter(|v| !v.is_null()) {
            let text = value.as_str().unwrap_or_default();
            if !supported.contains(&text) {
                errs.push(FieldError::not_supported(
                    format!("{path}.{field}"),
                    value.clone(),
                    supported,
                ));
            }
        }
    };
    choice("failurePolicy", &["Fail", "Ignore"], &mut errs);
    choice("matchPolicy", &["Equivalent", "Exact"], &mut errs);
    if kind == WebhookKind::Mutating {
        choice("reinvocationPolicy", &["IfNeeded", "Never"], &mut errs);
    }
    match hook.get("sideEffects").filter(|v| !v.is_null() && *v != "") {
        None => errs.push(FieldError::required(
            format!("{path}.sideEffects"),
            "must specify one of None, NoneOnDryRun",
        )),
        Some(_) => choice("sideEffects", &["None", "NoneOnDryRun"], &mut errs),
    }
    if let Some(timeout) = hook.get("timeoutSeconds").and_then(Value::as_i64)
        && !(1..=30).contains(&timeout)
    {
        errs.push(FieldError::invalid(
            format!("{path}.timeoutSeconds"),
            timeout,
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        errs.extend(validate_label_selector(
            hook.get(selector),
            &format!("{path}.{selector}"),
        ));
    }
    errs.extend(validate_client_config(
        hook.get("clientConfig").unwrap_or(&Value::Null),
        &format!("{path}.clientConfig"),
    ));
    errs.extend(validate_review_versions(
        hook,
        &format!("{path}.admissionReviewVersions"),
    ));
    errs.extend(validate_match_conditions(
        hook,
        &format!("{path}.matchConditions"),
    ));
    errs
}

/// `IsFullyQualifiedName`: a lowercase DNS subdomain of at least three segments.
fn validate_fully_qualified_name(path: &str, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let msgs = validate_dns_subdomain(&name.to_lowercase());
    if !msgs.is_empty() {
        return vec![FieldError::invalid(path, name, msgs.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![FieldError::invalid(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

/// Exactly one of `url` and `service`, each valid.
fn validate_client_config(config: &Value, path: &str) -> Vec<FieldError> {
    let url = str_at(config, "url");
    let service = config.get("service").filter(|s| !s.is_null());
    match (url, service) {
        (Some(url), None) => validate_webhook_url(&format!("{path}.url"), url),
        (None, Some(service)) => validate_webhook_service(&format!("{path}.service"), service),
        _ => vec![FieldError::required(
            path,
            "exactly one of url or service is required",
        )],
    }
}

/// `validateAdmissionReviewVersions` with a recognized version required (R-VER-123).
fn validate_review_versions(hook: &Value, path: &str) -> Vec<FieldError> {
    let versions = strings(hook, "admissionReviewVersions");
    if versions.is_empty() {
        return vec![FieldError::required(
            path,
            "must specify one of v1, v1beta1",
        )];
    }
    let mut errs = Vec::new();
    let mut seen = HashSet::new();
    for (i, version) in versions.iter().enumerate() {
        if !seen.insert(version.as_str()) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                version.as_str(),
                "duplicate version",
            ));
            continue;
        }
        for msg in validate_dns1035_label(version) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                version.as_str(),
                msg,
            ));
        }
    }
    if !versions
        .iter()
        .any(|v| ADMISSION_REVIEW_VERSIONS.contains(&v.as_str()))
    {
        errs.push(FieldError::invalid(
            path,
            json!(versions),
            "must include at least one of v1, v1beta1",
        ));
    }
    errs
}

/// `validateMatchConditions`: at most 64, names qualified and unique, expressions that
/// compile over the webhook variables.
fn validate_match_conditions(hook: &Value, path: &str) -> Vec<FieldError> {
    let Some(conditions) = hook.get("matchConditions").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    if conditions.len() > MAX_MATCH_CONDITIONS {
        return vec![FieldError::too_many(
            path,
            conditions.len(),
            MAX_MATCH_CONDITIONS,
        )];
    }
    let mut seen = HashSet::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let name = str_at(condition, "name").unwrap_or_default();
        if name.is_empty() {
            errs.push(FieldError::required(format!("{at}.name"), ""));
        } else {
            let msgs = validate_qualified_name(name);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(
                    format!("{at}.name"),
                    name,
                    msgs.join("; "),
                ));
            } else if !seen.insert(name) {
                errs.push(FieldError::duplicate(format!("{at}.name"), name));
            }
        }
        let expression = str_at(condition, "expression").unwrap_or_default();
        if expression.trim().is_empty() {
            errs.push(FieldError::required(format!("{at}.expression"), ""));
        } else if let Err(e) = Program::compile(expression, MATCH_CONDITION_VARIABLES) {
            errs.push(FieldError::invalid(
                format!("{at}.expression"),
                expression,
                e.to_string(),
            ));
        }
    }
    errs
}

/// `ValidateRuleWithOperations` with subresources allowed.
fn validate_rule_with_operations(rule: &Value, path: &str) -> Vec<FieldError> {
    const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
    let mut errs = Vec::new();
    let operations = strings(rule, "operations");
    if operations.is_empty() {
        errs.push(FieldError::required(format!("{path}.operations"), ""));
    }
    if operations.len() > 1 && operations.iter().any(|o| o == "*") {
        errs.push(FieldError::invalid(
            format!("{path}.operations"),
            json!(operations),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, operation) in operations.iter().enumerate() {
        if !OPERATIONS.contains(&operation.as_str()) {
            errs.push(FieldError::not_supported(
                format!("{path}.operations[{i}]"),
                operation.as_str(),
                OPERATIONS,
            ));
        }
    }
    errs.extend(validate_rule(rule, path));
    errs
}

/// `validateRule`: groups, versions, resources (with subresources) and scope.
fn validate_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (field, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let values = strings(rule, field);
        if values.is_empty() {
            errs.push(FieldError::required(format!("{path}.{field}"), ""));
        }
        if values.len() > 1 && values.iter().any(|v| v == "*") {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                json!(values),
                format!("if '*' is present, must not specify other {what}"),
            ));
        }
        if field == "apiVersions" {
            for (i, _) in values.iter().enumerate().filter(|(_, v)| v.is_empty()) {
                errs.push(FieldError::required(format!("{path}.{field}[{i}]"), ""));
            }
        }
    }
    errs.extend(validate_resources(
        &strings(rule, "resources"),
        &format!("{path}.resources"),
    ));
    if let Some(scope) = rule.get("scope").filter(|s| !s.is_null()) {
        const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];
        if !SCOPES.contains(&scope.as_str().unwrap_or_default()) {
            errs.push(FieldError::not_supported(
                format!("{path}.scope"),
                scope.clone(),
                SCOPES,
            ));
        }
    }
    errs
}

/// `validateResources`: the wildcard forms may not overlap.
fn validate_resources(resources: &[String], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if resources.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    let mut any_subresource_of: HashSet<&str> = HashSet::new();
    let mut of_any_resource: HashSet<&str> = HashSet::new();
    let (mut double_wildcard, mut single_wildcard, mut plain) = (false, false, false);
    for (i, item) in resources.iter().enumerate() {
        if item.is_empty() {
            errs.push(FieldError::required(format!("{path}[{i}]"), ""));
            continue;
        }
        double_wildcard |= item == "*/*";
        single_wildcard |= item == "*";
        let Some((resource, sub)) = item.split_once('/') else {
            plain = item != "*";
            continue;
        };
        if any_subresource_of.contains(resource) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                item.as_str(),
                format!("if '{resource}/*' is present, must not specify {item}"),
            ));
        }
        if of_any_resource.contains(sub) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                item.as_str(),
                format!("if '*/{sub}' is present, must not specify {item}"),
            ));
        }
        if sub == "*" {
            any_subresource_of.insert(resource);
        }
        if resource == "*" {
            of_any_resource.insert(sub);
        }
    }
    if resources.len() > 1 && double_wildcard {
        errs.push(FieldError::invalid(
            path,
            json!(resources),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single_wildcard && plain {
        errs.push(FieldError::invalid(
            path,
            json!(resources),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errs
}

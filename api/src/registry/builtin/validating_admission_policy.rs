//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (`admissionregistration/v1`):
//! Kubernetes' v1 defaults and `ValidateValidatingAdmissionPolicy` /
//! `ValidateValidatingAdmissionPolicyBinding` with their field paths and messages (every
//! expression compiled: one that does not compile is a 422 naming it).
//!
//! `status` is kept from the object before on updates and cleared on creates, as
//! Kubernetes' strategy does; nothing writes `observedGeneration` or `typeChecking` yet.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::cel::Program;
use crate::cel::authorizer::AUTHORIZER_VARIABLE;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::validate_dns_subdomain;
use crate::validation::validate_label_selector;
use crate::validation::validate_qualified_name;

/// `failurePolicy` values.
const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
/// `matchPolicy` values.
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
/// Rule `operations` values.
const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
/// Validation `reason` values.
const REASONS: &[&str] = &[
    "Forbidden",
    "Invalid",
    "RequestEntityTooLarge",
    "Unauthorized",
];
/// `validationActions` values.
const ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];
/// The most match conditions a policy may have.
const MAX_MATCH_CONDITIONS: usize = 64;
/// The most audit annotations a policy may have.
const MAX_AUDIT_ANNOTATIONS: usize = 20;
/// The longest audit annotation value expression.
const MAX_VALUE_EXPRESSION_BYTES: usize = 5 * 1024;

/// The variables of expressions that may call the authorizer, and of those that may not.
const FULL: &[&str] = &[
    "object",
    "oldObject",
    "request",
    "namespaceObject",
    "variables",
    AUTHORIZER_VARIABLE,
];
const PLAIN: &[&str] = &[
    "object",
    "oldObject",
    "request",
    "namespaceObject",
    "variables",
];

fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or_default()
}

fn items<'a>(v: &'a Value, field: &str) -> &'a [Value] {
    v.get(field)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn set_default(object: &mut Map<String, Value>, field: &str, value: Value) {
    if object.get(field).is_none_or(Value::is_null) {
        object.insert(field.to_owned(), value);
    }
}

/// Kubernetes' v1 defaults of a `MatchResources`.
fn default_match_resources(holder: &mut Value) {
    let Some(m) = holder.as_object_mut() else {
        return;
    };
    set_default(m, "matchPolicy", json!("Equivalent"));
    set_default(m, "namespaceSelector", json!({}));
    set_default(m, "objectSelector", json!({}));
    for field in ["resourceRules", "excludeResourceRules"] {
        for rule in m
            .get_mut(field)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(rule) = rule.as_object_mut() {
                set_default(rule, "scope", json!("*"));
            }
        }
    }
}

/// The error of `source` at `path` that does not compile with `variables`.
fn compiled(source: &str, path: &str, variables: &[&str], params: bool) -> Option<FieldError> {
    let mut declared = variables.to_vec();
    if params {
        declared.push("params");
    }
    (Program::compile(source, &declared).err())
        .map(|e| FieldError::invalid(path, source, e.to_string()))
}

/// `validateMatchResources` at `path`.
fn validate_match_resources(m: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match m.get("matchPolicy").and_then(Value::as_str) {
        None => errs.push(FieldError::required(format!("{path}.matchPolicy"), "")),
        Some(p) if !MATCH_POLICIES.contains(&p) => errs.push(FieldError::not_supported(
            format!("{path}.matchPolicy"),
            p,
            MATCH_POLICIES,
        )),
        Some(_) => {}
    }
    for field in ["namespaceSelector", "objectSelector"] {
        match m.get(field).filter(|s| s.is_object()) {
            None => errs.push(FieldError::required(format!("{path}.{field}"), "")),
            Some(s) => errs.extend(validate_label_selector(Some(s), &format!("{path}.{field}"))),
        }
    }
    for field in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in items(m, field).iter().enumerate() {
            errs.extend(validate_rule(rule, &format!("{path}.{field}[{i}]")));
        }
    }
    errs
}

/// `validateNamedRuleWithOperations` at `path`.
fn validate_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let operations = items(rule, "operations");
    if operations.is_empty() {
        errs.push(FieldError::required(format!("{path}.operations"), ""));
    }
    if operations.len() > 1 && operations.iter().any(|o| o == "*") {
        errs.push(FieldError::invalid(
            format!("{path}.operations"),
            Value::Array(operations.to_vec()),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in operations.iter().enumerate() {
        let op = op.as_str().unwrap_or_default();
        if !OPERATIONS.contains(&op) {
            errs.push(FieldError::not_supported(
                format!("{path}.operations[{i}]"),
                op,
                OPERATIONS,
            ));
        }
    }
    for field in ["apiGroups", "apiVersions", "resources"] {
        if items(rule, field).is_empty() {
            errs.push(FieldError::required(format!("{path}.{field}"), ""));
        }
    }
    let mut names = Vec::new();
    for (i, name) in items(rule, "resourceNames").iter().enumerate() {
        let name = name.as_str().unwrap_or_default();
        if names.contains(&name) {
            errs.push(FieldError::duplicate(
                format!("{path}.resourceNames[{i}]"),
                name,
            ));
        }
        names.push(name);
    }
    errs
}

/// Whether `name` is a CEL identifier.
fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The strategy of ValidatingAdmissionPolicy.
pub struct ValidatingAdmissionPolicyStrategy;

impl ValidatingAdmissionPolicyStrategy {
    fn validate_spec(name: &str, spec: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        match spec.get("failurePolicy").and_then(Value::as_str) {
            None => errs.push(FieldError::required("spec.failurePolicy", "")),
            Some(p) if !FAILURE_POLICIES.contains(&p) => errs.push(FieldError::not_supported(
                "spec.failurePolicy",
                p,
                FAILURE_POLICIES,
            )),
            Some(_) => {}
        }
        let params = spec.get("paramKind").is_some_and(Value::is_object);
        if let Some(kind) = spec.get("paramKind").filter(|k| k.is_object()) {
            if text(kind, "apiVersion").is_empty() {
                errs.push(FieldError::required("spec.paramKind.apiVersion", ""));
            }
            if text(kind, "kind").is_empty() {
                errs.push(FieldError::required("spec.paramKind.kind", ""));
            }
        }
        match spec.get("matchConstraints").filter(|m| m.is_object()) {
            None => errs.push(FieldError::required("spec.matchConstraints", "")),
            Some(m) => {
                errs.extend(validate_match_resources(m, "spec.matchConstraints"));
                if items(m, "resourceRules").is_empty() {
                    errs.push(FieldError::required(
                        "spec.matchConstraints.resourceRules",
                        "",
                    ));
                }
            }
        }
        errs.extend(validate_match_conditions(spec, params));
        for (i, variable) in items(spec, "variables").iter().enumerate() {
            let path = format!("spec.variables[{i}]");
            let name = text(variable, "name");
            if name.trim().is_empty() {
                errs.push(FieldError::required(
                    format!("{path}.name"),
                    "name is not specified",
                ));
            } else if !is_cel_identifier(name) {
                errs.push(FieldError::invalid(
                    format!("{path}.name"),
                    name,
                    "name is not a valid CEL identifier",
                ));
            }
            let expression = text(variable, "expression");
            if expression.trim().is_empty() {
                errs.push(FieldError::required(
                    format!("{path}.expression"),
                    "expression is not specified",
                ));
            } else {
                errs.extend(compiled(
                    expression,
                    &format!("{path}.expression"),
                    FULL,
                    params,
                ));
            }
        }
        let validations = items(spec, "validations");
        let annotations = items(spec, "auditAnnotations");
        if validations.is_empty() && annotations.is_empty() {
            let detail = "validations or auditAnnotations must contain at least one item";
            errs.push(FieldError::required("spec.validations", detail));
            errs.push(FieldError::required("spec.auditAnnotations", detail));
            return errs;
        }
        for (i, validation) in validations.iter().enumerate() {
            errs.extend(validate_validation(
                validation,
                &format!("spec.validations[{i}]"),
                params,
            ));
        }
        if annotations.len() > MAX_AUDIT_ANNOTATIONS {
            errs.push(FieldError::invalid(
                "spec.auditAnnotations",
                Value::Array(annotations.to_vec()),
                format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
            ));
        }
        let mut keys = Vec::new();
        for (i, annotation) in annotations.iter().enumerate() {
            let path = format!("spec.auditAnnotations[{i}]");
            let key = text(annotation, "key");
            if name.is_empty() {
                errs.push(FieldError::invalid(
                    format!("{path}.key"),
                    key,
                    "requires metadata.name be non-empty",
                ));
            } else {
                let qualified = format!("{name}/{key}");
                for detail in validate_qualified_name(&qualified) {
                    errs.push(FieldError::invalid(
                        format!("{path}.key"),
                        qualified.clone(),
                        detail,
                    ));
                }
            }
            let expression = text(annotation, "valueExpression").trim();
            if expression.is_empty() {
                errs.push(FieldError::required(
                    format!("{path}.valueExpression"),
                    "valueExpression is not specified",
                ));
            } else if expression.len() > MAX_VALUE_EXPRESSION_BYTES {
                errs.push(FieldError::required(
                    format!("{path}.valueExpression"),
                    format!("must not exceed {MAX_VALUE_EXPRESSION_BYTES} bytes in length"),
                ));
            } else {
                let path = format!("{path}.valueExpression");
                errs.extend(compiled(expression, &path, PLAIN, params));
            }
            if keys.contains(&key) {
                errs.push(FieldError::duplicate(format!("{path}.key"), key));
            }
            keys.push(key);
        }
        errs
    }
}

/// `validateMatchConditions` of `spec`.
fn validate_match_conditions(spec: &Value, params: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let conditions = items(spec, "matchConditions");
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errs.push(FieldError::too_many(
            "spec.matchConditions",
            conditions.len(),
            MAX_MATCH_CONDITIONS,
        ));
    }
    let mut names = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let path = format!("spec.matchConditions[{i}]");
        let expression = text(condition, "expression").trim();
        if expression.is_empty() {
            errs.push(FieldError::required(format!("{path}.expression"), ""));
        } else {
            errs.extend(compiled(
                expression,
                &format!("{path}.expression"),
                FULL,
                params,
            ));
        }
        let name = text(condition, "name");
        if name.is_empty() {
            errs.push(FieldError::required(format!("{path}.name"), ""));
            continue;
        }
        for detail in validate_qualified_name(name) {
            errs.push(FieldError::invalid(format!("{path}.name"), name, detail));
        }
        if names.contains(&name) {
            errs.push(FieldError::duplicate(format!("{path}.name"), name));
        }
        names.push(name);
    }
    errs
}

/// `validateValidation` at `path`.
fn validate_validation(validation: &Value, path: &str, params: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let expression = text(validation, "expression");
    if expression.trim().is_empty() {
        errs.push(FieldError::required(
            format!("{path}.expression"),
            "expression is not specified",
        ));
    } else {
        errs.extend(compiled(
            expression,
            &format!("{path}.expression"),
            FULL,
            params,
        ));
    }
    let message_expression = text(validation, "messageExpression");
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.messageExpression"),
            message_expression,
            "must be non-empty if specified",
        ));
    } else if !message_expression.is_empty() {
        let at = format!("{path}.messageExpression");
        errs.extend(compiled(message_expression, &at, PLAIN, params));
    }
    let message = text(validation, "message");
    if !message.is_empty() && message.trim().is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.message"),
            message,
            "message must be non-empty if specified",
        ));
    } else if message.trim().contains(['\n', '\r']) {
        errs.push(FieldError::invalid(
            format!("{path}.message"),
            message,
            "message must not contain line breaks",
        ));
    }
    if let Some(reason) = validation.get("reason").and_then(Value::as_str)
        && !REASONS.contains(&reason)
    {
        errs.push(FieldError::not_supported(
            format!("{path}.reason"),
            reason,
            REASONS,
        ));
    }
    errs
}

impl Strategy for ValidatingAdmissionPolicyStrategy {
    fn default_fields(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        set_default(spec, "failurePolicy", json!("Fail"));
        if let Some(m) = spec.get_mut("matchConstraints") {
            default_match_resources(m);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(o) = obj.as_object_mut() {
            o.remove("status");
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if let Some(o) = new.as_object_mut() {
            match old.get("status") {
                Some(status) => o.insert("status".to_owned(), status.clone()),
                None => o.remove("status"),
            };
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Self::validate_spec(name, obj.get("spec").unwrap_or(&Value::Null))
    }
}

/// The strategy of ValidatingAdmissionPolicyBinding.
pub struct ValidatingAdmissionPolicyBindingStrategy;

impl Strategy for ValidatingAdmissionPolicyBindingStrategy {
    fn default_fields(&self, obj: &mut Value) {
        if let Some(m) = obj.pointer_mut("/spec/matchResources") {
            default_match_resources(m);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let mut errs = Vec::new();
        let policy = text(spec, "policyName");
        if policy.is_empty() {
            errs.push(FieldError::required("spec.policyName", ""));
        }
        for detail in validate_dns_subdomain(policy)
            .into_iter()
            .filter(|_| !policy.is_empty())
        {
            errs.push(FieldError::invalid("spec.policyName", policy, detail));
        }
        if let Some(param_ref) = spec.get("paramRef").filter(|p| p.is_object()) {
            errs.extend(validate_param_ref(param_ref));
        }
        if let Some(m) = spec.get("matchResources").filter(|m| m.is_object()) {
            errs.extend(validate_match_resources(m, "spec.matchResources"));
        }
        errs.extend(validate_actions(items(spec, "validationActions")));
        errs
    }
}

/// `validateParamRef`.
fn validate_param_ref(param_ref: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = text(param_ref, "name");
    let selector = param_ref.get("selector").filter(|s| s.is_object());
    let exclusive = "name and selector are mutually exclusive";
    if !name.is_empty() && selector.is_some() {
        errs.push(FieldError::forbidden("spec.paramRef.name", exclusive));
    }
    if let Some(selector) = selector {
        errs.extend(validate_label_selector(
            Some(selector),
            "spec.paramRef.selector",
        ));
        if !name.is_empty() {
            errs.push(FieldError::forbidden("spec.paramRef.selector", exclusive));
        }
    }
    if name.is_empty() && selector.is_none() {
        errs.push(FieldError::required(
            "spec.paramRef",
            "one of name or selector must be specified",
        ));
    }
    match text(param_ref, "parameterNotFoundAction") {
        "" => errs.push(FieldError::required(
            "spec.paramRef.parameterNotFoundAction",
            "",
        )),
        "Allow" | "Deny" => {}
        other => errs.push(FieldError::not_supported(
            "spec.paramRef.parameterNotFoundAction",
            other,
            &["Deny", "Allow"],
        )),
    }
    errs
}

/// `validateValidationActions`.
fn validate_actions(actions: &[Value]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let action = action.as_str().unwrap_or_default();
        let path = format!("spec.validationActions[{i}]");
        if !ACTIONS.contains(&action) {
            errs.push(FieldError::not_supported(path.clone(), action, ACTIONS));
        }
        if seen.contains(&action) {
            errs.push(FieldError::duplicate(path, action));
        }
        seen.push(action);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errs.push(FieldError::invalid(
            "spec.validationActions",
            Value::Array(actions.to_vec()),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(FieldError::required(
            "spec.validationActions",
            "at least one validation action is required",
        ));
    }
    errs
}

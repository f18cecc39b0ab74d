//! What ValidatingAdmissionPolicy and MutatingAdmissionPolicy (and their bindings) share
//! in Kubernetes' v1 defaults and validation (`pkg/apis/admissionregistration/validation`):
//! failure policy, param kind, match resources and their rules, match conditions, variables,
//! param references; every expression compiled, one that does not compile a 422 naming it.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::cel::Program;
use crate::cel::authorizer::AUTHORIZER_VARIABLE;
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
/// The most match conditions a policy may have.
const MAX_MATCH_CONDITIONS: usize = 64;
/// The variables of expressions that may call the authorizer.
pub(super) const FULL: &[&str] = &[
    "object",
    "oldObject",
    "request",
    "namespaceObject",
    "variables",
    AUTHORIZER_VARIABLE,
];
/// The variables of expressions that may not call the authorizer.
pub(super) const PLAIN: &[&str] = &[
    "object",
    "oldObject",
    "request",
    "namespaceObject",
    "variables",
];

/// The text of `v`'s `field`, empty when absent.
pub(super) fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// The items of `v`'s list `field`.
pub(super) fn items<'a>(v: &'a Value, field: &str) -> &'a [Value] {
    v.get(field)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Sets `object`'s `field` to `value` when it is unset.
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
pub(super) fn compiled(
    source: &str,
    path: &str,
    variables: &[&str],
    params: bool,
) -> Option<FieldError> {
    compiled_with(Program::compile, source, path, variables, params)
}

/// The errors of the required `expression` field of `holder` at `path`: unset, or not
/// compiling with `variables` (Kubernetes' `expression is not specified`, then its compile
/// error).
pub(super) fn required_expression(
    holder: &Value,
    path: &str,
    variables: &[&str],
    params: bool,
) -> Option<FieldError> {
    let expression = text(holder, "expression");
    let at = format!("{path}.expression");
    match expression.trim().is_empty() {
        true => Some(FieldError::required(at, "expression is not specified")),
        false => compiled(expression, &at, variables, params),
    }
}

/// The error of the mutation `source` (which may construct the patch types) at `path` that
/// does not compile with `variables`.
pub(super) fn compiled_mutation(
    source: &str,
    path: &str,
    variables: &[&str],
    params: bool,
) -> Option<FieldError> {
    compiled_with(Program::compile_mutation, source, path, variables, params)
}

fn compiled_with(
    compile: fn(&str, &[&str]) -> Result<Program, crate::cel::CompileError>,
    source: &str,
    path: &str,
    variables: &[&str],
    params: bool,
) -> Option<FieldError> {
    let mut declared = variables.to_vec();
    if params {
        declared.push("params");
    }
    (compile(source, &declared).err()).map(|e| FieldError::invalid(path, source, e.to_string()))
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

/// The checks of a policy `spec` both kinds make, in Kubernetes' order: `failurePolicy`,
/// `paramKind`, `matchConstraints` (its rules' operations among `operations`, when given),
/// `matchConditions`, `variables`. Whether the policy has params comes with them.
pub(super) fn validate_policy_common(
    spec: &Value,
    operations: Option<&[&str]>,
) -> (Vec<FieldError>, bool) {
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
            if let Some(operations) = operations {
                errs.extend(validate_operations(
                    m,
                    operations,
                    "spec.matchConstraints.resourceRules.operations",
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
        errs.extend(required_expression(variable, &path, FULL, params));
    }
    (errs, params)
}

/// Every operation of `m`'s resource rules outside `operations`, not supported at `path`
/// (Kubernetes names no index there).
pub(super) fn validate_operations(m: &Value, operations: &[&str], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for rule in items(m, "resourceRules") {
        for op in items(rule, "operations") {
            let op = op.as_str().unwrap_or_default();
            if !operations.contains(&op) {
                errs.push(FieldError::not_supported(path, op, operations));
            }
        }
    }
    errs
}

/// Kubernetes' v1 defaults of a policy: `failurePolicy: Fail`, and its match constraints'.
pub(super) fn default_policy(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    set_default(spec, "failurePolicy", json!("Fail"));
    if let Some(m) = spec.get_mut("matchConstraints") {
        default_match_resources(m);
    }
}

/// Kubernetes' v1 defaults of a binding: its match resources'.
pub(super) fn default_binding(obj: &mut Value) {
    if let Some(m) = obj.pointer_mut("/spec/matchResources") {
        default_match_resources(m);
    }
}

/// The checks of a binding `spec` both kinds make: `policyName`, `paramRef`,
/// `matchResources`.
pub(super) fn validate_binding_common(spec: &Value) -> Vec<FieldError> {
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
    errs
}

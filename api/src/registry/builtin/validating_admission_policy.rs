//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (`admissionregistration/v1`):
//! Kubernetes' v1 defaults and `ValidateValidatingAdmissionPolicy` /
//! `ValidateValidatingAdmissionPolicyBinding` with their field paths and messages (every
//! expression compiled: one that does not compile is a 422 naming it).
//!
//! `status` is kept from the object before on updates and cleared on creates, as
//! Kubernetes' strategy does; the policy status controller writes `observedGeneration` and
//! `typeChecking` through the `status` subresource.

use serde_json::Value;

use super::admission_policy::FULL;
use super::admission_policy::PLAIN;
use super::admission_policy::compiled;
use super::admission_policy::default_binding;
use super::admission_policy::default_policy;
use super::admission_policy::items;
use super::admission_policy::required_expression;
use super::admission_policy::text;
use super::admission_policy::validate_binding_common;
use super::admission_policy::validate_policy_common;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::validate_qualified_name;

/// Validation `reason` values.
const REASONS: &[&str] = &[
    "Forbidden",
    "Invalid",
    "RequestEntityTooLarge",
    "Unauthorized",
];
/// `validationActions` values.
const ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];
/// The most audit annotations a policy may have.
const MAX_AUDIT_ANNOTATIONS: usize = 20;
/// The longest audit annotation value expression.
const MAX_VALUE_EXPRESSION_BYTES: usize = 5 * 1024;

/// The strategy of ValidatingAdmissionPolicy.
pub struct ValidatingAdmissionPolicyStrategy;

impl ValidatingAdmissionPolicyStrategy {
    fn validate_spec(name: &str, spec: &Value) -> Vec<FieldError> {
        let (mut errs, params) = validate_policy_common(spec, None);
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

/// `validateValidation` at `path`.
fn validate_validation(validation: &Value, path: &str, params: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    errs.extend(required_expression(validation, path, FULL, params));
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
        default_policy(obj);
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
        default_binding(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let mut errs = validate_binding_common(spec);
        errs.extend(validate_actions(items(spec, "validationActions")));
        errs
    }
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

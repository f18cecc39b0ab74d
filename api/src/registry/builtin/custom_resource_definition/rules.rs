//! `x-kubernetes-validations` rules of one schema node: a rule, a one-line message (required
//! when the rule spans lines), a known reason, a field path into the schema; then the rule's
//! CEL and its message expression compiled, so a rule that does not compile is refused when
//! the CRD is written, and `oldSelf` only where old and new values correlate.

use serde_json::Value;

use super::path::field_path_valid;
use super::schema::Context;
use super::view::str_of;
use crate::cel::Program;
use crate::validation::FieldError;

/// The `reason`s a validation rule may give.
const RULE_REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];
/// The variables a validation rule may use.
const RULE_VARIABLES: &[&str] = &["self", "oldSelf"];

fn rules_of(schema: &Value) -> &[Value] {
    schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The shape of each `x-kubernetes-validations` rule: a rule, a one-line message (required
/// when the rule spans lines), a known reason, a valid field path.
pub(super) fn validation_rules(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let newline = |s: &str| s.contains(['\n', '\r']);
    for (i, rule) in rules_of(schema).iter().enumerate() {
        let at = format!("{path}.x-kubernetes-validations[{i}]");
        let text = str_of(rule, "rule");
        let message = str_of(rule, "message");
        if text.trim().is_empty() {
            errs.push(FieldError::required(
                format!("{at}.rule"),
                "rule is not specified",
            ));
        } else if !message.is_empty() && message.trim().is_empty() {
            errs.push(FieldError::invalid(
                format!("{at}.message"),
                message,
                "must be non-empty if specified",
            ));
        } else if newline(message.trim()) {
            errs.push(FieldError::invalid(
                format!("{at}.message"),
                message,
                "must not contain line breaks",
            ));
        } else if newline(text.trim()) && message.trim().is_empty() {
            errs.push(FieldError::required(
                format!("{at}.message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        let message_expression = str_of(rule, "messageExpression");
        if !message_expression.is_empty() && message_expression.trim().is_empty() {
            errs.push(FieldError::required(
                format!("{at}.messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = rule.get("reason").and_then(Value::as_str)
            && !RULE_REASONS.contains(&reason)
        {
            errs.push(FieldError::not_supported(
                format!("{at}.reason"),
                reason,
                RULE_REASONS,
            ));
        }
        let field_path = str_of(rule, "fieldPath");
        if !field_path.is_empty() && field_path.trim().is_empty() {
            errs.push(FieldError::invalid(
                format!("{at}.fieldPath"),
                field_path,
                "must be non-empty if specified",
            ));
        }
        if newline(field_path) {
            errs.push(FieldError::invalid(
                format!("{at}.fieldPath"),
                field_path,
                "must not contain line breaks",
            ));
        }
        if !field_path.is_empty() && !field_path_valid(schema, field_path, true) {
            errs.push(FieldError::invalid(
                format!("{at}.fieldPath"),
                field_path,
                "must be a valid path",
            ));
        }
    }
    errs
}

/// Each rule's CEL (and message expression) compiled; `oldSelf` only where old and new
/// values correlate, and `optionalOldSelf` only with `oldSelf`.
pub(super) fn compile_validation_rules(
    schema: &Value,
    path: &str,
    ctx: &Context,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, rule) in rules_of(schema).iter().enumerate() {
        let at = format!("{path}.x-kubernetes-validations[{i}]");
        match Program::compile(str_of(rule, "rule"), RULE_VARIABLES) {
            Err(e) => errs.push(FieldError::invalid(
                format!("{at}.rule"),
                rule.clone(),
                e.to_string(),
            )),
            Ok(program) if program.references("oldSelf") => {
                if let Some(ancestor) = &ctx.uncorrelatable {
                    errs.push(FieldError::invalid(
                        format!("{at}.rule"),
                        str_of(rule, "rule"),
                        format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {ancestor}"),
                    ));
                }
            }
            Ok(_) => {
                if let Some(optional) = rule.get("optionalOldSelf").and_then(Value::as_bool) {
                    errs.push(FieldError::invalid(
                        format!("{at}.optionalOldSelf"),
                        optional,
                        "may not be set if oldSelf is not used in rule",
                    ));
                }
            }
        }
        let message_expression = str_of(rule, "messageExpression");
        if !message_expression.trim().is_empty()
            && let Err(e) = Program::compile(message_expression, RULE_VARIABLES)
        {
            errs.push(FieldError::invalid(
                format!("{at}.messageExpression"),
                rule.clone(),
                format!("messageExpression {e}"),
            ));
        }
    }
    errs
}

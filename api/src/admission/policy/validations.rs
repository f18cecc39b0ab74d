//! The body of a ValidatingAdmissionPolicy: its validations and audit annotations, compiled.

use serde_json::Value;

use super::definition::CompiledPolicy;
use super::definition::Expression;
use super::definition::PolicyBody;
use super::definition::entries;
use super::definition::text;

/// A ValidatingAdmissionPolicy ready to evaluate.
pub type ValidatingPolicy = CompiledPolicy<Validations>;

/// The `reason` values a validation may give, as static text.
const REASONS: &[&str] = &[
    "Unauthorized",
    "Forbidden",
    "Invalid",
    "RequestEntityTooLarge",
];

/// One `spec.validations[]` entry.
#[derive(Debug)]
pub struct Validation {
    /// `expression`.
    pub expression: Expression,
    /// `message`, if set.
    pub message: Option<String>,
    /// `messageExpression`, if set.
    pub message_expression: Option<Expression>,
    /// `reason` (`Invalid` when unset).
    pub reason: &'static str,
}

/// `spec.validations` and `spec.auditAnnotations`.
#[derive(Debug)]
pub struct Validations {
    /// `spec.validations`.
    pub validations: Vec<Validation>,
    /// `spec.auditAnnotations`: key and value expression.
    pub audit_annotations: Vec<(String, Expression)>,
}

impl PolicyBody for Validations {
    fn compile(spec: &Value, full: &[&str], plain: &[&str]) -> Self {
        let validations = entries(spec, "validations")
            .map(|v| Validation {
                expression: Expression::compile(text(v, "expression"), full),
                message: v.get("message").and_then(Value::as_str).map(str::to_owned),
                message_expression: (v.get("messageExpression").and_then(Value::as_str))
                    .map(|source| Expression::compile(source, plain)),
                reason: REASONS
                    .iter()
                    .find(|r| **r == text(v, "reason"))
                    .copied()
                    .unwrap_or("Invalid"),
            })
            .collect();
        let audit_annotations = entries(spec, "auditAnnotations")
            .map(|a| {
                let key = text(a, "key").to_owned();
                (key, Expression::compile(text(a, "valueExpression"), plain))
            })
            .collect();
        Self {
            validations,
            audit_annotations,
        }
    }
}

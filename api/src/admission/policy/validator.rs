//! One policy judged for one binding and one param (Kubernetes' validator): its match
//! conditions, then its validations with their messages, then its audit annotations, each
//! turned into a decision under the policy's failure policy.

use super::activation::Activation;
use super::activation::Failure;
use super::activation::OUT_OF_BUDGET;
use super::activation::POLICY_BUDGET;
use super::definition::CompiledPolicy;
use super::definition::FailurePolicy;
use super::validations::ValidatingPolicy;

/// The longest message a `messageExpression` may give (Kubernetes'
/// `MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// A failed validation (or, under `failurePolicy: Fail`, one that could not be decided):
/// the binding's actions apply to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The validation's index (the audit annotation names it).
    pub index: usize,
    /// The message.
    pub message: String,
    /// The `Status.reason` of a refusal.
    pub reason: &'static str,
}

/// What one evaluation gave: its failed validations, the audit annotations to publish (key
/// and value), and the audit annotation errors that refuse the request whatever the
/// binding's actions.
#[derive(Debug, Default)]
pub struct Verdict {
    /// The decisions that are not admits.
    pub decisions: Vec<Decision>,
    /// The `auditAnnotations` values.
    pub annotations: Vec<(String, String)>,
    /// Errors of `auditAnnotations` that refuse the request.
    pub refusals: Vec<String>,
}

impl Verdict {
    fn failed(policy: &ValidatingPolicy, message: String) -> Self {
        let mut verdict = Self::default();
        verdict.error(policy, 0, message);
        verdict
    }

    /// An expression that could not be decided: a decision under `Fail`, nothing under
    /// `Ignore`.
    fn error(&mut self, policy: &ValidatingPolicy, index: usize, message: String) {
        if policy.failure_policy == FailurePolicy::Fail {
            self.decisions.push(Decision {
                index,
                message,
                reason: "Invalid",
            });
        }
    }
}

/// The match conditions' outcome: `Ok(true)` when the policy applies, `Err` with the
/// errors' message when none is false and some failed.
pub async fn matches<B>(
    policy: &CompiledPolicy<B>,
    activation: &mut Activation<'_>,
) -> Result<bool, String> {
    let mut budget = POLICY_BUDGET;
    let mut errors = Vec::new();
    for (_, condition) in &policy.match_conditions {
        match activation.evaluate(condition, &mut budget).await {
            Ok(cel::Value::Bool(false)) => return Ok(false),
            Ok(_) => {}
            Err(Failure::Error(e)) => errors.push(e),
            Err(Failure::OutOfBudget) => return Err(OUT_OF_BUDGET.to_owned()),
        }
    }
    match errors.len() {
        0 => Ok(true),
        1 => Err(errors.concat()),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

/// Judges the request `activation` describes by `policy`.
pub async fn validate(policy: &ValidatingPolicy, activation: &mut Activation<'_>) -> Verdict {
    match matches(policy, activation).await {
        Ok(true) => {}
        Ok(false) => return Verdict::default(),
        Err(message) => return Verdict::failed(policy, message),
    }
    let mut verdict = Verdict::default();
    let mut budget = POLICY_BUDGET;
    for (index, validation) in policy.body.validations.iter().enumerate() {
        match activation
            .evaluate(&validation.expression, &mut budget)
            .await
        {
            Ok(cel::Value::Bool(true)) => continue,
            Ok(_) => {}
            Err(Failure::Error(e)) => {
                verdict.error(policy, index, e);
                continue;
            }
            Err(Failure::OutOfBudget) => return Verdict::failed(policy, OUT_OF_BUDGET.to_owned()),
        }
        let mut message = String::new();
        if let Some(expression) = &validation.message_expression {
            match activation.evaluate(expression, &mut budget).await {
                Ok(cel::Value::String(text)) => {
                    let text = text.trim();
                    if text.len() <= MAX_MESSAGE_BYTES && !text.contains('\n') {
                        text.clone_into(&mut message);
                    }
                }
                Ok(_) | Err(Failure::Error(_)) => {}
                Err(Failure::OutOfBudget) => {
                    let message = format!("failed messageExpression: {OUT_OF_BUDGET}");
                    return Verdict::failed(policy, message);
                }
            }
        }
        if message.is_empty()
            && let Some(text) = &validation.message
        {
            text.trim().clone_into(&mut message);
        }
        if message.is_empty() {
            message = format!("failed expression: {}", validation.expression.source.trim());
        }
        verdict.decisions.push(Decision {
            index,
            message,
            reason: validation.reason,
        });
    }
    let mut budget = POLICY_BUDGET;
    for (key, expression) in &policy.body.audit_annotations {
        match activation.evaluate(expression, &mut budget).await {
            Ok(cel::Value::String(value)) if !value.trim().is_empty() => {
                verdict
                    .annotations
                    .push((key.clone(), value.trim().to_owned()));
            }
            Ok(cel::Value::String(_) | cel::Value::Null) => {}
            Ok(other) => {
                let message = format!(
                    "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
                    expression.source,
                    type_name(&other)
                );
                verdict.refusals.push(message);
            }
            Err(Failure::Error(e)) => {
                if policy.failure_policy == FailurePolicy::Fail {
                    verdict.refusals.push(e);
                }
            }
            Err(Failure::OutOfBudget) => return Verdict::failed(policy, OUT_OF_BUDGET.to_owned()),
        }
    }
    verdict
}

/// cel-go's name of a value's type.
pub fn type_name(value: &cel::Value) -> &'static str {
    match value {
        cel::Value::List(_) => "list",
        cel::Value::Map(_) => "map",
        cel::Value::Int(_) => "int",
        cel::Value::UInt(_) => "uint",
        cel::Value::Float(_) => "double",
        cel::Value::String(_) => "string",
        cel::Value::Bytes(_) => "bytes",
        cel::Value::Bool(_) => "bool",
        cel::Value::Duration(_) => "google.protobuf.Duration",
        cel::Value::Timestamp(_) => "google.protobuf.Timestamp",
        cel::Value::Null => "null_type",
        _ => "dyn",
    }
}

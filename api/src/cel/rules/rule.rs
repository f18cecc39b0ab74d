//! One compiled `x-kubernetes-validations` rule and its evaluation on one value (Kubernetes'
//! `validateExpressions`): the rule runs with `self` (and `oldSelf`), metered; a false result
//! becomes a field error with the rule's message, evaluated `messageExpression`, `reason` and
//! `fieldPath`, worded as kube-apiserver words it.

use std::sync::Arc;

use serde_json::Value;

use crate::cel::EvalError;
use crate::cel::Program;
use crate::cel::evaluate_metered;
use crate::validation::FieldError;

/// The variables a rule may read.
pub(super) const RULE_VARIABLES: &[&str] = &["self", "oldSelf"];
/// The longest message a `messageExpression` may produce, in bytes (Kubernetes').
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// The `reason` a failed rule reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

/// One compiled rule.
#[derive(Debug)]
pub(super) struct Rule {
    /// The rule's source, trimmed.
    pub text: String,
    /// The compiled rule, or why it does not compile.
    pub program: Result<Program, String>,
    /// The message, trimmed (empty: none).
    pub message: String,
    pub message_expression: Option<Program>,
    pub reason: Reason,
    /// The rule's `fieldPath`, as a path relative to the node (`replicas`, `labels[a]`).
    pub field_path: Option<String>,
    pub uses_old_self: bool,
    /// The shapes the rule's rewritten comparisons of typed lists read
    /// ([`super::list_types`]).
    pub list_shapes: Option<cel::Value>,
    pub optional_old_self: bool,
}

/// What a rule's evaluation left: nothing, an error to report, or an error after which no
/// further rule runs.
pub(super) enum Outcome {
    Passed,
    Failed(FieldError),
    Stop(FieldError),
}

/// The values a rule is evaluated on.
pub(super) struct Input<'a> {
    /// The node's field path (`""` at the root).
    pub path: &'a str,
    /// The node's schema type.
    pub type_name: &'a str,
    pub value: &'a Value,
    pub this: &'a cel::Value,
    pub old: Option<&'a cel::Value>,
}

impl Rule {
    /// The text errors name the rule by: its message, or else its source.
    fn name(&self) -> &str {
        if self.message.is_empty() {
            &self.text
        } else {
            &self.message
        }
    }

    /// Evaluates the rule on `input` against the budget `remaining`, which it decreases by
    /// the cost spent.
    pub fn evaluate(&self, input: &Input<'_>, per_call: u64, remaining: &mut i64) -> Outcome {
        let invalid = |detail: String| {
            FieldError::invalid(shown(input.path), input.type_name.to_owned(), detail)
        };
        let program = match &self.program {
            Ok(program) => program,
            Err(e) => return Outcome::Failed(invalid(format!("rule compile error: {e}"))),
        };
        let mut variables = vec![("self", input.this.clone())];
        if self.optional_old_self {
            let optional = match input.old {
                Some(old) => cel::objects::OptionalValue::of(old.clone()),
                None => cel::objects::OptionalValue::none(),
            };
            variables.push(("oldSelf", cel::Value::Opaque(Arc::new(optional))));
        } else if let Some(old) = input.old {
            variables.push(("oldSelf", old.clone()));
        }
        if let Some(shapes) = &self.list_shapes {
            variables.push((super::list_types::SHAPES_VARIABLE, shapes.clone()));
        }
        let (result, cost) = evaluate_metered(program, variables, per_call);
        if i64::try_from(cost).map_or(true, |c| c > *remaining) {
            return Outcome::Stop(invalid(OUT_OF_BUDGET.to_owned()));
        }
        *remaining -= i64::try_from(cost).unwrap_or(i64::MAX);
        match result {
            Err(EvalError::CostLimitExceeded) => {
                return Outcome::Stop(invalid(format!(
                    "'{}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                    super::super::meter::COST_EXCEEDED,
                    self.name()
                )));
            }
            Err(e) => {
                let e = e.to_string();
                return Outcome::Failed(invalid(if e.starts_with("no such overload") {
                    format!(
                        "'{e}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        self.name()
                    )
                } else {
                    format!("{e} evaluating rule: {}", self.name())
                }));
            }
            Ok(cel::Value::Bool(true)) => return Outcome::Passed,
            Ok(_) => {}
        }
        let path = match &self.field_path {
            Some(relative) if input.path.is_empty() => relative.clone(),
            Some(relative) if relative.starts_with('[') => format!("{}{relative}", input.path),
            Some(relative) => format!("{}.{relative}", input.path),
            None => input.path.to_owned(),
        };
        let detail = match self.message_detail(input, per_call, remaining) {
            Ok(detail) => detail,
            Err(detail) => {
                return Outcome::Stop(FieldError::invalid(
                    shown(&path),
                    input.type_name.to_owned(),
                    detail,
                ));
            }
        };
        let detail = detail.unwrap_or_else(|| {
            if self.message.is_empty() {
                format!("failed rule: {}", self.text)
            } else {
                self.message.clone()
            }
        });
        let value = match input.type_name {
            "object" | "array" => Value::String(input.type_name.to_owned()),
            _ => input.value.clone(),
        };
        let path = shown(&path);
        Outcome::Failed(match self.reason {
            Reason::Invalid => FieldError::invalid(path, value, detail),
            Reason::Forbidden => FieldError::forbidden(path, detail),
            Reason::Required => FieldError::required(path, detail),
            Reason::Duplicate => FieldError::duplicate(path, value),
        })
    }

    /// The message `messageExpression` gives (`None`: it gave none usable, the message is
    /// used), or the text of an error that stops validation.
    fn message_detail(
        &self,
        input: &Input<'_>,
        per_call: u64,
        remaining: &mut i64,
    ) -> Result<Option<String>, String> {
        let Some(program) = &self.message_expression else {
            return Ok(None);
        };
        let mut variables = vec![("self", input.this.clone())];
        if let Some(old) = input.old {
            variables.push(("oldSelf", old.clone()));
        }
        let (result, cost) = evaluate_metered(program, variables, per_call);
        if i64::try_from(cost).map_or(true, |c| c > *remaining) {
            return Err("messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run".to_owned());
        }
        *remaining -= i64::try_from(cost).unwrap_or(i64::MAX);
        match result {
            Err(EvalError::CostLimitExceeded) => Err(format!(
                "no further validation rules will be run due to call cost exceeds limit for messageExpression: {:?}",
                program.source()
            )),
            Ok(cel::Value::String(s)) => {
                let s = s.trim();
                let usable = !s.is_empty() && s.len() <= MAX_MESSAGE_BYTES && !s.contains('\n');
                Ok(usable.then(|| s.to_owned()))
            }
            _ => Ok(None),
        }
    }
}

/// Kubernetes' error when the per-object budget is spent.
pub(super) const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// A field path as Kubernetes prints it: the root (a nil path) is `<nil>`.
pub(super) fn shown(path: &str) -> String {
    if path.is_empty() {
        "<nil>".to_owned()
    } else {
        path.to_owned()
    }
}

//! `x-kubernetes-validations` rules of one schema node: a rule, a one-line message (required
//! when the rule spans lines), a known reason, a field path into the schema; then the rule's
//! CEL and its message expression compiled, so a rule that does not compile is refused when
//! the CRD is written, and `oldSelf` only where old and new values correlate; and the
//! estimated cost of all rules of a schema, refused over Kubernetes' limits
//! ([`estimated_costs`]).

use serde_json::Value;

use super::path::field_path_valid;
use super::schema::Context;
use super::view::str_of;
use crate::cel::Program;
use crate::cel::estimate;
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

/// The largest estimated cost of one rule (times how often it can run) Kubernetes admits
/// (`StaticEstimatedCostLimit`).
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// The largest estimated cost of all rules of one schema together
/// (`StaticEstimatedCRDCostLimit`).
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;
/// How many of the most expensive rules a refused total names.
const MOST_EXPENSIVE: usize = 4;

/// The estimated cost of every rule of `schema` (the `openAPIV3Schema` at `root`), each
/// multiplied by how many times it can run (the product of the `maxItems`/`maxProperties` of
/// the lists and maps above it, or what one request can hold where one is unbounded): a rule
/// or message expression over [`STATIC_ESTIMATED_COST_LIMIT`], or a total over
/// [`STATIC_ESTIMATED_CRD_COST_LIMIT`], is refused with Kubernetes' messages.
pub(super) fn estimated_costs(schema: &Value, root: &str) -> Vec<FieldError> {
    let mut costs = Costs {
        errs: Vec::new(),
        total: 0,
        expensive: Vec::new(),
    };
    costs.node(schema, root, Some(1), true, 0);
    let mut errs = costs.errs;
    if costs.total > STATIC_ESTIMATED_CRD_COST_LIMIT {
        costs.expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        for (path, _) in costs.expensive.iter().take(MOST_EXPENSIVE) {
            errs.push(FieldError::forbidden(
                path.clone(),
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        errs.push(FieldError::forbidden(
            root,
            cost_error(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                costs.total,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ),
        ));
    }
    errs
}

/// Kubernetes' `getCostErrorMessage`.
fn cost_error(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_owned()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The walk of [`estimated_costs`].
struct Costs {
    errs: Vec<FieldError>,
    total: u64,
    expensive: Vec<(String, u64)>,
}

impl Costs {
    /// `cardinality`: how many times a value of this node can occur (`None`: unbounded).
    fn node(
        &mut self,
        schema: &Value,
        path: &str,
        cardinality: Option<u64>,
        resource_root: bool,
        depth: usize,
    ) {
        if depth > super::schema::MAX_DEPTH || !schema.is_object() {
            return;
        }
        let times = cardinality.unwrap_or_else(|| estimate::unbounded_cardinality(schema));
        for (i, rule) in rules_of(schema).iter().enumerate() {
            let at = format!("{path}.x-kubernetes-validations[{i}]");
            for (key, what) in [
                ("rule", "estimated rule cost"),
                ("messageExpression", "estimated messageExpression cost"),
            ] {
                let Ok(program) = Program::compile(str_of(rule, key), RULE_VARIABLES) else {
                    continue;
                };
                let shape = estimate::Shape::Schema(schema, resource_root);
                let cost = estimate::estimate(
                    program.expression(),
                    &[("self", shape), ("oldSelf", shape)],
                );
                let cost = if cost == 0 {
                    0
                } else {
                    cost.saturating_mul(times)
                };
                let field = format!("{at}.{key}");
                if cost > STATIC_ESTIMATED_COST_LIMIT {
                    self.errs.push(FieldError::forbidden(
                        field.clone(),
                        cost_error(what, cost, STATIC_ESTIMATED_COST_LIMIT),
                    ));
                }
                self.total = self.total.saturating_add(cost);
                if cost >= STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
                    self.expensive.push((field, cost));
                }
            }
        }
        let factor = match schema.get("type").and_then(Value::as_str) {
            Some("array") => schema.get("maxItems").and_then(Value::as_u64),
            Some("object")
                if schema
                    .get("additionalProperties")
                    .is_some_and(Value::is_object) =>
            {
                schema.get("maxProperties").and_then(Value::as_u64)
            }
            _ => Some(1),
        };
        let child = cardinality.zip(factor).map(|(c, f)| c.saturating_mul(f));
        let embedded = |s: &Value| {
            s.get("x-kubernetes-embedded-resource")
                .and_then(Value::as_bool)
                == Some(true)
        };
        for (name, property) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let at = format!("{path}.properties[{name}]");
            self.node(property, &at, child, embedded(property), depth + 1);
        }
        for key in ["additionalProperties", "items"] {
            if let Some(sub) = schema.get(key).filter(|s| s.is_object()) {
                let at = format!("{path}.{key}");
                self.node(sub, &at, child, embedded(sub), depth + 1);
            }
        }
    }
}

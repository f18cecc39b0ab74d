//! The evaluation of a policy's expressions for one request and one param: the variables
//! `object`, `oldObject`, `request`, `params`, `namespaceObject` converted to CEL once, the
//! `authorizer`, and the policy's `variables`, each evaluated the first time an expression
//! reads it and kept for the rest of the evaluation. Every evaluation is metered against
//! Kubernetes' per-expression limit and the budget it is given.

use std::collections::HashMap;

use super::definition::Expression;
use crate::cel::CelAuthorizer;
use crate::cel::EvalError;
use crate::cel::evaluate_metered;

/// Kubernetes' per-expression runtime cost limit.
pub const PER_CALL_LIMIT: u64 = crate::cel::authorizer::PER_CALL_LIMIT;

/// Kubernetes' runtime cost budget of one policy evaluation (`RuntimeCELCostBudget`).
pub const POLICY_BUDGET: u64 = 10_000_000;

/// Why an expression gave no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The expression failed (Kubernetes' message for it).
    Error(String),
    /// The evaluation's budget is spent: nothing more runs.
    OutOfBudget,
}

/// Kubernetes' message for a spent evaluation budget.
pub const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// The variables of one evaluation.
pub struct Activation<'a> {
    values: Vec<(&'static str, cel::Value)>,
    authorizer: Option<&'a CelAuthorizer>,
    declared: &'a [(String, Expression)],
    computed: Vec<Option<Result<cel::Value, String>>>,
}

impl<'a> Activation<'a> {
    /// The activation of `values` (object, oldObject, request, namespaceObject, params), the
    /// policy's `declared` variables and the request's `authorizer`.
    pub fn new(
        values: Vec<(&'static str, cel::Value)>,
        declared: &'a [(String, Expression)],
        authorizer: Option<&'a CelAuthorizer>,
    ) -> Self {
        Self {
            values,
            authorizer,
            declared,
            computed: declared.iter().map(|_| None).collect(),
        }
    }

    /// Replaces `object` by `object` (a mutation's result); the policy's variables already
    /// evaluated are kept, as Kubernetes keeps them for the rest of an invocation.
    pub fn set_object(&mut self, object: &serde_json::Value) {
        if let Some((_, value)) = self.values.iter_mut().find(|(name, _)| *name == "object") {
            *value = crate::cel::to_cel(object);
        }
    }

    /// Evaluates `expression` against `budget` (decreased by what it costs): its value, or
    /// Kubernetes' `expression '<source>' resulted in error: ...`.
    pub async fn evaluate(
        &mut self,
        expression: &Expression,
        budget: &mut u64,
    ) -> Result<cel::Value, Failure> {
        let resulted = |e: &str| {
            Failure::Error(format!(
                "expression '{}' resulted in error: {e}",
                expression.source
            ))
        };
        let program = match &expression.program {
            Ok(program) => program,
            Err(e) => return Err(Failure::Error(format!("compilation error: {e}"))),
        };
        let variables = match self.variables_of(program, budget).await? {
            Ok(variables) => variables,
            Err(e) => return Err(resulted(&e)),
        };
        let mut values = self.values.clone();
        values.push(("variables", variables));
        match self.run(program, values, budget).await {
            Ok(value) => Ok(value),
            Err(Failure::Error(e)) => Err(resulted(&e)),
            Err(Failure::OutOfBudget) => Err(Failure::OutOfBudget),
        }
    }

    /// Runs `program` with `values`, metered: through the authorizer when it calls it.
    async fn run(
        &self,
        program: &crate::cel::Program,
        values: Vec<(&str, cel::Value)>,
        budget: &mut u64,
    ) -> Result<cel::Value, Failure> {
        let limit = PER_CALL_LIMIT.min(*budget);
        let authorizer = (self.authorizer)
            .filter(|_| program.references(crate::cel::authorizer::AUTHORIZER_VARIABLE));
        let (result, cost) = match authorizer {
            Some(authorizer) => {
                let authorizer = authorizer.clone().with_budget(limit);
                let result = authorizer.evaluate_values(program, &[], &values).await;
                let cost = if matches!(result, Err(EvalError::CostLimitExceeded)) {
                    limit.saturating_add(1)
                } else {
                    0
                };
                (result.map(|json| crate::cel::to_cel(&json)), cost)
            }
            None => evaluate_metered(program, values, limit),
        };
        let exceeded = matches!(result, Err(EvalError::CostLimitExceeded));
        if cost > *budget || (exceeded && limit < PER_CALL_LIMIT) {
            *budget = 0;
            return Err(Failure::OutOfBudget);
        }
        *budget -= cost;
        result.map_err(|e| Failure::Error(e.to_string()))
    }

    /// The `variables` map `program` reads: every declared variable it reads, and those they
    /// read, evaluated once; the first failed one's error.
    async fn variables_of(
        &mut self,
        program: &crate::cel::Program,
        budget: &mut u64,
    ) -> Result<Result<cel::Value, String>, Failure> {
        let reads = |p: &crate::cel::Program, name: &str| p.reads("variables", name);
        let declared = self.declared;
        let mut needed: Vec<bool> = (declared.iter())
            .map(|(name, _)| reads(program, name))
            .collect();
        for i in (0..declared.len()).rev() {
            if !needed.get(i).copied().unwrap_or(false) {
                continue;
            }
            let Some((
                _,
                Expression {
                    program: Ok(own), ..
                },
            )) = declared.get(i)
            else {
                continue;
            };
            for (j, (name, _)) in declared.iter().enumerate().take(i) {
                if reads(own, name)
                    && let Some(n) = needed.get_mut(j)
                {
                    *n = true;
                }
            }
        }
        let mut map: HashMap<String, cel::Value> = HashMap::new();
        for (i, (name, expression)) in declared.iter().enumerate() {
            if !needed.get(i).copied().unwrap_or(false) {
                continue;
            }
            if self.computed.get(i).is_some_and(Option::is_none) {
                let value = match &expression.program {
                    Err(e) => Err(format!(
                        "composited variable \"{name}\" fails to compile: {e}"
                    )),
                    Ok(own) => {
                        let mut values = self.values.clone();
                        values.push(("variables", cel::Value::from(map.clone())));
                        match self.run(own, values, budget).await {
                            Ok(value) => Ok(value),
                            Err(Failure::Error(e)) => Err(format!(
                                "composited variable \"{name}\" fails to evaluate: {e}"
                            )),
                            Err(Failure::OutOfBudget) => return Err(Failure::OutOfBudget),
                        }
                    }
                };
                if let Some(slot) = self.computed.get_mut(i) {
                    *slot = Some(value);
                }
            }
            match self.computed.get(i) {
                Some(Some(Ok(value))) => {
                    map.insert(name.clone(), value.clone());
                }
                Some(Some(Err(e))) => return Ok(Err(e.clone())),
                _ => {}
            }
        }
        Ok(Ok(cel::Value::from(map)))
    }
}

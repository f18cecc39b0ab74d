//! An admission policy compiled once per generation: what Validating- and
//! MutatingAdmissionPolicies share (failure policy, param kind, match constraints, match
//! conditions, variables), its expressions parsed and checked against the variables each
//! kind of expression may read, and the kind's own body ([`PolicyBody`]: validations, or
//! mutations).

use serde_json::Value;

use super::match_resources::MatchResources;
use crate::cel::Program;
use crate::cel::authorizer::AUTHORIZER_VARIABLE;

/// What a policy does when it cannot decide (an expression fails, params are missing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailurePolicy {
    /// The request is refused (the default).
    Fail,
    /// The policy is skipped.
    Ignore,
}

/// `spec.paramKind`: the kind of a policy's params.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamKind {
    /// `apiVersion` (`v1`, `example.com/v1`).
    pub api_version: String,
    /// `kind`.
    pub kind: String,
}

impl ParamKind {
    /// The group and version of `api_version`.
    pub fn group_version(&self) -> (&str, &str) {
        self.api_version
            .split_once('/')
            .unwrap_or(("", self.api_version.as_str()))
    }

    /// Kubernetes' rendering of the group, version and kind (`apps/v1, Kind=Deployment`,
    /// `/v1, Kind=ConfigMap`).
    pub fn gvk(&self) -> String {
        let (group, version) = self.group_version();
        format!("{group}/{version}, Kind={}", self.kind)
    }
}

/// One expression of a policy, compiled (or why it did not compile).
#[derive(Debug)]
pub struct Expression {
    /// The source text.
    pub source: String,
    /// The program, or why it does not compile (`compilation failed: ...`).
    pub program: Result<Program, String>,
}

impl Expression {
    /// `source` compiled with the variables `variables`.
    pub fn compile(source: &str, variables: &[&str]) -> Self {
        Self {
            source: source.to_owned(),
            program: Program::compile(source, variables).map_err(|e| e.to_string()),
        }
    }

    /// A mutation's `source`, which may construct the patch types, compiled with the
    /// variables `variables`.
    pub fn compile_mutation(source: &str, variables: &[&str]) -> Self {
        Self {
            source: source.to_owned(),
            program: Program::compile_mutation(source, variables).map_err(|e| e.to_string()),
        }
    }
}

/// What one kind of policy does beside what every policy has: its validations, or its
/// mutations.
pub trait PolicyBody: std::fmt::Debug + Send + Sync + 'static {
    /// The body of the policy `spec`. `full` are the variables of expressions that may call
    /// the authorizer, `plain` those of expressions that may not (both with `params` when
    /// the policy has a param kind).
    fn compile(spec: &Value, full: &[&str], plain: &[&str]) -> Self;
}

/// A policy ready to evaluate.
#[derive(Debug)]
pub struct CompiledPolicy<B> {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` and `metadata.generation`: what the compilation is of.
    pub version: (String, i64),
    /// `spec.failurePolicy`.
    pub failure_policy: FailurePolicy,
    /// `spec.paramKind`.
    pub param_kind: Option<ParamKind>,
    /// `spec.matchConstraints`.
    pub match_constraints: MatchResources,
    /// `spec.matchConditions`: name and expression.
    pub match_conditions: Vec<(String, Expression)>,
    /// `spec.variables`: name and expression, in order.
    pub variables: Vec<(String, Expression)>,
    /// What the policy's kind does.
    pub body: B,
}

/// The variables of expressions that may call the authorizer (validations, match
/// conditions, variables), `params` last so that it can be left out.
const WITH_AUTHORIZER: &[&str] = &[
    "object",
    "oldObject",
    "request",
    "namespaceObject",
    "variables",
    AUTHORIZER_VARIABLE,
    "params",
];

/// The variables of message and audit annotation expressions.
const WITHOUT_AUTHORIZER: &[&str] = &[
    "object",
    "oldObject",
    "request",
    "namespaceObject",
    "variables",
    "params",
];

/// The `metadata` field `field` of `object`.
pub(super) fn meta<'a>(object: &'a Value, field: &str) -> &'a Value {
    object
        .pointer(&format!("/metadata/{field}"))
        .unwrap_or(&Value::Null)
}

/// The text of `object`'s `field`, empty when absent.
pub(super) fn text<'a>(object: &'a Value, field: &str) -> &'a str {
    object
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The items of `spec`'s list `field`.
pub(super) fn entries<'a>(spec: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    spec.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

impl<B: PolicyBody> CompiledPolicy<B> {
    /// Compiles the policy `object`.
    pub fn compile(object: &Value) -> Self {
        let spec = object.get("spec").unwrap_or(&Value::Null);
        let param_kind = spec
            .get("paramKind")
            .filter(|p| p.is_object())
            .map(|p| ParamKind {
                api_version: text(p, "apiVersion").to_owned(),
                kind: text(p, "kind").to_owned(),
            });
        let full = variables(WITH_AUTHORIZER, param_kind.is_some());
        let plain = variables(WITHOUT_AUTHORIZER, param_kind.is_some());
        let named = |field: &str, declared: &[&str]| {
            entries(spec, field)
                .map(|e| {
                    let name = text(e, "name").to_owned();
                    (name, Expression::compile(text(e, "expression"), declared))
                })
                .collect::<Vec<_>>()
        };
        Self {
            name: meta(object, "name").as_str().unwrap_or_default().to_owned(),
            version: (
                meta(object, "uid").as_str().unwrap_or_default().to_owned(),
                meta(object, "generation").as_i64().unwrap_or_default(),
            ),
            failure_policy: match text(spec, "failurePolicy") {
                "Ignore" => FailurePolicy::Ignore,
                _ => FailurePolicy::Fail,
            },
            param_kind,
            match_constraints: MatchResources::compile(
                spec.get("matchConstraints").unwrap_or(&Value::Null),
            ),
            match_conditions: named("matchConditions", full),
            variables: named("variables", full),
            body: B::compile(spec, full, plain),
        }
    }
}

/// `declared` without `params` (its last name) when the policy has no param kind.
fn variables(declared: &'static [&'static str], params: bool) -> &'static [&'static str] {
    match declared.split_last() {
        Some((_, rest)) if !params => rest,
        _ => declared,
    }
}

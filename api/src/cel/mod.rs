//! The project's one CEL engine (the `cel` crate with `kube-cel`'s Kubernetes libraries):
//! expressions are compiled once, when the configuration that holds them is loaded
//! ([`Program::compile`], which also rejects references to undeclared variables and
//! oversized expressions), then evaluated per use with JSON values bridged in and out
//! ([`evaluate`]). Authentication configuration uses it today; CRD validation rules and
//! admission policies are meant to use it too. Expressions given an `authorizer` variable
//! evaluate through [`CelAuthorizer::evaluate`] (the authorizer library, [`authorizer`]).
//!
//! The crate has no type checker and no cost meter, so this module bounds what it can: the
//! source length, the number of syntax nodes and their nesting at compile time, and the
//! nesting of comprehensions (a comprehension inside a comprehension inside a comprehension is
//! refused), which keeps one evaluation polynomial of low degree in the size of its inputs;
//! [`evaluate_metered`] runs an instrumented copy of the expression that charges Kubernetes'
//! unit costs as it goes and halts at its budget ([`meter`]); [`estimate`] bounds an
//! expression's cost before it runs; the authorizer library charges its checks against a
//! budget itself. Result types are checked by the caller on the value returned.
//! [`ValidationRules`] evaluates a custom resource's `x-kubernetes-validations` ([`rules`]).
//! Expressions are parsed with CEL's optional syntax, the optional macros expanded
//! (`optional`); `==` and `!=` are cel-go's heterogeneous equality (`equality`); the URL
//! library is `url`. [`check`] types an expression against declared variable types, for the
//! warnings of a policy's status. MutatingAdmissionPolicy's expressions
//! ([`Program::compile_mutation`]) construct the patch types `Object{...}` and `JSONPatch{...}`
//! as maps (`construction`).

use std::collections::BTreeSet;
use std::collections::HashMap;
use std::sync::Arc;

use cel::common::ast::EntryExpr;
use cel::common::ast::Expr;
use cel::common::ast::IdedExpr;
use kube_cel::KubeCelExt;

pub mod authorizer;
pub mod check;
#[cfg(test)]
mod check_test;
#[cfg(test)]
mod conformance;
mod construction;
#[cfg(test)]
mod construction_test;
mod equality;
pub mod estimate;
#[cfg(test)]
mod estimate_test;
mod library;
pub mod meter;
mod optional;
#[cfg(test)]
mod optional_test;
pub mod rules;
mod syntax;
mod tokens;
mod url;
#[cfg(test)]
mod url_test;

pub use authorizer::CelAuthorizer;
pub use rules::ValidationRules;

/// The longest expression source accepted, in bytes.
pub const MAX_EXPRESSION_BYTES: usize = 10 * 1024;

/// The most syntax nodes one expression may have.
const MAX_NODES: usize = 2_000;

/// The namespaces of the libraries' qualified functions (`format.dns1123Label()`,
/// `math.greatest(...)`, `optional.of(...)`): a call on one of these names is a function,
/// not a variable.
const LIBRARY_NAMESPACES: &[&str] = &[
    "base64",
    "format",
    "ip",
    "jsonpatch",
    "lists",
    "math",
    "optional",
    "sets",
    "strings",
];

/// The deepest nesting of syntax nodes accepted (the interpreter recurses per level).
const MAX_NESTING: usize = 100;

/// The deepest nesting of comprehensions (`all`, `exists`, `map`, `filter`, ...) accepted.
const MAX_COMPREHENSION_DEPTH: usize = 2;

/// Why an expression does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// The expression is not valid CEL.
    #[error("compilation failed: {0}")]
    Syntax(String),
    /// The expression names a variable that is not declared where it is used.
    #[error("compilation failed: undeclared reference to '{0}'")]
    Undeclared(String),
    /// The expression is larger or more deeply nested than this engine evaluates.
    #[error("compilation failed: {0}")]
    TooComplex(String),
}

/// Why an evaluation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// The evaluation itself failed (a missing key, a type mismatch, ...).
    #[error("{0}")]
    Execution(String),
    /// The result has no JSON form (a function value, bytes, ...).
    #[error("the result cannot be converted: {0}")]
    Output(String),
    /// The evaluation cost more than its budget (authorization checks are what is charged).
    #[error("operation cancelled: actual cost limit exceeded")]
    CostLimitExceeded,
}

/// A compiled CEL expression, ready to be evaluated any number of times.
#[derive(Debug)]
pub struct Program {
    source: String,
    /// The syntax as written (what the estimator and the variable checks read).
    expression: IdedExpr,
    /// The syntax evaluated: with cel-go's equality ([`equality`]).
    evaluated: IdedExpr,
    metered: IdedExpr,
}

impl Program {
    /// Compiles `expression`, which may use the variables named in `variables` (and no
    /// other), once.
    pub fn compile(expression: &str, variables: &[&str]) -> Result<Self, CompileError> {
        Self::compile_with(expression, variables, false)
    }

    /// Compiles a MutatingAdmissionPolicy mutation's `expression`, which may also construct
    /// the patch types `Object{...}` (an apply configuration) and `JSONPatch{...}` (a patch
    /// operation): they evaluate to maps of their fields.
    pub fn compile_mutation(expression: &str, variables: &[&str]) -> Result<Self, CompileError> {
        Self::compile_with(expression, variables, true)
    }

    fn compile_with(
        expression: &str,
        variables: &[&str],
        patch_types: bool,
    ) -> Result<Self, CompileError> {
        if expression.len() > MAX_EXPRESSION_BYTES {
            return Err(CompileError::TooComplex(format!(
                "expression is longer than {MAX_EXPRESSION_BYTES} bytes"
            )));
        }
        let parsed = cel::parser::Parser::new()
            .enable_optional_syntax(true)
            .parse(expression)
            .map_err(|e| CompileError::Syntax(e.to_string()))?;
        let parsed = optional::expand(&parsed)?;
        let parsed = match patch_types {
            true => construction::rewrite(&parsed),
            false => parsed,
        };
        let mut walk = Walk {
            declared: variables.iter().copied().collect(),
            scope: Vec::new(),
            nodes: 0,
            depth: 0,
            nesting: 0,
        };
        walk.visit(&parsed)?;
        let evaluated = equality::rewrite(&parsed);
        let metered = meter::instrument(&evaluated, LIBRARY_NAMESPACES);
        Ok(Self {
            source: expression.to_owned(),
            expression: parsed,
            evaluated,
            metered,
        })
    }

    /// The program with `rewrite` applied to its syntax before it is metered: the metered
    /// evaluation ([`evaluate_metered`]) runs the rewritten expression.
    pub(crate) fn rewritten(mut self, rewrite: impl FnOnce(&IdedExpr) -> IdedExpr) -> Self {
        self.evaluated = equality::rewrite(&rewrite(&self.expression));
        self.metered = meter::instrument(&self.evaluated, LIBRARY_NAMESPACES);
        self
    }

    /// The expression's source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the expression names `variable` anywhere.
    pub fn references(&self, variable: &str) -> bool {
        self.expression.references().has_variable(variable)
    }

    /// The expression's syntax tree.
    pub fn expression(&self) -> &IdedExpr {
        &self.expression
    }

    /// Whether the expression reads (or tests with `has`) `variable.field` anywhere.
    pub fn reads(&self, variable: &str, field: &str) -> bool {
        selects(&self.expression, variable, field)
    }
}

/// Whether `node` or anything under it is the selection `variable.field`.
fn selects(node: &IdedExpr, variable: &str, field: &str) -> bool {
    let entry = |e: &EntryExpr| match e {
        EntryExpr::StructField(f) => selects(&f.value, variable, field),
        EntryExpr::MapEntry(m) => {
            selects(&m.key, variable, field) || selects(&m.value, variable, field)
        }
    };
    match &node.expr {
        Expr::Unspecified | Expr::Literal(_) | Expr::Ident(_) => false,
        Expr::Select(select) => {
            (select.field == field
                && matches!(&select.operand.expr, Expr::Ident(name) if name == variable))
                || selects(&select.operand, variable, field)
        }
        Expr::Call(call) => {
            call.target
                .as_deref()
                .is_some_and(|t| selects(t, variable, field))
                || call.args.iter().any(|a| selects(a, variable, field))
        }
        Expr::List(list) => list.elements.iter().any(|e| selects(e, variable, field)),
        Expr::Map(map) => map.entries.iter().any(|e| entry(&e.expr)),
        Expr::Struct(object) => object.entries.iter().any(|e| entry(&e.expr)),
        Expr::Comprehension(c) => [
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ]
        .into_iter()
        .any(|e| selects(e, variable, field)),
    }
}

/// Evaluates `program` with `variables` (name and JSON value; every declared variable the
/// expression reads must be given) and returns its result as JSON.
pub fn evaluate(
    program: &Program,
    variables: &[(&str, &serde_json::Value)],
) -> Result<serde_json::Value, EvalError> {
    evaluate_with(program, variables, Vec::new())
}

/// [`evaluate`] with further variables that are CEL values already (a library's objects).
fn evaluate_with(
    program: &Program,
    variables: &[(&str, &serde_json::Value)],
    values: Vec<(&str, cel::Value)>,
) -> Result<serde_json::Value, EvalError> {
    ROOT.with(|root| {
        let mut context = root.new_inner_scope();
        for (name, value) in variables {
            context.add_variable_from_value(*name, to_cel(value));
        }
        for (name, value) in values {
            context.add_variable_from_value(name, value);
        }
        let value = cel::Value::resolve(&program.evaluated, &context)
            .map_err(|e| EvalError::Execution(e.to_string()))?;
        value.json().map_err(|e| EvalError::Output(e.to_string()))
    })
}

/// Evaluates `program` with `variables` (CEL values), charging each step's cost (see
/// [`meter`]) against `budget`: the result, or [`EvalError::CostLimitExceeded`] once the
/// budget is spent, and the cost charged.
pub fn evaluate_metered(
    program: &Program,
    variables: Vec<(&str, cel::Value)>,
    budget: u64,
) -> (Result<cel::Value, EvalError>, u64) {
    ROOT.with(|root| {
        let mut context = root.new_inner_scope();
        for (name, value) in variables {
            context.add_variable_from_value(name, value);
        }
        let (result, cost, exceeded) =
            meter::metered(budget, || cel::Value::resolve(&program.metered, &context));
        let result = match result {
            _ if exceeded => Err(EvalError::CostLimitExceeded),
            Ok(value) => Ok(value),
            Err(e) => Err(EvalError::Execution(go_error(&e))),
        };
        (result, cost)
    })
}

/// An evaluation error worded as cel-go words it (Kubernetes' messages quote these).
fn go_error(e: &cel::ExecutionError) -> String {
    use cel::ExecutionError as E;
    match e {
        E::NoSuchOverload
        | E::UnsupportedBinaryOperator(..)
        | E::UnsupportedUnaryOperator(..)
        | E::UnexpectedType { .. }
        | E::UnsupportedTargetType { .. }
        | E::NotSupportedAsMethod { .. }
        | E::ValuesNotComparable(..)
        | E::UnsupportedMapIndex(_)
        | E::UnsupportedListIndex(_)
        | E::UnsupportedIndex(..)
        | E::InvalidArgumentCount { .. } => "no such overload".to_owned(),
        E::NoSuchKey(key) => format!("no such key: {key}"),
        E::IndexOutOfBounds(cel::Value::Int(i)) => format!("index out of bounds: {i}"),
        E::DivisionByZero(_) => "division by zero".to_owned(),
        E::RemainderByZero(_) => "modulus by zero".to_owned(),
        E::Overflow(..) => "integer overflow".to_owned(),
        E::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// `value` as a CEL value: integral numbers that fit are `int`, other numbers `double`, as
/// Kubernetes reads JSON into CEL.
pub(crate) fn to_cel(value: &serde_json::Value) -> cel::Value {
    use serde_json::Value as Json;
    match value {
        Json::Null => cel::Value::Null,
        Json::Bool(b) => cel::Value::Bool(*b),
        Json::Number(n) => n.as_i64().map_or_else(
            || cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            cel::Value::Int,
        ),
        Json::String(s) => cel::Value::String(Arc::new(s.clone())),
        Json::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Json::Object(fields) => {
            let map: HashMap<String, cel::Value> =
                fields.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            cel::Value::from(map)
        }
    }
}

thread_local! {
    /// The standard functions and Kubernetes' libraries, registered once per thread.
    static ROOT: cel::Context<'static> = {
        let mut root = cel::Context::default().with_all();
        authorizer::register(&mut root);
        root.add_function(meter::METER_FUNCTION, meter::meter);
        library::register(&mut root);
        url::register(&mut root);
        root.add_function(rules::EQUAL_FUNCTION, rules::equal);
        root.add_function(equality::EQUAL_FUNCTION, equality::equal);
        root.add_function(equality::NOT_EQUAL_FUNCTION, equality::not_equal);
        root.add_function(rules::CONCAT_FUNCTION, rules::concatenate);
        root.add_function(optional::OPT_SELECT_FUNCTION, optional::opt_select);
        root.add_function(optional::OPT_FIELD_FUNCTION, optional::opt_field);
        root
    };
}

/// A walk over an expression's syntax: counts nodes, tracks comprehension nesting and the
/// variables comprehensions bind, and rejects identifiers that are neither.
struct Walk<'a> {
    declared: BTreeSet<&'a str>,
    scope: Vec<String>,
    nodes: usize,
    depth: usize,
    nesting: usize,
}

impl Walk<'_> {
    fn visit(&mut self, node: &IdedExpr) -> Result<(), CompileError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(CompileError::TooComplex(format!(
                "expression has more than {MAX_NODES} syntax nodes"
            )));
        }
        if self.nesting >= MAX_NESTING {
            return Err(CompileError::TooComplex(format!(
                "expression is nested more than {MAX_NESTING} levels deep"
            )));
        }
        self.nesting += 1;
        let visited = self.visit_node(node);
        self.nesting -= 1;
        visited
    }

    fn visit_node(&mut self, node: &IdedExpr) -> Result<(), CompileError> {
        match &node.expr {
            Expr::Unspecified => Err(CompileError::Syntax("empty expression".to_owned())),
            Expr::Literal(_) => Ok(()),
            Expr::Ident(name) => self.identifier(name),
            Expr::Select(select) => self.visit(&select.operand),
            Expr::Call(call) => {
                let namespace = call.target.as_deref().is_some_and(|t| {
                    matches!(&t.expr, Expr::Ident(name) if LIBRARY_NAMESPACES.contains(&name.as_str())
                        && self.identifier(name).is_err())
                });
                if let Some(target) = call.target.as_deref().filter(|_| !namespace) {
                    self.visit(target)?;
                }
                call.args.iter().try_for_each(|a| self.visit(a))
            }
            Expr::List(list) => list.elements.iter().try_for_each(|e| self.visit(e)),
            Expr::Map(map) => map.entries.iter().try_for_each(|e| self.entry(&e.expr)),
            Expr::Struct(object) => Err(CompileError::Undeclared(object.type_name.clone())),
            Expr::Comprehension(comprehension) => {
                self.visit(&comprehension.iter_range)?;
                self.visit(&comprehension.accu_init)?;
                let binding = comprehension.iter_var == optional::BIND_ITER_VAR;
                if !binding {
                    self.depth += 1;
                }
                if self.depth > MAX_COMPREHENSION_DEPTH {
                    return Err(CompileError::TooComplex(format!(
                        "comprehensions are nested more than {MAX_COMPREHENSION_DEPTH} deep"
                    )));
                }
                let bound = self.scope.len();
                self.scope.push(comprehension.iter_var.clone());
                self.scope.extend(comprehension.iter_var2.clone());
                self.scope.push(comprehension.accu_var.clone());
                let inner = [
                    &comprehension.loop_cond,
                    &comprehension.loop_step,
                    &comprehension.result,
                ]
                .into_iter()
                .try_for_each(|e| self.visit(e));
                self.scope.truncate(bound);
                if !binding {
                    self.depth -= 1;
                }
                inner
            }
        }
    }

    fn entry(&mut self, entry: &EntryExpr) -> Result<(), CompileError> {
        match entry {
            EntryExpr::StructField(field) => Err(CompileError::Syntax(format!(
                "unexpected field '{}'",
                field.field
            ))),
            EntryExpr::MapEntry(entry) => {
                self.visit(&entry.key)?;
                self.visit(&entry.value)
            }
        }
    }

    fn identifier(&self, name: &str) -> Result<(), CompileError> {
        let bound = name.starts_with('@')
            || self.declared.contains(name)
            || library::TYPE_NAMES.contains(&name)
            || self.scope.iter().any(|s| s == name);
        if bound {
            Ok(())
        } else {
            Err(CompileError::Undeclared(name.to_owned()))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(expression: &str, claims: serde_json::Value) -> Result<serde_json::Value, EvalError> {
        let program = Program::compile(expression, &["claims"]).expect("compiles");
        evaluate(&program, &[("claims", &claims)])
    }

    #[test]
    fn expressions_read_their_variables_and_return_json() {
        let claims = json!({"sub": "alice", "groups": ["a", "b"], "n": 3});
        assert_eq!(
            run("claims.sub + '@x'", claims.clone()),
            Ok(json!("alice@x"))
        );
        assert_eq!(
            run("claims.groups.map(g, 'oidc:' + g)", claims.clone()),
            Ok(json!(["oidc:a", "oidc:b"]))
        );
        assert_eq!(run("has(claims.email)", claims.clone()), Ok(json!(false)));
        assert_eq!(run("claims.n > 2", claims.clone()), Ok(json!(true)));
        assert_eq!(
            run(
                "claims.groups.all(g, g.exists(c, c == 'a'))",
                json!({"groups": []})
            ),
            Ok(json!(true))
        );
        assert!(matches!(
            run("claims.missing", claims),
            Err(EvalError::Execution(_))
        ));
    }

    #[test]
    fn reads_finds_selections_of_a_variable() {
        let program = Program::compile(
            "has(claims.email) && claims.l.exists(x, x == claims.sub)",
            &["claims"],
        )
        .expect("compiles");
        assert!(program.reads("claims", "email"));
        assert!(program.reads("claims", "sub"));
        assert!(!program.reads("claims", "email_verified"));
    }

    #[test]
    fn kubernetes_libraries_are_available() {
        let claims = json!({"sub": "Alice"});
        assert_eq!(run("claims.sub.lowerAscii()", claims), Ok(json!("alice")));
    }

    #[test]
    fn qualified_library_functions_compile_and_run() {
        let program = Program::compile(
            "format.dns1123Label().validate(claims.name).hasValue()",
            &["claims"],
        )
        .expect("a library namespace is not a variable");
        let invalid = json!({"name": "Not_A_Label"});
        assert_eq!(evaluate(&program, &[("claims", &invalid)]), Ok(json!(true)));
        let valid = json!({"name": "web-1"});
        assert_eq!(evaluate(&program, &[("claims", &valid)]), Ok(json!(false)));
    }

    #[test]
    fn compilation_rejects_bad_syntax_undeclared_names_and_oversized_expressions() {
        assert!(matches!(
            Program::compile("claims.", &["claims"]),
            Err(CompileError::Syntax(_))
        ));
        assert_eq!(
            Program::compile("user.name", &["claims"]).map(|_| ()),
            Err(CompileError::Undeclared("user".to_owned()))
        );
        assert!(Program::compile("claims.l.map(x, x + 1)", &["claims"]).is_ok());
        assert_eq!(
            Program::compile("claims.l.map(x, y)", &["claims"]).map(|_| ()),
            Err(CompileError::Undeclared("y".to_owned()))
        );
        assert_eq!(
            Program::compile("math.greatest(1, 2)", &["claims"]).map(|_| ()),
            Ok(())
        );
        assert_eq!(
            Program::compile("bogus.fn(1)", &["claims"]).map(|_| ()),
            Err(CompileError::Undeclared("bogus".to_owned()))
        );
        let nested = "claims.l.all(a, claims.l.all(b, claims.l.all(c, a == b)))";
        assert!(matches!(
            Program::compile(nested, &["claims"]),
            Err(CompileError::TooComplex(_))
        ));
        let long = format!("'{}'", "x".repeat(MAX_EXPRESSION_BYTES));
        assert!(matches!(
            Program::compile(&long, &["claims"]),
            Err(CompileError::TooComplex(_))
        ));
    }
}

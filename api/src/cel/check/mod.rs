//! A type checker for compiled expressions (what cel-go's checker reports, for the types
//! OpenAPI schemas give): each variable is declared with a [`Type`], the types flow through
//! field selections, indexing, literals, comprehensions and the operators, and what cannot
//! work for any value of the declared types is an [`Issue`] worded as cel-go words it: a
//! field an object's schema does not have (`undefined field 'replicaz'`), a field selected on
//! a scalar or a list, an operator applied to types it has no overload for (`found no matching
//! overload for '_>_' applied to '(int, string)'`), a string method or `size` called on a
//! value that has none, a comprehension over a scalar. Whatever is not known to be wrong passes:
//! a value typed `dyn` (no schema, `x-kubernetes-int-or-string`, an unknown function's
//! result) accepts every use, so a policy is never warned about what might work. `types`
//! holds the types and their schema rules, `overloads` the operators' and functions' rules.

mod overloads;
mod types;

use cel::common::ast::Expr;
use cel::common::ast::IdedExpr;
use cel::common::ast::LiteralValue;
use cel::common::ast::operators;

use self::overloads::binary;
use self::overloads::common;
use self::overloads::misapplied;
use self::overloads::operator;
pub use self::types::Components;
pub use self::types::Type;
use super::Program;

/// What cannot work in an expression, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// cel-go's message (`undefined field 'replicaz'`).
    pub message: String,
    /// The byte offset of the token the issue is at, when the source shows it unambiguously.
    pub offset: Option<usize>,
}

/// The type of what `program` produces with its variables typed as `variables` declares,
/// and its issues, each formatted as cel-go formats a checker error (`ERROR: <input>:1:12:
/// undefined field 'replicaz'`, followed by the source line and a caret under the token when
/// its place is known).
pub fn check<'a>(program: &Program, variables: &[(&str, Type<'a>)]) -> (Type<'a>, Vec<String>) {
    let mut checker = Checker {
        scope: (variables.iter())
            .map(|(name, t)| ((*name).to_owned(), t.clone()))
            .collect(),
        found: Vec::new(),
    };
    let produced = checker.node(program.expression());
    let tokens = super::tokens::tokens(program.source());
    let issues = (checker.found.into_iter())
        .map(|(message, at)| {
            let offset = at.locate(&tokens);
            format_issue(program.source(), &Issue { message, offset })
        })
        .collect();
    (produced, issues)
}

/// `issue` in cel-go's error format.
fn format_issue(source: &str, issue: &Issue) -> String {
    let Some(offset) = issue.offset.filter(|o| *o <= source.len()) else {
        return format!("ERROR: <input>: {}", issue.message);
    };
    let before = &source[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = source[line_start..offset].chars().count();
    let text = source[line_start..].lines().next().unwrap_or_default();
    format!(
        "ERROR: <input>:{line}:{}: {}\n | {text}\n | {}^",
        column + 1,
        issue.message,
        ".".repeat(column)
    )
}

/// Where an issue was found: the token that names it in the source.
#[derive(Debug, Clone)]
enum At {
    /// The selection of this field (the `.` before it).
    Field(String),
    /// This operator (`_>_`).
    Operator(&'static str),
    /// A call of this function (its name).
    Function(String),
    /// No one token.
    Nowhere,
}

impl At {
    /// The offset of the one token in `tokens` this names; `None` when there is none or more.
    fn locate(&self, tokens: &[(usize, &str)]) -> Option<usize> {
        let found: Vec<usize> = match self {
            At::Field(field) => (tokens.windows(2))
                .filter(|w| w[0].1 == "." && w[1].1 == field)
                .map(|w| w[0].0)
                .collect(),
            At::Operator(op) => {
                let symbol = op.trim_matches('_');
                (tokens.iter())
                    .filter(|t| t.1 == symbol)
                    .map(|t| t.0)
                    .collect()
            }
            At::Function(name) => (tokens.iter())
                .filter(|t| t.1 == name)
                .map(|t| t.0)
                .collect(),
            At::Nowhere => Vec::new(),
        };
        match found.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }
}

/// A walk over an expression that types each node and records the issues found.
struct Checker<'a> {
    scope: Vec<(String, Type<'a>)>,
    found: Vec<(String, At)>,
}

impl<'a> Checker<'a> {
    fn lookup(&self, name: &str) -> Type<'a> {
        (self.scope.iter().rev())
            .find(|(n, _)| n == name)
            .map_or(Type::Dyn, |(_, t)| t.clone())
    }

    /// The type of what `expr` produces.
    fn node(&mut self, expr: &IdedExpr) -> Type<'a> {
        match &expr.expr {
            Expr::Unspecified | Expr::Struct(_) => Type::Dyn,
            Expr::Literal(literal) => match literal {
                LiteralValue::Boolean(_) => Type::Bool,
                LiteralValue::Bytes(_) => Type::Bytes,
                LiteralValue::Double(_) => Type::Double,
                LiteralValue::Int(_) => Type::Int,
                LiteralValue::Null => Type::Null,
                LiteralValue::String(_) => Type::String,
                LiteralValue::UInt(_) => Type::Uint,
            },
            Expr::Ident(name) => self.lookup(name),
            Expr::Select(select) => {
                let operand = self.node(&select.operand);
                let selected = match operand.select(&select.field) {
                    Ok(t) => t,
                    Err(message) => {
                        self.found.push((message, At::Field(select.field.clone())));
                        Type::Dyn
                    }
                };
                if select.test { Type::Bool } else { selected }
            }
            Expr::List(list) => {
                let elements: Vec<Type<'a>> = list.elements.iter().map(|e| self.node(e)).collect();
                Type::List(Box::new(common(elements)))
            }
            Expr::Map(map) => {
                let (mut keys, mut values) = (Vec::new(), Vec::new());
                for entry in &map.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(e) = &entry.expr {
                        keys.push(self.node(&e.key));
                        values.push(self.node(&e.value));
                    }
                }
                Type::Map(Box::new(common(keys)), Box::new(common(values)))
            }
            Expr::Comprehension(c) => {
                let range = self.node(&c.iter_range);
                if !matches!(
                    range,
                    Type::Dyn | Type::List(_) | Type::Map(..) | Type::Schema(..) | Type::Fields(_)
                ) {
                    self.found.push((
                        format!(
                            "expression of type '{range}' cannot be range of a comprehension (must be list, map, or dynamic)"
                        ),
                        At::Nowhere,
                    ));
                }
                let (first, second) = range.elements();
                let init = self.node(&c.accu_init);
                let bound = self.scope.len();
                match &c.iter_var2 {
                    Some(value_var) => {
                        self.scope.push((c.iter_var.clone(), first));
                        self.scope.push((value_var.clone(), second));
                    }
                    None if matches!(range, Type::List(_)) => {
                        self.scope.push((c.iter_var.clone(), second));
                    }
                    None => self.scope.push((c.iter_var.clone(), first)),
                }
                self.scope.push((c.accu_var.clone(), init));
                self.node(&c.loop_cond);
                let step = self.node(&c.loop_step);
                if let Some(accumulator) = self.scope.last_mut() {
                    accumulator.1 = step;
                }
                let result = self.node(&c.result);
                self.scope.truncate(bound);
                result
            }
            Expr::Call(call) => {
                let mut parts = Vec::new();
                if let Some(target) = call.target.as_deref() {
                    parts.push(self.node(target));
                }
                for arg in &call.args {
                    parts.push(self.node(arg));
                }
                self.call(&call.func_name, call.target.is_some(), &parts)
            }
        }
    }

    /// The type of a call of `name` on `parts` (the target first, if `method`), recording an
    /// operator applied to types it has no overload for.
    fn call(&mut self, name: &str, method: bool, parts: &[Type<'a>]) -> Type<'a> {
        if let Some(op) = operator(name)
            && let [left, right] = parts
        {
            return match binary(op, left, right) {
                Some(result) => result,
                None => {
                    self.found.push((
                        format!(
                            "found no matching overload for '{op}' applied to '({left}, {right})'"
                        ),
                        At::Operator(op),
                    ));
                    Type::Dyn
                }
            };
        }
        if let Some(signature) = misapplied(name, method, parts) {
            self.found.push((
                format!("found no matching overload for '{name}' applied to '{signature}'"),
                At::Function(name.to_owned()),
            ));
            return Type::Dyn;
        }
        match (name, parts) {
            (operators::LOGICAL_NOT | operators::NOT_STRICTLY_FALSE, _) => Type::Bool,
            (operators::IN | operators::HAS, _) => Type::Bool,
            (operators::NEGATE, [operand]) if operand.is_number() => operand.clone(),
            (operators::CONDITIONAL, [_, yes, no]) => common(vec![yes.clone(), no.clone()]),
            (operators::INDEX, [container, _]) => match container {
                Type::List(items) => (**items).clone(),
                Type::Map(_, values) => (**values).clone(),
                _ => Type::Dyn,
            },
            ("size", _) => Type::Int,
            ("int", [_]) => Type::Int,
            ("uint", [_]) => Type::Uint,
            ("double", [_]) => Type::Double,
            ("string", [_]) => Type::String,
            ("bool", [_]) => Type::Bool,
            ("bytes", [_]) => Type::Bytes,
            ("timestamp", [_]) => Type::Timestamp,
            ("duration", [_]) => Type::Duration,
            ("startsWith" | "endsWith" | "contains" | "matches", _) if method => Type::Bool,
            ("lowerAscii" | "upperAscii" | "trim", [Type::String]) if method => Type::String,
            _ => Type::Dyn,
        }
    }
}

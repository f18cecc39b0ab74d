//! A type checker for compiled expressions (what cel-go's checker reports, for the types
//! OpenAPI schemas give): each variable is declared with a [`Type`], the types flow through
//! field selections, indexing, literals, comprehensions and the operators, and what cannot
//! work for any value of the declared types is an [`Issue`] worded as cel-go words it: a
//! field an object's schema does not have (`undefined field 'replicaz'`), a field selected on
//! a scalar or a list, an operator applied to types it has no overload for (`found no matching
//! overload for '_>_' applied to '(int, string)'`), a string method or `size` called on a
//! value that has none, a comprehension over a scalar. Whatever is not known to be wrong passes:
//! a value typed `dyn` (no schema, `x-kubernetes-int-or-string`, an unknown function's
//! result) accepts every use, so a policy is never warned about what might work.

use std::fmt;
use std::rc::Rc;

use cel::common::ast::Expr;
use cel::common::ast::IdedExpr;
use cel::common::ast::LiteralValue;
use cel::common::ast::operators;
use serde_json::Map;
use serde_json::Value;

use super::Program;
use super::rules::escape;

/// The most `$ref`/`allOf` indirections followed to reach one schema.
const MAX_REFERENCES: usize = 8;

/// The most arrays typed within one another from one schema (a deeper one is `dyn`; a
/// self-referring schema ends here too).
const MAX_LIST_NESTING: usize = 16;

/// The OpenAPI schemas `$ref`s point into (`components.schemas`, keyed by name).
pub type Components = Map<String, Value>;

/// The type of a value, as far as the checker knows it.
#[derive(Debug, Clone)]
pub enum Type<'a> {
    /// Any value: every use is accepted.
    Dyn,
    /// `null`.
    Null,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `google.protobuf.Duration`.
    Duration,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// A list of one element type.
    List(Box<Type<'a>>),
    /// A map of one key and one value type.
    Map(Box<Type<'a>>, Box<Type<'a>>),
    /// An object an OpenAPI schema with `properties` describes.
    Schema(&'a Components, &'a Value),
    /// An object of these named fields (the admission request, the policy's variables).
    Fields(Rc<[(String, Type<'a>)]>),
}

impl<'a> Type<'a> {
    /// The type of the values `schema` describes, its `$ref`s resolved in `components`
    /// (Kubernetes' schema-to-CEL typing: `date-time` strings are timestamps, `byte` strings
    /// bytes, `duration` strings durations, int-or-string and unknown-preserving objects
    /// without properties `dyn`).
    pub fn of_schema(components: &'a Components, schema: &'a Value) -> Self {
        Self::of_schema_within(components, schema, MAX_LIST_NESTING)
    }

    /// [`Type::of_schema`] with at most `lists` more arrays typed within this one.
    fn of_schema_within(components: &'a Components, schema: &'a Value, lists: usize) -> Self {
        let schema = resolve(components, schema);
        let flag = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
        if flag("x-kubernetes-int-or-string") {
            return Type::Dyn;
        }
        let kind = schema.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "array" if lists == 0 => Type::Dyn,
            "array" => Type::List(Box::new(
                (schema.get("items").filter(|s| s.is_object())).map_or(Type::Dyn, |s| {
                    Type::of_schema_within(components, s, lists - 1)
                }),
            )),
            "string" => match schema.get("format").and_then(Value::as_str) {
                Some("byte") => Type::Bytes,
                Some("date-time") => Type::Timestamp,
                Some("duration") => Type::Duration,
                _ => Type::String,
            },
            "integer" => Type::Int,
            "number" => Type::Double,
            "boolean" => Type::Bool,
            "object" | "" if schema.get("properties").is_some_and(Value::is_object) => {
                Type::Schema(components, schema)
            }
            "object" => match schema.get("additionalProperties").filter(|s| s.is_object()) {
                Some(values) => Type::Map(
                    Box::new(Type::String),
                    Box::new(Type::of_schema(components, values)),
                ),
                None => Type::Dyn,
            },
            _ => Type::Dyn,
        }
    }

    /// An object of `fields`.
    pub fn fields(fields: Vec<(String, Type<'a>)>) -> Self {
        Type::Fields(fields.into())
    }

    /// A list of strings.
    pub fn strings() -> Self {
        Type::List(Box::new(Type::String))
    }

    fn is_dyn(&self) -> bool {
        matches!(self, Type::Dyn)
    }

    fn is_number(&self) -> bool {
        matches!(self, Type::Int | Type::Uint | Type::Double)
    }

    /// Whether values of the type are maps or objects (which compare with each other).
    fn is_object(&self) -> bool {
        matches!(self, Type::Map(..) | Type::Schema(..) | Type::Fields(_))
    }

    /// Whether the two types are the same kind of value (element types aside).
    fn same_kind(&self, other: &Type<'_>) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            || matches!(
                (self, other),
                (
                    Type::Schema(..) | Type::Fields(_),
                    Type::Schema(..) | Type::Fields(_)
                )
            )
    }

    /// The type of field `field` (as written in CEL) of this type's values, or why there is
    /// none.
    fn select(&self, field: &str) -> Result<Type<'a>, String> {
        match self {
            Type::Dyn => Ok(Type::Dyn),
            Type::Map(_, values) => Ok((**values).clone()),
            Type::Fields(fields) => (fields.iter())
                .find(|(name, _)| name == field)
                .map(|(_, t)| t.clone())
                .ok_or_else(|| format!("undefined field '{field}'")),
            Type::Schema(components, schema) => schema_field(components, schema, field)
                .ok_or_else(|| format!("undefined field '{field}'")),
            _ => Err(format!("type '{self}' does not support field selection")),
        }
    }

    /// The type of the elements a comprehension over this type's values binds: a list's
    /// elements, a map's keys (and, for a second variable, its values).
    fn elements(&self) -> (Type<'a>, Type<'a>) {
        match self {
            Type::List(items) => (Type::Int, (**items).clone()),
            Type::Map(keys, values) => ((**keys).clone(), (**values).clone()),
            Type::Schema(..) | Type::Fields(_) => (Type::String, Type::Dyn),
            _ => (Type::Dyn, Type::Dyn),
        }
    }
}

impl fmt::Display for Type<'_> {
    /// The type's name as cel-go prints it in its errors.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dyn => f.write_str("dyn"),
            Type::Null => f.write_str("null_type"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bytes => f.write_str("bytes"),
            Type::Duration => f.write_str("google.protobuf.Duration"),
            Type::Timestamp => f.write_str("google.protobuf.Timestamp"),
            Type::List(items) => write!(f, "list({items})"),
            Type::Map(keys, values) => write!(f, "map({keys}, {values})"),
            Type::Schema(..) | Type::Fields(_) => f.write_str("object"),
        }
    }
}

/// `schema` with its `$ref` (or a lone `allOf` wrapping one) followed into `components`.
fn resolve<'a>(components: &'a Components, mut schema: &'a Value) -> &'a Value {
    for _ in 0..MAX_REFERENCES {
        let wrapped = match schema.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => &all[0],
            _ => schema,
        };
        let target = (wrapped.get("$ref").and_then(Value::as_str))
            .and_then(|r| r.rsplit('/').next())
            .and_then(|name| components.get(name));
        match target {
            Some(target) => schema = target,
            None => return wrapped,
        }
    }
    schema
}

/// The type of field `field` of an object `schema` describes; `None`: it has no such field.
fn schema_field<'a>(
    components: &'a Components,
    schema: &'a Value,
    field: &str,
) -> Option<Type<'a>> {
    let flag = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
    let property = (schema.get("properties").and_then(Value::as_object))
        .into_iter()
        .flatten()
        .find(|(name, _)| escape(name).as_deref() == Some(field));
    if let Some((_, property)) = property {
        return Some(Type::of_schema(components, property));
    }
    if flag("x-kubernetes-embedded-resource") && matches!(field, "apiVersion" | "kind") {
        return Some(Type::String);
    }
    if flag("x-kubernetes-embedded-resource") && field == "metadata" {
        return Some(Type::Dyn);
    }
    match schema.get("additionalProperties") {
        Some(values) if values.is_object() => Some(Type::of_schema(components, values)),
        Some(Value::Bool(true)) => Some(Type::Dyn),
        _ if flag("x-kubernetes-preserve-unknown-fields") => Some(Type::Dyn),
        _ => None,
    }
}

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

/// The methods of strings only (the standard library's and Kubernetes' string library's).
const STRING_METHODS: &[&str] = &[
    "charAt",
    "contains",
    "endsWith",
    "lowerAscii",
    "matches",
    "replace",
    "split",
    "startsWith",
    "substring",
    "trim",
    "upperAscii",
];

/// The signature (`int.(string)`, `(bool)`) of a call of `name` on `parts` that no overload
/// takes: a string method on a known type other than string, `size` of a scalar.
fn misapplied(name: &str, method: bool, parts: &[Type<'_>]) -> Option<String> {
    let (target, args) = parts.split_first()?;
    let listed = |types: &[Type<'_>]| {
        let names: Vec<String> = types.iter().map(ToString::to_string).collect();
        names.join(", ")
    };
    let signature = match method {
        true => format!("{target}.({})", listed(args)),
        false => format!("({})", listed(parts)),
    };
    let string_method = method && STRING_METHODS.contains(&name);
    if string_method && !matches!(target, Type::Dyn | Type::String) {
        return Some(signature);
    }
    let sizeless = matches!(
        target,
        Type::Null
            | Type::Bool
            | Type::Int
            | Type::Uint
            | Type::Double
            | Type::Duration
            | Type::Timestamp
    );
    (name == "size" && (method || args.is_empty()) && sizeless).then_some(signature)
}

/// The binary operators whose overloads the checker knows.
fn operator(name: &str) -> Option<&'static str> {
    [
        operators::ADD,
        operators::SUBSTRACT,
        operators::MULTIPLY,
        operators::DIVIDE,
        operators::MODULO,
        operators::LESS,
        operators::LESS_EQUALS,
        operators::GREATER,
        operators::GREATER_EQUALS,
        operators::EQUALS,
        operators::NOT_EQUALS,
        operators::LOGICAL_AND,
        operators::LOGICAL_OR,
    ]
    .into_iter()
    .find(|op| *op == name)
}

/// The result of `op` on `left` and `right`; `None`: no overload takes them. A `dyn` side
/// takes any overload (its result is `dyn` unless the operator's result type is fixed).
fn binary<'a>(op: &str, left: &Type<'a>, right: &Type<'a>) -> Option<Type<'a>> {
    use Type::*;
    let unknown = left.is_dyn() || right.is_dyn();
    match op {
        operators::LOGICAL_AND | operators::LOGICAL_OR => {
            let boolish = |t: &Type<'_>| matches!(t, Bool | Dyn);
            (boolish(left) && boolish(right)).then_some(Bool)
        }
        operators::EQUALS | operators::NOT_EQUALS => {
            let comparable = unknown
                || matches!(left, Null)
                || matches!(right, Null)
                || (left.is_number() && right.is_number())
                || (left.is_object() && right.is_object())
                || left.same_kind(right);
            comparable.then_some(Bool)
        }
        operators::LESS
        | operators::LESS_EQUALS
        | operators::GREATER
        | operators::GREATER_EQUALS => {
            let ordered = |t: &Type<'_>| {
                matches!(t, Bool | String | Bytes | Duration | Timestamp) || t.is_number()
            };
            let fits = (unknown && ordered(if left.is_dyn() { right } else { left }))
                || (left.is_dyn() && right.is_dyn())
                || (left.is_number() && right.is_number())
                || (ordered(left) && left.same_kind(right));
            fits.then_some(Bool)
        }
        _ if unknown => {
            let candidates = [
                Int,
                Uint,
                Double,
                String,
                Bytes,
                Duration,
                Timestamp,
                List(Box::new(Dyn)),
            ];
            let fits = match (left.is_dyn(), right.is_dyn()) {
                (true, true) => true,
                (true, false) => candidates
                    .iter()
                    .any(|c| arithmetic(op, c, right).is_some()),
                (false, _) => candidates.iter().any(|c| arithmetic(op, left, c).is_some()),
            };
            fits.then_some(Dyn)
        }
        _ => arithmetic(op, left, right),
    }
}

/// The result of the arithmetic operator `op` on two known types.
fn arithmetic<'a>(op: &str, left: &Type<'a>, right: &Type<'a>) -> Option<Type<'a>> {
    use Type::*;
    let same_number = left.is_number() && left.same_kind(right);
    match (op, left, right) {
        (operators::ADD, String, String) | (operators::ADD, Bytes, Bytes) => Some(left.clone()),
        (operators::ADD, List(a), List(b)) => {
            Some(List(Box::new(common(vec![(**a).clone(), (**b).clone()]))))
        }
        (operators::ADD, Timestamp, Duration) | (operators::ADD, Duration, Timestamp) => {
            Some(Timestamp)
        }
        (operators::ADD | operators::SUBSTRACT, Duration, Duration) => Some(Duration),
        (operators::SUBSTRACT, Timestamp, Timestamp) => Some(Duration),
        (operators::SUBSTRACT, Timestamp, Duration) => Some(Timestamp),
        (operators::MODULO, Double, Double) => None,
        (
            operators::ADD
            | operators::SUBSTRACT
            | operators::MULTIPLY
            | operators::DIVIDE
            | operators::MODULO,
            _,
            _,
        ) if same_number => Some(left.clone()),
        _ => None,
    }
}

/// The one type all of `types` have, or `dyn` when they differ (an empty list's elements are
/// `dyn`).
fn common(types: Vec<Type<'_>>) -> Type<'_> {
    let mut types = types.into_iter();
    let Some(first) = types.next() else {
        return Type::Dyn;
    };
    let scalar = !matches!(
        first,
        Type::List(_) | Type::Map(..) | Type::Schema(..) | Type::Fields(_)
    );
    if scalar && types.all(|t| t.same_kind(&first)) {
        first
    } else {
        Type::Dyn
    }
}

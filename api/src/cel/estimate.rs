//! The worst-case cost of an expression before it runs (Kubernetes' estimated cost, cel-go's
//! `EstimateCost` with the apiextensions size estimator): the same unit costs the runtime meter
//! charges ([`super::meter`]), with every size the largest the schema allows: a string's
//! `maxLength`, a list's `maxItems`, a map's `maxProperties`, and where the schema sets no
//! bound, what fits in one request of [`MAX_REQUEST_BYTES`] given the smallest serialized
//! element. A comprehension costs its range, plus the range's largest size times its step.

use cel::common::ast::EntryExpr;
use cel::common::ast::Expr;
use cel::common::ast::IdedExpr;
use cel::common::ast::LiteralValue;
use cel::common::ast::operators;
use serde_json::Value;

use super::meter::CONSTANT_COST_FUNCTIONS;
use super::meter::LIST_CREATE_COST;
use super::meter::MAP_CREATE_COST;
use super::meter::REGEX_FUNCTIONS;
use super::meter::TRAVERSAL_FUNCTIONS;
use super::meter::call_cost;
use super::meter::regex_cost;
use super::meter::traversal_cost;
use super::rules::escape;

/// The largest request body, which bounds every unbounded size (Kubernetes' 3 MiB).
pub const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;

/// What is known of the values an expression produces, for their size.
#[derive(Debug, Clone, Copy)]
pub enum Shape<'a> {
    /// Values of this schema node (`true`: the root of a resource).
    Schema(&'a Value, bool),
    /// Values at most this large.
    Sized(u64),
    /// Nothing is known: as large as a request.
    Unknown,
}

impl Shape<'_> {
    /// The largest size (string length, list or map entries) of these values.
    pub fn max_size(&self) -> u64 {
        match self {
            Shape::Schema(schema, _) => max_size(schema),
            Shape::Sized(n) => *n,
            Shape::Unknown => MAX_REQUEST_BYTES,
        }
    }

    /// The shape of the elements (list items, map keys) a comprehension over these values
    /// binds, and of the map values a two-variable comprehension binds.
    fn elements(&self) -> (Self, Self) {
        match self {
            Shape::Schema(schema, _) => {
                let child = |key| {
                    schema
                        .get(key)
                        .filter(|s| s.is_object())
                        .map_or(Shape::Unknown, |s| Shape::Schema(s, embedded(s)))
                };
                if ty(schema) == "array" {
                    (child("items"), Shape::Unknown)
                } else {
                    (
                        Shape::Sized(MAX_REQUEST_BYTES - 2),
                        child("additionalProperties"),
                    )
                }
            }
            _ => (Shape::Unknown, Shape::Unknown),
        }
    }

    /// The shape of an element read by index (`list[i]`, `map[key]`).
    fn indexed(&self) -> Self {
        match self {
            Shape::Schema(schema, _) if ty(schema) == "array" => self.elements().0,
            _ => self.elements().1,
        }
    }

    /// The shape of field `field` (as written in CEL, escaped) of these values.
    fn field(&self, field: &str) -> Self {
        let Shape::Schema(schema, resource_root) = self else {
            return Shape::Unknown;
        };
        let property = schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .find(|(name, _)| escape(name).as_deref() == Some(field));
        match property {
            Some((_, s)) => Shape::Schema(s, embedded(s)),
            None if *resource_root && matches!(field, "apiVersion" | "kind" | "metadata") => {
                Shape::Sized(253)
            }
            None => schema
                .get("additionalProperties")
                .filter(|s| s.is_object())
                .map_or(Shape::Unknown, |s| Shape::Schema(s, embedded(s))),
        }
    }
}

fn ty(schema: &Value) -> &str {
    schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn embedded(schema: &Value) -> bool {
    schema
        .get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        == Some(true)
}

fn int_or_string(schema: &Value) -> bool {
    schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
}

fn bound(schema: &Value, key: &str) -> Option<u64> {
    schema
        .get(key)
        .and_then(Value::as_i64)
        .map(|n| u64::try_from(n).unwrap_or(0))
}

/// The smallest a serialized value of `schema` can be, in bytes (Kubernetes' min sizes).
pub fn min_serialized_size(schema: &Value) -> u64 {
    if int_or_string(schema) {
        return 1;
    }
    match ty(schema) {
        "string" => match schema.get("format").and_then(Value::as_str) {
            Some("duration") => 4,
            Some("date") => 12,
            Some("date-time") => 22,
            _ => 2,
        },
        "boolean" => 4,
        "integer" | "number" => 1,
        _ => 2,
    }
}

/// The largest size of a value of `schema`: its declared bound, or what one request holds.
fn max_size(schema: &Value) -> u64 {
    if int_or_string(schema) {
        return MAX_REQUEST_BYTES - 2;
    }
    let child_min = |key| {
        schema
            .get(key)
            .filter(|s| s.is_object())
            .map_or(1, min_serialized_size)
    };
    match ty(schema) {
        "string" => bound(schema, "maxLength").unwrap_or_else(|| {
            match schema.get("format").and_then(Value::as_str) {
                Some("duration" | "date-time") => 32,
                Some("date") => 12,
                _ => MAX_REQUEST_BYTES - 2,
            }
        }),
        "array" => bound(schema, "maxItems")
            .unwrap_or_else(|| (MAX_REQUEST_BYTES - 2) / (child_min("items") + 1)),
        "object"
            if schema
                .get("additionalProperties")
                .is_some_and(Value::is_object) =>
        {
            bound(schema, "maxProperties").unwrap_or_else(|| {
                (MAX_REQUEST_BYTES - 2) / (child_min("additionalProperties") + 6)
            })
        }
        "object" => schema
            .get("properties")
            .and_then(Value::as_object)
            .map_or(0, |p| u64::try_from(p.len()).unwrap_or(u64::MAX)),
        _ => 0,
    }
}

/// The largest number of times a value of `schema` can occur in one request (Kubernetes'
/// `maxCardinality`, for rules under lists and maps without bounds).
pub fn unbounded_cardinality(schema: &Value) -> u64 {
    MAX_REQUEST_BYTES / (min_serialized_size(schema) + 1)
}

/// The worst-case cost of `expr` with `variables` of the given shapes.
pub fn estimate(expr: &IdedExpr, variables: &[(&str, Shape<'_>)]) -> u64 {
    let mut estimator = Estimator {
        scope: variables
            .iter()
            .map(|(n, s)| ((*n).to_owned(), *s))
            .collect(),
    };
    estimator.node(expr).0
}

/// A walk over an expression that tracks the shapes of the variables in scope.
struct Estimator<'a> {
    scope: Vec<(String, Shape<'a>)>,
}

impl<'a> Estimator<'a> {
    fn lookup(&self, name: &str) -> Shape<'a> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map_or(Shape::Unknown, |(_, s)| *s)
    }

    /// The cost of `expr` and the shape of what it produces.
    fn node(&mut self, expr: &IdedExpr) -> (u64, Shape<'a>) {
        match &expr.expr {
            Expr::Unspecified => (0, Shape::Sized(0)),
            Expr::Literal(LiteralValue::String(s)) => (0, Shape::Sized(len(s.inner().len()))),
            Expr::Literal(LiteralValue::Bytes(b)) => (0, Shape::Sized(len(b.inner().len()))),
            Expr::Literal(_) => (0, Shape::Sized(0)),
            Expr::Ident(name) if name.starts_with('@') => (0, self.lookup(name)),
            Expr::Ident(name) => (1, self.lookup(name)),
            Expr::Select(select) => {
                let (cost, shape) = self.node(&select.operand);
                let shape = if select.test {
                    Shape::Sized(0)
                } else {
                    shape.field(&select.field)
                };
                (cost.saturating_add(1), shape)
            }
            Expr::List(list) => {
                let cost = list
                    .elements
                    .iter()
                    .fold(LIST_CREATE_COST, |c, e| c.saturating_add(self.node(e).0));
                (cost, Shape::Sized(len(list.elements.len())))
            }
            Expr::Map(map) => {
                let mut cost = MAP_CREATE_COST;
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(e) = &entry.expr {
                        cost = cost
                            .saturating_add(self.node(&e.key).0)
                            .saturating_add(self.node(&e.value).0);
                    }
                }
                (cost, Shape::Sized(len(map.entries.len())))
            }
            Expr::Struct(_) => (LIST_CREATE_COST, Shape::Unknown),
            Expr::Comprehension(c) => {
                let (range_cost, range) = self.node(&c.iter_range);
                let n = range.max_size();
                let (element, value) = range.elements();
                let (init_cost, _) = self.node(&c.accu_init);
                let bound = self.scope.len();
                self.scope.push((c.iter_var.clone(), element));
                if let Some(second) = &c.iter_var2 {
                    self.scope.push((second.clone(), value));
                }
                self.scope.push((c.accu_var.clone(), Shape::Sized(n)));
                let (cond, _) = self.node(&c.loop_cond);
                let (step, _) = self.node(&c.loop_step);
                let (result, shape) = self.node(&c.result);
                self.scope.truncate(bound);
                let cost = range_cost
                    .saturating_add(init_cost)
                    .saturating_add(n.saturating_mul(cond.saturating_add(step)))
                    .saturating_add(result);
                (cost, shape)
            }
            Expr::Call(call) => {
                let name = call.func_name.as_str();
                if name == operators::CONDITIONAL {
                    let costs: Vec<(u64, Shape<'a>)> =
                        call.args.iter().map(|a| self.node(a)).collect();
                    let cond = costs.first().map_or(0, |c| c.0);
                    let branch = costs.iter().skip(1).map(|c| c.0).max().unwrap_or(0);
                    let size = costs.iter().skip(1).map(|c| c.1.max_size()).max();
                    return (
                        1u64.saturating_add(cond).saturating_add(branch),
                        Shape::Sized(size.unwrap_or(0)),
                    );
                }
                if matches!(
                    name,
                    operators::LOGICAL_AND | operators::LOGICAL_OR | operators::NOT_STRICTLY_FALSE
                ) {
                    let cost = call
                        .args
                        .iter()
                        .fold(1u64, |c, a| c.saturating_add(self.node(a).0));
                    return (cost, Shape::Sized(0));
                }
                let namespaced = call.target.as_deref().is_some_and(|t| {
                    matches!(&t.expr, Expr::Ident(n) if super::LIBRARY_NAMESPACES.contains(&n.as_str()))
                });
                let mut cost = 0u64;
                let mut parts: Vec<(bool, Shape<'a>)> = Vec::new();
                for part in call
                    .target
                    .as_deref()
                    .filter(|_| !namespaced)
                    .into_iter()
                    .chain(&call.args)
                {
                    let (c, shape) = self.node(part);
                    cost = cost.saturating_add(c);
                    let accumulator = matches!(&part.expr, Expr::Ident(n) if n.starts_with('@'));
                    parts.push((accumulator, shape));
                }
                let size = |p: &(bool, Shape<'a>)| if p.0 { 0 } else { p.1.max_size() };
                let own = if CONSTANT_COST_FUNCTIONS.contains(&name) {
                    1
                } else if TRAVERSAL_FUNCTIONS.contains(&name) {
                    traversal_cost(parts.first().map_or(0, size))
                } else if REGEX_FUNCTIONS.contains(&name) {
                    match parts.as_slice() {
                        [input, pattern, ..] => regex_cost(size(input), size(pattern)),
                        _ => 1,
                    }
                } else {
                    call_cost(parts.iter().fold(0u64, |a, p| a.saturating_add(size(p))))
                };
                let shape = match (name, parts.first()) {
                    (operators::INDEX, Some((_, container))) => container.indexed(),
                    (operators::ADD, _) => Shape::Sized(
                        parts
                            .iter()
                            .fold(0u64, |a, p| a.saturating_add(p.1.max_size())),
                    ),
                    _ => Shape::Sized(parts.iter().map(|p| p.1.max_size()).max().unwrap_or(0)),
                };
                (cost.saturating_add(own), shape)
            }
        }
    }
}

fn len(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

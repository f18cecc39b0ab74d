//! The runtime cost meter: the `cel` crate has none, so each compiled expression also keeps an
//! instrumented copy of its syntax in which every call and literal list or map is wrapped in a
//! call of the metering function `@c`, which charges the node's cost against the evaluation's
//! budget before the node runs and cancels the evaluation (Kubernetes' `operation cancelled:
//! actual cost limit exceeded`) once the budget is spent; a cancelled evaluation is reported
//! as such whatever an enclosing `||` or `&&` made of the error.
//!
//! The units follow Kubernetes' (cel-go's) deterministic costs where the engine allows:
//! - an identifier or a field selection: 1 (charged by the wrapper that evaluates it, so that
//!   reading a value does not copy it once more); a literal: 0;
//! - a list literal: [`LIST_CREATE_COST`]; a map literal: [`MAP_CREATE_COST`];
//! - a call or operator: 1, plus a tenth of the size of its evaluated arguments, deep (string
//!   and bytes length, list and map entries and their elements' sizes; the comprehension
//!   accumulator does not count), so traversing or copying a value costs by its size;
//!   `&&`, `||`, `?:` cost 1 and charge only the operands they evaluate;
//! - indexing, `size`, `type`, `dyn`, the optional and URL accessors, `isURL` and
//!   `format.named`: 1;
//! - `url()`: a tenth of its argument's length (one traversal), rounded up;
//! - a regular-expression function (`matches`, `find`, `findAll`): 1 plus
//!   `ceil(0.1 × (1 + input length)) × ceil(0.25 × pattern length)`, the length of the regular
//!   expression times the length of the input;
//! - a comprehension (`all`, `exists`, `map`, `filter`, ...) costs what its steps cost, so each
//!   iteration is charged.
//!
//! The arguments of an eager call are evaluated by `@c` itself (each metered on its own), bound
//! to `@0`, `@1`, ... in an inner scope, measured and charged, and only then is the call run.
//! Every copy the engine makes of a value passed to a call is so charged by its size, which
//! bounds the work of one evaluation by its budget.

use std::cell::Cell;

use cel::ExecutionError;
use cel::FunctionContext;
use cel::common::ast::CallExpr;
use cel::common::ast::EntryExpr;
use cel::common::ast::Expr;
use cel::common::ast::IdedExpr;
use cel::common::ast::LiteralValue;
use cel::common::ast::operators;
use cel::common::types::CelInt;

/// The name of the metering function.
pub(super) const METER_FUNCTION: &str = "@c";
/// The cost of creating a list.
pub const LIST_CREATE_COST: u64 = 40;
/// The cost of creating a map.
pub const MAP_CREATE_COST: u64 = 30;
/// The error text of an evaluation that ran out of budget (cel-go's).
pub const COST_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";
/// The regular-expression functions, charged by pattern length times input length.
pub const REGEX_FUNCTIONS: &[&str] = &["matches", "find", "findAll"];
/// Calls that cost 1 whatever the size of their arguments (indexing, `size`, optionals).
pub const CONSTANT_COST_FUNCTIONS: &[&str] = &[
    operators::INDEX,
    operators::OPT_INDEX,
    operators::OPT_SELECT,
    super::optional::OPT_SELECT_FUNCTION,
    super::optional::OPT_FIELD_FUNCTION,
    "size",
    "type",
    "dyn",
    "hasValue",
    "value",
    "named",
    "isURL",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
];
/// Calls that cost a tenth of the length of their first argument (a single traversal of a
/// string), nothing more.
pub const TRAVERSAL_FUNCTIONS: &[&str] = &["url"];
/// Calls evaluated lazily by the interpreter: their arguments are not evaluated up front.
const LAZY: &[&str] = &[
    operators::LOGICAL_AND,
    operators::LOGICAL_OR,
    operators::CONDITIONAL,
    operators::NOT_STRICTLY_FALSE,
];

/// How a wrapped node is charged (the second argument of `@c`).
const KIND_FLAT: i64 = 0;
const KIND_SIZED: i64 = 1;
const KIND_REGEX: i64 = 2;
const KIND_CONSTANT: i64 = 3;
const KIND_TRAVERSAL: i64 = 4;

/// The state of the running evaluation's meter.
#[derive(Clone, Copy, Default)]
struct Meter {
    used: u64,
    limit: u64,
    exceeded: bool,
    active: bool,
}

thread_local! {
    static METER: Cell<Meter> = Cell::new(Meter::default());
}

/// Runs `f` with a fresh meter of `limit` units; returns its result, the cost charged and
/// whether the budget was exceeded.
pub(super) fn metered<T>(limit: u64, f: impl FnOnce() -> T) -> (T, u64, bool) {
    let saved = METER.with(|m| {
        m.replace(Meter {
            used: 0,
            limit,
            exceeded: false,
            active: true,
        })
    });
    let out = f();
    let meter = METER.with(|m| m.replace(saved));
    (out, meter.used, meter.exceeded)
}

/// Charges `units`; an error once the budget is spent.
fn charge(units: u64) -> Result<(), ExecutionError> {
    METER.with(|m| {
        let mut meter = m.get();
        if !meter.active {
            return Ok(());
        }
        meter.used = meter.used.saturating_add(units);
        let over = meter.used > meter.limit;
        meter.exceeded |= over;
        m.set(meter);
        if over {
            Err(ExecutionError::function_error(
                METER_FUNCTION,
                COST_EXCEEDED,
            ))
        } else {
            Ok(())
        }
    })
}

/// The size Kubernetes measures a value by: string and bytes length, list and map entries.
pub(super) fn size_of(value: &cel::Value) -> u64 {
    let n = match value {
        cel::Value::String(s) => s.len(),
        cel::Value::Bytes(b) => b.len(),
        cel::Value::List(l) => l.len(),
        cel::Value::Map(m) => m.map.len(),
        _ => 0,
    };
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The size of `value` and everything in it: string and bytes length, and for lists and maps
/// their entries plus the sizes of their elements (what copying the value costs).
fn deep_size_of(value: &cel::Value) -> u64 {
    match value {
        cel::Value::List(l) => l
            .iter()
            .fold(size_of(value), |a, v| a.saturating_add(deep_size_of(v))),
        cel::Value::Map(m) => m
            .map
            .values()
            .fold(size_of(value), |a, v| a.saturating_add(deep_size_of(v))),
        _ => size_of(value),
    }
}

/// The cost of a regular-expression call on `input` bytes with a `pattern` bytes long.
pub fn regex_cost(input: u64, pattern: u64) -> u64 {
    let traversal = input.saturating_add(1).div_ceil(10);
    let compile = pattern.div_ceil(4);
    1u64.saturating_add(traversal.saturating_mul(compile))
}

/// The cost of one traversal of a string `size` bytes long.
pub fn traversal_cost(size: u64) -> u64 {
    size.div_ceil(10)
}

/// The cost of a call whose eager arguments measure `sizes` in total.
pub fn call_cost(sizes: u64) -> u64 {
    1u64.saturating_add(sizes / 10)
}

/// The metering function: `@c(node, kind, base, args...)`.
pub(super) fn meter(ftx: &FunctionContext) -> Result<cel::Value, ExecutionError> {
    let node = ftx.args.first().ok_or_else(|| ftx.error("missing node"))?;
    let int = |i: usize| match ftx.args.get(i).map(|a| &a.expr) {
        Some(Expr::Literal(LiteralValue::Int(n))) => *n.inner(),
        _ => 0,
    };
    let (kind, base) = (int(1), int(2));
    let parts = ftx.args.get(3..).unwrap_or_default();
    if kind == KIND_FLAT {
        charge(u64::try_from(base).unwrap_or(0))?;
        return cel::Value::resolve(node, ftx.ptx);
    }
    let mut scope = ftx.ptx.new_inner_scope();
    let mut sizes = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let value = cel::Value::resolve(part, ftx.ptx)?;
        let accumulator = matches!(&part.expr, Expr::Ident(name) if name.starts_with('@'));
        let size = match kind {
            KIND_REGEX => size_of(&value),
            _ => deep_size_of(&value),
        };
        sizes.push(if accumulator { 0 } else { size });
        scope.add_variable_from_value(format!("@{i}"), value);
    }
    let own = if kind == KIND_CONSTANT {
        1
    } else if kind == KIND_TRAVERSAL {
        traversal_cost(sizes.first().copied().unwrap_or(0))
    } else if kind == KIND_REGEX {
        match sizes.as_slice() {
            [input, pattern, ..] => regex_cost(*input, *pattern),
            _ => 1,
        }
    } else {
        call_cost(sizes.iter().fold(0u64, |a, s| a.saturating_add(*s)))
    };
    charge(own.saturating_add(u64::try_from(base).unwrap_or(0)))?;
    cel::Value::resolve(node, &scope)
}

/// `expr` with its costs charged through `@c`; `namespaces` are the library namespaces
/// (`format`, `math`, ...) whose qualified calls keep their target.
pub(super) fn instrument(expr: &IdedExpr, namespaces: &[&str]) -> IdedExpr {
    let (expr, pending) = Instrument { namespaces }.node(expr);
    flat(expr, pending)
}

/// `node` charged `base` when it runs (itself when there is nothing to charge).
fn flat(node: IdedExpr, base: u64) -> IdedExpr {
    if base == 0 {
        return node;
    }
    wrap(node, KIND_FLAT, base, Vec::new())
}

/// `node` wrapped in `@c` with how it is charged.
fn wrap(node: IdedExpr, kind: i64, base: u64, parts: Vec<IdedExpr>) -> IdedExpr {
    let mut args = vec![
        node,
        int(kind),
        int(i64::try_from(base).unwrap_or(i64::MAX)),
    ];
    args.extend(parts);
    ided(Expr::Call(CallExpr {
        func_name: METER_FUNCTION.to_owned(),
        target: None,
        args,
    }))
}

/// The rewrite. Identifiers and selections are not wrapped (wrapping them would copy the
/// values they read): their unit costs are returned as pending and charged by the nearest
/// wrapper that always runs with them, the call, list or map they are part of, or the
/// comprehension's initial accumulator for its range, or a wrapper of their own where they
/// are evaluated lazily.
struct Instrument<'a> {
    namespaces: &'a [&'a str],
}

impl Instrument<'_> {
    /// The rewritten node and the cost of its unwrapped identifiers and selections.
    fn node(&self, expr: &IdedExpr) -> (IdedExpr, u64) {
        match &expr.expr {
            Expr::Unspecified | Expr::Literal(_) | Expr::Struct(_) => (expr.clone(), 0),
            Expr::Ident(name) if name.starts_with('@') => (expr.clone(), 0),
            Expr::Ident(_) => (expr.clone(), 1),
            Expr::Select(select) => {
                let mut select = select.clone();
                let (operand, pending) = self.node(&select.operand);
                select.operand = Box::new(operand);
                (ided(Expr::Select(select)), pending.saturating_add(1))
            }
            Expr::List(list) => {
                let mut list = list.clone();
                let mut pending = 0u64;
                for element in &mut list.elements {
                    let (e, p) = self.node(element);
                    *element = e;
                    pending = pending.saturating_add(p);
                }
                let base = LIST_CREATE_COST.saturating_add(pending);
                (wrap(ided(Expr::List(list)), KIND_FLAT, base, Vec::new()), 0)
            }
            Expr::Map(map) => {
                let mut map = map.clone();
                let mut pending = 0u64;
                for entry in &mut map.entries {
                    if let EntryExpr::MapEntry(e) = &mut entry.expr {
                        let (key, p) = self.node(&e.key);
                        let (value, q) = self.node(&e.value);
                        e.key = key;
                        e.value = value;
                        pending = pending.saturating_add(p).saturating_add(q);
                    }
                }
                let base = MAP_CREATE_COST.saturating_add(pending);
                (wrap(ided(Expr::Map(map)), KIND_FLAT, base, Vec::new()), 0)
            }
            Expr::Comprehension(c) => {
                let mut c = c.clone();
                let (range, range_cost) = self.node(&c.iter_range);
                let (init, init_cost) = self.node(&c.accu_init);
                c.iter_range = range;
                c.accu_init = flat(init, range_cost.saturating_add(init_cost));
                for part in [&mut c.loop_cond, &mut c.loop_step, &mut c.result] {
                    let (e, p) = self.node(part);
                    *part = flat(e, p);
                }
                (ided(Expr::Comprehension(c)), 0)
            }
            Expr::Call(call) => (self.call(call), 0),
        }
    }

    fn call(&self, call: &CallExpr) -> IdedExpr {
        if LAZY.contains(&call.func_name.as_str()) {
            let mut lazy = call.clone();
            lazy.args = call
                .args
                .iter()
                .map(|a| {
                    let (e, p) = self.node(a);
                    flat(e, p)
                })
                .collect();
            return wrap(ided(Expr::Call(lazy)), KIND_FLAT, 1, Vec::new());
        }
        let namespaced = call.target.as_deref().is_some_and(
            |t| matches!(&t.expr, Expr::Ident(n) if self.namespaces.contains(&n.as_str())),
        );
        let mut parts = Vec::new();
        let mut pending = 0u64;
        let mut bind = |e: &IdedExpr| {
            let name = format!("@{}", parts.len());
            let (part, p) = self.node(e);
            pending = pending.saturating_add(p);
            parts.push(part);
            ided(Expr::Ident(name))
        };
        let target = match call.target.as_deref() {
            Some(t) if namespaced => Some(Box::new(t.clone())),
            Some(t) => Some(Box::new(bind(t))),
            None => None,
        };
        let args = call.args.iter().map(&mut bind).collect();
        let name = call.func_name.as_str();
        let kind = if REGEX_FUNCTIONS.contains(&name) {
            KIND_REGEX
        } else if CONSTANT_COST_FUNCTIONS.contains(&name) {
            KIND_CONSTANT
        } else if TRAVERSAL_FUNCTIONS.contains(&name) {
            KIND_TRAVERSAL
        } else {
            KIND_SIZED
        };
        let synthetic = ided(Expr::Call(CallExpr {
            func_name: call.func_name.clone(),
            target,
            args,
        }));
        wrap(synthetic, kind, pending, parts)
    }
}

fn ided(expr: Expr) -> IdedExpr {
    IdedExpr { id: 0, expr }
}

fn int(n: i64) -> IdedExpr {
    ided(Expr::Literal(LiteralValue::Int(CelInt::from(n))))
}

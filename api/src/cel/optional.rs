//! CEL's optional macros, which the `cel` crate's parser does not expand: after parsing,
//! `o.optMap(x, e)` becomes `o.hasValue() ? optional.of(<e with x bound to o.value()>) :
//! optional.none()` and `o.optFlatMap(x, e)` becomes `o.hasValue() ? <e with x bound> :
//! optional.none()`, the binding being a comprehension over an empty list whose accumulator is
//! `x` (as cel-go expands them). `x.?f` becomes a call of [`OPT_SELECT_FUNCTION`], which
//! answers `optional.none()` for a field a map lacks (the crate's own errors), and a field
//! selected on such an optional chain (`x.?f.g`) a call of [`OPT_FIELD_FUNCTION`], which
//! selects within the optional as cel-go does; the other
//! optional operators (`[?k]`, `[?e]`, `{?k: v}`) are parsed and evaluated by the crate.

use cel::common::ast::CallExpr;
use cel::common::ast::ComprehensionExpr;
use cel::common::ast::Expr;
use cel::common::ast::IdedExpr;
use cel::common::ast::ListExpr;
use cel::common::ast::LiteralValue;
use cel::common::ast::operators;

use std::sync::Arc;

use cel::ExecutionError;
use cel::objects::Key;
use cel::objects::OptionalValue;

use super::CompileError;
use super::syntax::try_map_children;

/// The function `x.?f` is rewritten to.
pub(super) const OPT_SELECT_FUNCTION: &str = "@optSelect";
/// The function a field selection on an optional chain (`x.?f.g`) is rewritten to.
pub(super) const OPT_FIELD_FUNCTION: &str = "@optField";

/// The iteration variable of a binding comprehension (no expression can name it).
pub(super) const BIND_ITER_VAR: &str = "#unused";

/// `expr` with its `optMap` and `optFlatMap` calls expanded (its nesting is bounded by the
/// parser).
pub(super) fn expand(expr: &IdedExpr) -> Result<IdedExpr, CompileError> {
    let mut out = try_map_children(expr, &mut expand)?;
    match &mut out.expr {
        Expr::Select(select) => {
            let chained = matches!(&select.operand.expr, Expr::Call(c)
                if [OPT_SELECT_FUNCTION, OPT_FIELD_FUNCTION, operators::OPT_INDEX]
                    .contains(&c.func_name.as_str()));
            if chained && !select.test {
                let field = ided(Expr::Literal(LiteralValue::String(
                    select.field.clone().into(),
                )));
                return Ok(call(
                    OPT_FIELD_FUNCTION,
                    None,
                    vec![(*select.operand).clone(), field],
                ));
            }
        }
        Expr::Call(call) => {
            let flat = match call.func_name.as_str() {
                "optMap" => Some(false),
                "optFlatMap" => Some(true),
                _ => None,
            };
            if let (Some(flat), Some(target)) = (flat, call.target.as_deref()) {
                return macro_call(target, &call.args, flat, &call.func_name);
            }
            if call.func_name == operators::OPT_SELECT && call.target.is_none() {
                call.func_name = OPT_SELECT_FUNCTION.to_owned();
            }
        }
        _ => {}
    }
    Ok(out)
}

/// The expansion of `target.optMap(var, body)` (`flat`: `optFlatMap`).
fn macro_call(
    target: &IdedExpr,
    args: &[IdedExpr],
    flat: bool,
    name: &str,
) -> Result<IdedExpr, CompileError> {
    let [variable, body] = args else {
        return Err(CompileError::Syntax(format!(
            "{name}() takes a variable name and an expression"
        )));
    };
    let Expr::Ident(variable) = &variable.expr else {
        return Err(CompileError::Syntax(format!(
            "{name}() variable name must be a simple identifier"
        )));
    };
    let method = |name: &str, on: &IdedExpr| call(name, Some(on.clone()), Vec::new());
    let bound = ided(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: ided(Expr::List(ListExpr {
            elements: Vec::new(),
            optional_indices: Vec::new(),
        })),
        iter_var: BIND_ITER_VAR.to_owned(),
        iter_var2: None,
        accu_var: variable.clone(),
        accu_init: method("value", target),
        loop_cond: ided(Expr::Literal(LiteralValue::Boolean(false.into()))),
        loop_step: ided(Expr::Ident(variable.clone())),
        result: body.clone(),
    })));
    let optional = || ided(Expr::Ident("optional".to_owned()));
    let some = if flat {
        bound
    } else {
        call("of", Some(optional()), vec![bound])
    };
    Ok(call(
        operators::CONDITIONAL,
        None,
        vec![
            method("hasValue", target),
            some,
            call("none", Some(optional()), Vec::new()),
        ],
    ))
}

fn call(name: &str, target: Option<IdedExpr>, args: Vec<IdedExpr>) -> IdedExpr {
    ided(Expr::Call(CallExpr {
        func_name: name.to_owned(),
        target: target.map(Box::new),
        args,
    }))
}

fn ided(expr: Expr) -> IdedExpr {
    IdedExpr { id: 0, expr }
}

/// `operand.?field`: the field of a map (or of the map an optional holds) as an optional,
/// none where the map or the field is absent.
pub(super) fn opt_select(
    operand: cel::Value,
    field: Arc<String>,
) -> Result<cel::Value, ExecutionError> {
    select(operand, field, true)
}

/// `operand.field` on an optional chain: the field of the map an optional holds as an
/// optional (an error where the map lacks it), none for an empty optional.
pub(super) fn opt_field(
    operand: cel::Value,
    field: Arc<String>,
) -> Result<cel::Value, ExecutionError> {
    select(operand, field, false)
}

/// A field of a map or of the map an optional holds (`absent_is_none`: a missing field is
/// none rather than an error).
fn select(
    operand: cel::Value,
    field: Arc<String>,
    absent_is_none: bool,
) -> Result<cel::Value, ExecutionError> {
    let none = || cel::Value::Opaque(Arc::new(OptionalValue::none()));
    let target = match &operand {
        cel::Value::Opaque(o) => match o.downcast_ref::<OptionalValue>() {
            Some(optional) => match optional.value() {
                Some(value) => value.clone(),
                None => return Ok(none()),
            },
            None => return Err(ExecutionError::NoSuchOverload),
        },
        _ => operand,
    };
    let cel::Value::Map(map) = target else {
        return Err(ExecutionError::NoSuchOverload);
    };
    match map.map.get(&Key::String(field.clone())) {
        Some(v) => Ok(cel::Value::Opaque(Arc::new(OptionalValue::of(v.clone())))),
        None if absent_is_none => Ok(none()),
        None => Err(ExecutionError::NoSuchKey(field)),
    }
}

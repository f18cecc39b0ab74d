//! cel-go's heterogeneous equality, which the `cel` crate lacks: numbers of different types
//! are equal when their values are (`1 == 1.0`, `1u == 1`), also inside lists and maps
//! (`[1] == [1.0]`). Every `==` and `!=` of a compiled expression is rewritten once into a
//! call of [`EQUAL_FUNCTION`] or [`NOT_EQUAL_FUNCTION`]; the calls take the same operands, so
//! they are metered as the operators were.

use cel::ExecutionError;
use cel::common::ast::CallExpr;
use cel::common::ast::Expr;
use cel::common::ast::IdedExpr;
use cel::common::ast::operators;
use cel::extractors::Arguments;

use super::syntax::map_children;

/// The function `==` becomes.
pub(crate) const EQUAL_FUNCTION: &str = "@heq";
/// The function `!=` becomes.
pub(crate) const NOT_EQUAL_FUNCTION: &str = "@hne";
/// The deepest nesting of compared values followed (deeper values compare as the crate does).
const MAX_DEPTH: usize = 64;

/// `expr` with its `==` and `!=` calls rewritten (its nesting is bounded by compilation).
pub(crate) fn rewrite(expr: &IdedExpr) -> IdedExpr {
    let mut out = map_children(expr, &mut rewrite);
    if let Expr::Call(call) = &mut out.expr {
        let function = match call.func_name.as_str() {
            operators::EQUALS => Some(EQUAL_FUNCTION),
            operators::NOT_EQUALS => Some(NOT_EQUAL_FUNCTION),
            _ => None,
        };
        if let Some(function) = function.filter(|_| call.target.is_none()) {
            *call = CallExpr {
                func_name: function.to_owned(),
                target: None,
                args: std::mem::take(&mut call.args),
            };
        }
    }
    out
}

/// `a == b`.
pub(crate) fn equal(Arguments(args): Arguments) -> Result<cel::Value, ExecutionError> {
    match args.as_slice() {
        [a, b] => Ok(cel::Value::Bool(equal_values(a, b, 0))),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

/// `a != b`.
pub(crate) fn not_equal(Arguments(args): Arguments) -> Result<cel::Value, ExecutionError> {
    match args.as_slice() {
        [a, b] => Ok(cel::Value::Bool(!equal_values(a, b, 0))),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

/// Whether `a` and `b` are equal, numbers by value whatever their types.
pub(crate) fn equal_values(a: &cel::Value, b: &cel::Value, depth: usize) -> bool {
    use cel::Value as V;
    if depth > MAX_DEPTH {
        return a == b;
    }
    match (a, b) {
        (V::Int(i), V::UInt(u)) | (V::UInt(u), V::Int(i)) => u64::try_from(*i) == Ok(*u),
        // As cel-go: an integer equals a double of the same value (compared as doubles).
        #[allow(clippy::cast_precision_loss)]
        (V::Int(i), V::Float(f)) | (V::Float(f), V::Int(i)) => *i as f64 == *f,
        #[allow(clippy::cast_precision_loss)]
        (V::UInt(u), V::Float(f)) | (V::Float(f), V::UInt(u)) => *u as f64 == *f,
        (V::List(x), V::List(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(v, w)| equal_values(v, w, depth + 1))
        }
        (V::Map(x), V::Map(y)) => {
            x.map.len() == y.map.len()
                && x.map.iter().all(|(key, v)| {
                    y.map
                        .get(key)
                        .is_some_and(|w| equal_values(v, w, depth + 1))
                })
        }
        _ => a == b,
    }
}

//! Rebuilding a syntax tree one node at a time: the node with each of its children replaced,
//! which every rewrite done once at compile time shares (the optional macros, cel-go's
//! equality, the list types of custom resource rules).

use cel::common::ast::EntryExpr;
use cel::common::ast::Expr;
use cel::common::ast::IdedExpr;

/// A copy of `expr` whose children (a selection's operand, a call's target and arguments,
/// list elements, map keys and values, struct field values, a comprehension's parts) are
/// what `child` makes of them; the first error ends it.
pub(crate) fn try_map_children<E>(
    expr: &IdedExpr,
    child: &mut impl FnMut(&IdedExpr) -> Result<IdedExpr, E>,
) -> Result<IdedExpr, E> {
    let mut out = expr.clone();
    match &mut out.expr {
        Expr::Select(select) => *select.operand = child(&select.operand)?,
        Expr::Call(call) => {
            if let Some(target) = call.target.as_deref_mut() {
                *target = child(target)?;
            }
            for arg in &mut call.args {
                *arg = child(arg)?;
            }
        }
        Expr::List(list) => {
            for element in &mut list.elements {
                *element = child(element)?;
            }
        }
        Expr::Map(map) => {
            for entry in &mut map.entries {
                if let EntryExpr::MapEntry(e) = &mut entry.expr {
                    e.key = child(&e.key)?;
                    e.value = child(&e.value)?;
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &mut s.entries {
                if let EntryExpr::StructField(f) = &mut entry.expr {
                    f.value = child(&f.value)?;
                }
            }
        }
        Expr::Comprehension(c) => {
            for part in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                *part = child(part)?;
            }
        }
        Expr::Unspecified | Expr::Literal(_) | Expr::Ident(_) => {}
    }
    Ok(out)
}

/// As [`try_map_children`], for a `child` that cannot fail.
pub(crate) fn map_children(
    expr: &IdedExpr,
    child: &mut impl FnMut(&IdedExpr) -> IdedExpr,
) -> IdedExpr {
    let Ok(out) = try_map_children(expr, &mut |e| Ok::<_, std::convert::Infallible>(child(e)));
    out
}

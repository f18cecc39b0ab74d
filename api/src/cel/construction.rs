//! Object construction in mutation expressions (Kubernetes' `HasPatchTypes` environment of
//! MutatingAdmissionPolicy): `Object{...}`, `Object.<path>{...}` and `JSONPatch{...}` are the
//! types a mutation builds its apply configuration or its patch operations with. The `cel`
//! crate cannot evaluate message construction, so, once at compile time, each such
//! construction becomes the map literal of its fields (`?field: value` an optional entry);
//! any other type name is left to the compiler's walk, which refuses it as undeclared.

use cel::common::ast::EntryExpr;
use cel::common::ast::Expr;
use cel::common::ast::IdedEntryExpr;
use cel::common::ast::IdedExpr;
use cel::common::ast::LiteralValue;
use cel::common::ast::MapEntryExpr;
use cel::common::ast::MapExpr;

use super::syntax::map_children;

/// The apply configuration type (`Object`, and `Object.spec`, `Object.spec.containers`, ...
/// for its nested fields).
const OBJECT_TYPE: &str = "Object";

/// The JSON Patch operation type.
const JSON_PATCH_TYPE: &str = "JSONPatch";

/// Whether `type_name` is one of the patch types.
fn is_patch_type(type_name: &str) -> bool {
    type_name == JSON_PATCH_TYPE
        || type_name == OBJECT_TYPE
        || type_name
            .strip_prefix(OBJECT_TYPE)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// `expr` with every construction of a patch type turned into a map literal (its nesting is
/// bounded by the parser).
pub(super) fn rewrite(expr: &IdedExpr) -> IdedExpr {
    let mut out = map_children(expr, &mut rewrite);
    if let Expr::Struct(construction) = &out.expr
        && is_patch_type(&construction.type_name)
    {
        let entries = (construction.entries.iter())
            .map(|entry| match &entry.expr {
                EntryExpr::StructField(field) => IdedEntryExpr {
                    id: entry.id,
                    expr: EntryExpr::MapEntry(MapEntryExpr {
                        key: IdedExpr {
                            id: 0,
                            expr: Expr::Literal(LiteralValue::String(field.field.clone().into())),
                        },
                        value: field.value.clone(),
                        optional: field.optional,
                    }),
                },
                EntryExpr::MapEntry(_) => entry.clone(),
            })
            .collect();
        out.expr = Expr::Map(MapExpr { entries });
    }
    out
}

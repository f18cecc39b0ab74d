//! Equality and concatenation of values by their list types (Kubernetes'
//! `unstructuredSetList` and `unstructuredMapList`): `==` and `!=` on a list with
//! `x-kubernetes-list-type: set` ignore the order of its elements, and on a list of type
//! `map` compare the elements by their map keys, at any depth of the compared values; `+` on
//! a set gives the union, and on a map-list merges the right-hand list in, its elements
//! replacing those with the same keys. A rule whose `==` or `!=` compares a value of such a
//! schema, or whose `+` has such a list on its left (an operand read from `self` or
//! `oldSelf` by fields and indexes), is rewritten once, when it is compiled, into a call of
//! [`EQUAL_FUNCTION`] (the operands, the table of the rule's [`ListShape`]s in the hidden
//! variable [`SHAPES_VARIABLE`], the index of the operand's shape in it and whether the
//! comparison is `!=`) or of [`CONCAT_FUNCTION`] (the operands, the table and the index).

use std::collections::HashMap;
use std::collections::HashSet;
use std::fmt::Write;
use std::sync::Arc;

use cel::ExecutionError;
use cel::common::ast::CallExpr;
use cel::common::ast::Expr;
use cel::common::ast::IdedExpr;
use cel::common::ast::LiteralValue;
use cel::common::ast::operators;
use cel::common::types::CelInt;
use cel::extractors::Arguments;
use cel::objects::Key;
use cel::objects::Opaque;
use serde_json::Value;

use super::escape;
use crate::cel::syntax::map_children;

/// The function a rewritten comparison calls.
pub(crate) const EQUAL_FUNCTION: &str = "@eq";
/// The function a rewritten concatenation calls.
pub(crate) const CONCAT_FUNCTION: &str = "@concat";
/// The hidden variable that holds a rule's shapes.
pub(super) const SHAPES_VARIABLE: &str = "@shapes";
/// The deepest schema nesting a shape follows (CRD schemas nest at most 64 levels).
const MAX_DEPTH: usize = 64;

/// How values of one schema node compare.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ListShape {
    /// As CEL compares them.
    Plain,
    /// A set: the same elements in any order.
    Set,
    /// A map-list: the same elements by their keys, compared by the items' shape.
    MapList(Vec<String>, Box<ListShape>),
    /// A list: element by element.
    List(Box<ListShape>),
    /// An object: the same properties (by their escaped names), each by its shape.
    Object(Vec<(String, ListShape)>),
    /// A map: the same keys, each value by the shape.
    Map(Box<ListShape>),
}

/// The shapes of one rule, as the hidden variable holds them.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Shapes(pub Vec<ListShape>);

impl Opaque for Shapes {
    fn runtime_type_name(&self) -> &str {
        "apiary.listShapes"
    }
}

impl ListShape {
    /// The shape of values of `schema`.
    pub(super) fn of(schema: &Value, depth: usize) -> Self {
        if depth > MAX_DEPTH {
            return ListShape::Plain;
        }
        let child = |key: &str| {
            schema
                .get(key)
                .filter(|s| s.is_object())
                .map_or(ListShape::Plain, |s| ListShape::of(s, depth + 1))
        };
        let shape = match schema.get("type").and_then(Value::as_str) {
            Some("array") => match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => ListShape::Set,
                Some("map") => {
                    let keys = schema
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect();
                    ListShape::MapList(keys, Box::new(child("items")))
                }
                _ => ListShape::List(Box::new(child("items"))),
            },
            Some("object")
                if schema
                    .get("additionalProperties")
                    .is_some_and(Value::is_object) =>
            {
                ListShape::Map(Box::new(child("additionalProperties")))
            }
            Some("object") => ListShape::Object(
                schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter_map(|(name, s)| Some((escape(name)?, ListShape::of(s, depth + 1))))
                    .filter(|(_, shape)| shape.is_typed())
                    .collect(),
            ),
            _ => ListShape::Plain,
        };
        if shape.is_typed() {
            shape
        } else {
            ListShape::Plain
        }
    }

    /// Whether values of this shape hold a set or a map-list anywhere.
    fn is_typed(&self) -> bool {
        match self {
            ListShape::Plain => false,
            ListShape::Set | ListShape::MapList(..) => true,
            ListShape::List(items) | ListShape::Map(items) => items.is_typed(),
            ListShape::Object(properties) => !properties.is_empty(),
        }
    }
}

/// The schema a CEL expression reads from `self` (or `oldSelf`), followed statically
/// through field selections and indexes; `None` for anything else.
fn schema_of<'a>(expr: &IdedExpr, root: &'a Value, depth: usize) -> Option<&'a Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    match &expr.expr {
        Expr::Ident(name) if name == "self" || name == "oldSelf" => Some(root),
        Expr::Select(select) if !select.test => {
            let operand = schema_of(&select.operand, root, depth + 1)?;
            operand
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .find(|(name, _)| escape(name).as_deref() == Some(select.field.as_str()))
                .map(|(_, s)| s)
                .or_else(|| {
                    operand
                        .get("additionalProperties")
                        .filter(|s| s.is_object())
                })
        }
        Expr::Call(call) if call.func_name == operators::INDEX && call.target.is_none() => {
            let operand = schema_of(call.args.first()?, root, depth + 1)?;
            operand
                .get("items")
                .or_else(|| operand.get("additionalProperties"))
                .filter(|s| s.is_object())
        }
        _ => None,
    }
}

/// `expr` (a rule of the node `schema`) with its comparisons of typed values rewritten, and
/// the shapes the rewritten calls refer to (none: nothing was rewritten).
pub(super) fn rewrite(expr: &IdedExpr, schema: &Value) -> (IdedExpr, Vec<ListShape>) {
    let mut shapes = Vec::new();
    let out = Rewrite {
        schema,
        shapes: &mut shapes,
    }
    .node(expr);
    (out, shapes)
}

struct Rewrite<'a> {
    schema: &'a Value,
    shapes: &'a mut Vec<ListShape>,
}

impl Rewrite<'_> {
    /// `expr` rewritten (its nesting is bounded by compilation).
    fn node(&mut self, expr: &IdedExpr) -> IdedExpr {
        let mut out = map_children(expr, &mut |e| self.node(e));
        let Expr::Call(call) = &mut out.expr else {
            return out;
        };
        let (function, shape, negate) = match (self.concatenated(call), self.typed_operand(call)) {
            (Some(shape), _) => (CONCAT_FUNCTION, shape, None),
            (None, Some(shape)) => {
                let negate = call.func_name == operators::NOT_EQUALS;
                (EQUAL_FUNCTION, shape, Some(negate))
            }
            (None, None) => return out,
        };
        let index = i64::try_from(self.shapes.len()).unwrap_or(i64::MAX);
        self.shapes.push(shape);
        let mut args = std::mem::take(&mut call.args);
        args.push(ided(Expr::Ident(SHAPES_VARIABLE.to_owned())));
        args.push(int(index));
        args.extend(negate.map(|n| int(i64::from(n))));
        *call = CallExpr {
            func_name: function.to_owned(),
            target: None,
            args,
        };
        out
    }

    /// The shape of the left operand of a `+` call that is a set or a map-list.
    fn concatenated(&self, call: &CallExpr) -> Option<ListShape> {
        if call.func_name != operators::ADD || call.target.is_some() || call.args.len() != 2 {
            return None;
        }
        let shape = ListShape::of(schema_of(call.args.first()?, self.schema, 0)?, 0);
        matches!(shape, ListShape::Set | ListShape::MapList(..)).then_some(shape)
    }

    /// The shape of a typed operand of an `==` or `!=` call.
    fn typed_operand(&self, call: &CallExpr) -> Option<ListShape> {
        if !matches!(
            call.func_name.as_str(),
            operators::EQUALS | operators::NOT_EQUALS
        ) || call.target.is_some()
            || call.args.len() != 2
        {
            return None;
        }
        call.args
            .iter()
            .filter_map(|a| schema_of(a, self.schema, 0))
            .map(|s| ListShape::of(s, 0))
            .find(ListShape::is_typed)
    }
}

fn ided(expr: Expr) -> IdedExpr {
    IdedExpr { id: 0, expr }
}

fn int(n: i64) -> IdedExpr {
    ided(Expr::Literal(LiteralValue::Int(CelInt::from(n))))
}

/// The shape at `index` of a rule's shapes (the hidden variable's value).
fn shape_at(shapes: &Arc<dyn Opaque>, index: i64) -> Result<&ListShape, ExecutionError> {
    shapes
        .downcast_ref::<Shapes>()
        .and_then(|s| s.0.get(usize::try_from(index).ok()?))
        .ok_or(ExecutionError::NoSuchOverload)
}

/// The comparison function: `@eq(a, b, shapes, index, negate)`.
pub(crate) fn equal(Arguments(args): Arguments) -> Result<cel::Value, ExecutionError> {
    let [
        a,
        b,
        cel::Value::Opaque(shapes),
        cel::Value::Int(index),
        cel::Value::Int(negate),
    ] = args.as_slice()
    else {
        return Err(ExecutionError::NoSuchOverload);
    };
    let shape = shape_at(shapes, *index)?;
    Ok(cel::Value::Bool(equal_by(a, b, shape, 0) != (*negate != 0)))
}

/// The concatenation function: `@concat(a, b, shapes, index)`, the union of two sets or the
/// merge of two map-lists (the right-hand elements replace those with the same keys, in
/// place; the others are appended).
pub(crate) fn concatenate(Arguments(args): Arguments) -> Result<cel::Value, ExecutionError> {
    let [
        cel::Value::List(a),
        cel::Value::List(b),
        cel::Value::Opaque(shapes),
        cel::Value::Int(index),
    ] = args.as_slice()
    else {
        return Err(ExecutionError::NoSuchOverload);
    };
    let shape = shape_at(shapes, *index)?;
    let mut out: Vec<cel::Value> = a.to_vec();
    match shape {
        ListShape::Set => {
            let mut seen: HashSet<String> = out.iter().map(canonical).collect();
            out.extend(b.iter().filter(|v| seen.insert(canonical(v))).cloned());
        }
        ListShape::MapList(keys, _) => {
            let mut at: HashMap<String, usize> = (out.iter().enumerate())
                .map(|(i, v)| (map_key(v, keys), i))
                .collect();
            for v in b.iter() {
                match at.get(&map_key(v, keys)).and_then(|i| out.get_mut(*i)) {
                    Some(slot) => *slot = v.clone(),
                    None => {
                        at.insert(map_key(v, keys), out.len());
                        out.push(v.clone());
                    }
                }
            }
        }
        _ => out.extend(b.iter().cloned()),
    }
    Ok(cel::Value::List(Arc::new(out)))
}

/// Whether `a` and `b` are equal as values of `shape`.
fn equal_by(a: &cel::Value, b: &cel::Value, shape: &ListShape, depth: usize) -> bool {
    use cel::Value as V;
    if depth > MAX_DEPTH {
        return crate::cel::equality::equal_values(a, b, depth);
    }
    match (shape, a, b) {
        (ListShape::Set, V::List(a), V::List(b)) => {
            if a.len() != b.len() {
                return false;
            }
            let mut counts: HashMap<String, i64> = HashMap::new();
            for v in a.iter() {
                *counts.entry(canonical(v)).or_default() += 1;
            }
            for v in b.iter() {
                *counts.entry(canonical(v)).or_default() -= 1;
            }
            counts.values().all(|n| *n == 0)
        }
        (ListShape::MapList(keys, items), V::List(a), V::List(b)) => {
            if a.len() != b.len() {
                return false;
            }
            let by_key: HashMap<String, &cel::Value> =
                b.iter().map(|v| (map_key(v, keys), v)).collect();
            by_key.len() == b.len()
                && a.iter().all(|v| {
                    by_key
                        .get(&map_key(v, keys))
                        .is_some_and(|w| equal_by(v, w, items, depth + 1))
                })
        }
        (ListShape::List(items), V::List(a), V::List(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|(v, w)| equal_by(v, w, items, depth + 1))
        }
        (ListShape::Object(properties), V::Map(a), V::Map(b)) => {
            a.map.len() == b.map.len()
                && a.map.iter().all(|(key, v)| {
                    b.map.get(key).is_some_and(|w| {
                        let shape = match key {
                            Key::String(name) => properties
                                .iter()
                                .find(|(n, _)| n == name.as_str())
                                .map(|(_, s)| s),
                            _ => None,
                        };
                        shape.map_or_else(
                            || crate::cel::equality::equal_values(v, w, depth + 1),
                            |s| equal_by(v, w, s, depth + 1),
                        )
                    })
                })
        }
        (ListShape::Map(values), V::Map(a), V::Map(b)) => {
            a.map.len() == b.map.len()
                && a.map.iter().all(|(key, v)| {
                    b.map
                        .get(key)
                        .is_some_and(|w| equal_by(v, w, values, depth + 1))
                })
        }
        _ => crate::cel::equality::equal_values(a, b, depth),
    }
}

/// The values of a map-list element's keys, as one string.
fn map_key(element: &cel::Value, keys: &[String]) -> String {
    let mut out = String::new();
    for key in keys {
        let value = match element {
            cel::Value::Map(m) => m.map.get(&Key::String(Arc::new(key.clone()))),
            _ => None,
        };
        match value {
            Some(v) => write_canonical(v, &mut out, 0),
            None => out.push('~'),
        }
        out.push(';');
    }
    out
}

/// `value` written so that equal values (maps in any order) give the same text.
fn canonical(value: &cel::Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out, 0);
    out
}

fn write_canonical(value: &cel::Value, out: &mut String, depth: usize) {
    use cel::Value as V;
    if depth > MAX_DEPTH {
        out.push('…');
        return;
    }
    let _ = match value {
        V::Null => write!(out, "n"),
        V::Bool(b) => write!(out, "b{b}"),
        V::Int(i) => write!(out, "i{i}"),
        V::UInt(u) => write!(out, "u{u}"),
        V::Float(f) => write!(out, "f{f:?}"),
        V::String(s) => write!(out, "s{}:{s}", s.len()),
        V::Bytes(b) => write!(out, "y{b:?}"),
        V::List(items) => {
            out.push('[');
            for item in items.iter() {
                write_canonical(item, out, depth + 1);
                out.push(',');
            }
            write!(out, "]")
        }
        V::Map(map) => {
            let mut entries: Vec<(String, &cel::Value)> =
                map.map.iter().map(|(k, v)| (format!("{k:?}"), v)).collect();
            entries.sort_by(|x, y| x.0.cmp(&y.0));
            out.push('{');
            for (k, v) in entries {
                out.push_str(&k);
                out.push(':');
                write_canonical(v, out, depth + 1);
                out.push(',');
            }
            write!(out, "}}")
        }
        other => write!(out, "o{other:?}"),
    };
}

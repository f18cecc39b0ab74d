//! What the `cel` crate lacks of CEL's standard environment and Kubernetes relies on: `type()`
//! with the type identifiers it compares to (`int`, `string`, ... as in
//! `type(self) == string` over an int-or-string), `dyn()`, and `size()` of a string in code
//! points (the crate counts bytes).

use std::sync::Arc;

use cel::ExecutionError;
use cel::FunctionContext;
use cel::extractors::This;
use cel::objects::Opaque;

/// The type identifiers bound in every expression.
pub(super) const TYPE_NAMES: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "type",
    "uint",
];

/// A CEL type, as `type()` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CelType(&'static str);

impl Opaque for CelType {
    fn runtime_type_name(&self) -> &str {
        "type"
    }
}

fn type_value(name: &'static str) -> cel::Value {
    cel::Value::Opaque(Arc::new(CelType(name)))
}

/// The name of the type of `value`.
fn type_name(value: &cel::Value) -> &'static str {
    match value {
        cel::Value::List(_) => "list",
        cel::Value::Map(_) => "map",
        cel::Value::Function(..) => "function",
        cel::Value::Int(_) => "int",
        cel::Value::UInt(_) => "uint",
        cel::Value::Float(_) => "double",
        cel::Value::String(_) => "string",
        cel::Value::Bytes(_) => "bytes",
        cel::Value::Bool(_) => "bool",
        cel::Value::Duration(_) => "google.protobuf.Duration",
        cel::Value::Timestamp(_) => "google.protobuf.Timestamp",
        cel::Value::Opaque(o) if o.runtime_type_name() == "type" => "type",
        cel::Value::Opaque(_) => "opaque",
        cel::Value::Null => "null_type",
    }
}

/// `type(x)`.
fn type_of(ftx: &FunctionContext) -> Result<cel::Value, ExecutionError> {
    let arg = ftx
        .args
        .first()
        .ok_or_else(|| ftx.error("type() takes one argument"))?;
    Ok(type_value(type_name(&cel::Value::resolve(arg, ftx.ptx)?)))
}

/// `dyn(x)`: `x`.
fn dynamic(ftx: &FunctionContext) -> Result<cel::Value, ExecutionError> {
    let arg = ftx
        .args
        .first()
        .ok_or_else(|| ftx.error("dyn() takes one argument"))?;
    cel::Value::resolve(arg, ftx.ptx)
}

/// `size(x)` / `x.size()`: code points of a string, bytes of bytes, entries of a list or map.
fn size(ftx: &FunctionContext, This(this): This<cel::Value>) -> Result<i64, ExecutionError> {
    let n = match &this {
        cel::Value::String(s) => s.chars().count(),
        cel::Value::Bytes(b) => b.len(),
        cel::Value::List(l) => l.len(),
        cel::Value::Map(m) => m.map.len(),
        other => return Err(ftx.error(format!("cannot determine the size of {other:?}"))),
    };
    i64::try_from(n).map_err(|_| ftx.error("size overflows int"))
}

/// Registers the functions and binds the type identifiers in `context`.
pub(super) fn register(context: &mut cel::Context<'_>) {
    context.add_function("type", type_of);
    context.add_function("dyn", dynamic);
    context.add_function("size", size);
    for name in TYPE_NAMES {
        context.add_variable_from_value(*name, type_value(name));
    }
}

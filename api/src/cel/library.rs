//! What the `cel` crate lacks of CEL's standard environment and Kubernetes relies on: `type()`
//! with the type identifiers it compares to (`int`, `string`, ... as in
//! `type(self) == string` over an int-or-string), `dyn()`, and `size()` of a string in code
//! points (the crate counts bytes); the conversions it lacks (`string(bool)`,
//! `string(duration)` in seconds as cel-go prints it, `int(timestamp)`, `bool()`); and
//! Kubernetes' `format.named()`, which returns an optional format (kube-cel's returns the
//! format itself); and `split('')` and `indexOf` with an offset past the end as cel-go answers
//! them (kube-cel differs).

use std::sync::Arc;

use cel::ExecutionError;
use cel::FunctionContext;
use cel::common::ast::CallExpr;
use cel::common::ast::Expr;
use cel::common::ast::IdedExpr;
use cel::extractors::Arguments;
use cel::extractors::This;
use cel::objects::Opaque;
use cel::objects::OptionalValue;
use kube_cel::KubeCelExt;

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

/// `string(x)`: what the crate converts, and booleans and durations as cel-go converts them.
fn string(This(this): This<cel::Value>) -> Result<cel::Value, ExecutionError> {
    let text = match &this {
        cel::Value::Bool(b) => b.to_string(),
        cel::Value::Duration(d) => {
            let seconds = d
                .num_nanoseconds()
                .map_or_else(|| d.num_seconds() as f64, |n| n as f64 / 1e9);
            format!("{seconds}s")
        }
        _ => return delegate("string", this),
    };
    Ok(cel::Value::String(Arc::new(text)))
}

thread_local! {
    /// The crate's and kube-cel's functions alone, which the overrides here delegate to.
    static BASE: cel::Context<'static> = cel::Context::default().with_all();
}

/// The function `name` of [`BASE`] applied to `value`.
fn delegate(name: &str, value: cel::Value) -> Result<cel::Value, ExecutionError> {
    delegate_call(name, None, vec![value])
}

/// The function `name` of [`BASE`] called on `target` (as a method) with `args`.
fn delegate_call(
    name: &str,
    target: Option<cel::Value>,
    args: Vec<cel::Value>,
) -> Result<cel::Value, ExecutionError> {
    BASE.with(|base| {
        let mut scope = base.new_inner_scope();
        let ided = |expr| IdedExpr { id: 0, expr };
        let mut bind = |i: usize, value: cel::Value| {
            let name = format!("a{i}");
            scope.add_variable_from_value(name.clone(), value);
            ided(Expr::Ident(name))
        };
        let target = target.map(|t| Box::new(bind(0, t)));
        let args = args
            .into_iter()
            .enumerate()
            .map(|(i, a)| bind(i + 1, a))
            .collect();
        let call = ided(Expr::Call(CallExpr {
            func_name: name.to_owned(),
            target,
            args,
        }));
        cel::Value::resolve(&call, &scope)
    })
}

/// `s.split(separator[, limit])`: an empty separator splits into characters, as Go's
/// `strings.SplitN` does (kube-cel keeps empty leading and trailing parts); other calls as
/// kube-cel answers them.
fn split(
    This(this): This<cel::Value>,
    Arguments(args): Arguments,
) -> Result<cel::Value, ExecutionError> {
    let (cel::Value::String(s), Some(cel::Value::String(separator))) = (&this, args.first()) else {
        return delegate_call("split", Some(this), args.to_vec());
    };
    if !separator.is_empty() {
        return delegate_call("split", Some(this), args.to_vec());
    }
    let limit = match args.get(1) {
        None => -1,
        Some(cel::Value::Int(n)) => *n,
        Some(_) => return Err(ExecutionError::NoSuchOverload),
    };
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let count = match usize::try_from(limit) {
        Ok(n) => n.min(chars.len()),
        Err(_) => chars.len(),
    };
    let mut parts = Vec::with_capacity(count);
    for (i, (at, c)) in chars.iter().enumerate().take(count) {
        let part = if i + 1 == count {
            s.get(*at..).unwrap_or_default().to_owned()
        } else {
            c.to_string()
        };
        parts.push(cel::Value::String(Arc::new(part)));
    }
    Ok(cel::Value::List(Arc::new(parts)))
}

/// `s.indexOf(substring, offset)`: an offset outside the string is an error, as cel-go
/// answers it; other calls as kube-cel answers them.
fn index_of(
    This(this): This<cel::Value>,
    Arguments(args): Arguments,
) -> Result<cel::Value, ExecutionError> {
    if let (cel::Value::String(s), [cel::Value::String(_), cel::Value::Int(offset)]) =
        (&this, args.as_slice())
    {
        let length = i64::try_from(s.chars().count()).unwrap_or(i64::MAX);
        if *offset < 0 || *offset > length {
            return Err(ExecutionError::function_error(
                "indexOf",
                format!("index out of range: {offset}"),
            ));
        }
    }
    delegate_call("indexOf", Some(this), args.to_vec())
}

/// `int(x)`: what the crate converts, and a timestamp as its seconds since the epoch.
fn int(This(this): This<cel::Value>) -> Result<cel::Value, ExecutionError> {
    match &this {
        cel::Value::Timestamp(t) => Ok(cel::Value::Int(t.timestamp())),
        _ => delegate("int", this),
    }
}

/// `bool(x)`: a boolean, or a string as Go's `strconv.ParseBool` reads it.
fn boolean(
    ftx: &FunctionContext,
    This(this): This<cel::Value>,
) -> Result<cel::Value, ExecutionError> {
    match &this {
        cel::Value::Bool(b) => Ok(cel::Value::Bool(*b)),
        cel::Value::String(s) => match s.as_str() {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(cel::Value::Bool(true)),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(cel::Value::Bool(false)),
            _ => Err(ftx.error("type conversion error from 'string' to 'bool'")),
        },
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

/// The formats `format.named()` knows (Kubernetes' format library).
const FORMAT_NAMES: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// `format.named(name)`: the format `format.<name>()` as an optional, none for a name that
/// is not a format.
fn format_named(ftx: &FunctionContext, name: Arc<String>) -> Result<cel::Value, ExecutionError> {
    if !FORMAT_NAMES.contains(&name.as_str()) {
        return Ok(cel::Value::Opaque(Arc::new(OptionalValue::none())));
    }
    let ided = |expr| IdedExpr { id: 0, expr };
    let constructor = ided(Expr::Call(CallExpr {
        func_name: name.as_str().to_owned(),
        target: Some(Box::new(ided(Expr::Ident("format".to_owned())))),
        args: Vec::new(),
    }));
    let format = cel::Value::resolve(&constructor, ftx.ptx)?;
    Ok(cel::Value::Opaque(Arc::new(OptionalValue::of(format))))
}

/// Registers the functions and binds the type identifiers in `context`.
pub(super) fn register(context: &mut cel::Context<'_>) {
    context.add_function("type", type_of);
    context.add_function("dyn", dynamic);
    context.add_function("size", size);
    context.add_function("format.named", format_named);
    context.add_function("string", string);
    context.add_function("int", int);
    context.add_function("bool", boolean);
    context.add_function("split", split);
    context.add_function("indexOf", index_of);
    for name in TYPE_NAMES {
        context.add_variable_from_value(*name, type_value(name));
    }
}

//! The types the checker knows ([`Type`]) and how an OpenAPI schema types a value
//! (Kubernetes' schema-to-CEL rules): `$ref`s followed, formats mapped to CEL types, objects
//! typed lazily by their properties.

use std::fmt;
use std::rc::Rc;

use serde_json::Map;
use serde_json::Value;

use crate::cel::rules::escape;

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

    pub(super) fn is_dyn(&self) -> bool {
        matches!(self, Type::Dyn)
    }

    pub(super) fn is_number(&self) -> bool {
        matches!(self, Type::Int | Type::Uint | Type::Double)
    }

    /// Whether values of the type are maps or objects (which compare with each other).
    pub(super) fn is_object(&self) -> bool {
        matches!(self, Type::Map(..) | Type::Schema(..) | Type::Fields(_))
    }

    /// Whether the two types are the same kind of value (element types aside).
    pub(super) fn same_kind(&self, other: &Type<'_>) -> bool {
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
    pub(super) fn select(&self, field: &str) -> Result<Type<'a>, String> {
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
    pub(super) fn elements(&self) -> (Type<'a>, Type<'a>) {
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

//! One node of a custom resource's structural schema as CEL sees it (Kubernetes'
//! `SchemaDeclType` and `UnstructuredToVal`): which CEL type a JSON value of the node becomes,
//! under which (escaped) names an object's properties are read, and the node's rules and
//! children for the walk that evaluates them.

use std::sync::Arc;

use base64::Engine;
use serde_json::Value;

use super::rule::Rule;

/// How values of a node become CEL values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An object with known properties: a map of the (escaped) known property names.
    Object,
    /// An object with `additionalProperties`: a map of the original keys.
    Map,
    /// An array: a list.
    List,
    /// A string; `byte`, `duration`, `date` and `date-time` formats become bytes, durations
    /// and timestamps.
    Str(Format),
    /// An integer: int.
    Int,
    /// A number: double, even when written as an integer.
    Double,
    /// A boolean.
    Bool,
    /// `x-kubernetes-int-or-string`, or no type at all: the JSON value as it is.
    Dynamic,
}

/// The string formats CEL maps to other types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Plain,
    Byte,
    Duration,
    Date,
    DateTime,
}

/// One schema node: its CEL kind, its children, its rules.
#[derive(Debug)]
pub(super) struct Node {
    pub kind: Kind,
    /// The schema `type` (the value Kubernetes reports in rule errors).
    pub type_name: String,
    /// The root of a resource or an embedded resource: `apiVersion`, `kind` and
    /// `metadata.name`/`generateName` are readable whatever the schema says.
    pub resource_root: bool,
    /// The known properties: original name, escaped name (`None`: not readable from CEL).
    pub properties: Vec<(String, Option<String>, Arc<Node>)>,
    pub additional: Option<Arc<Node>>,
    pub items: Option<Arc<Node>>,
    /// `x-kubernetes-list-type: map` keys (old items correlate by them).
    pub map_keys: Option<Vec<String>>,
    /// Whether old and new values of the node's children correlate (`x-kubernetes-map-type`
    /// granular or atomic, or none).
    pub correlatable: bool,
    pub rules: Vec<Rule>,
    /// Whether this node or any below it has rules.
    pub has_rules: bool,
}

impl Node {
    /// `value` as a CEL value of this node's type.
    pub fn to_cel(&self, value: &Value) -> cel::Value {
        match (self.kind, value) {
            (_, Value::Null) => cel::Value::Null,
            (Kind::Object, Value::Object(fields)) => {
                let mut map = std::collections::HashMap::new();
                for (name, escaped, node) in &self.properties {
                    if let (Some(escaped), Some(v)) = (escaped, fields.get(name)) {
                        let v = if self.resource_root && name == "metadata" {
                            object_meta(v)
                        } else {
                            node.to_cel(v)
                        };
                        map.insert(escaped.clone(), v);
                    }
                }
                if self.resource_root {
                    for key in ["apiVersion", "kind"] {
                        if let Some(Value::String(s)) = fields.get(key) {
                            map.entry(key.to_owned())
                                .or_insert_with(|| cel::Value::String(Arc::new(s.clone())));
                        }
                    }
                    if let Some(meta) = fields.get("metadata") {
                        map.entry("metadata".to_owned())
                            .or_insert_with(|| object_meta(meta));
                    }
                }
                cel::Value::from(map)
            }
            (Kind::Map, Value::Object(fields)) => {
                let node = self.additional.as_deref();
                let map: std::collections::HashMap<String, cel::Value> = fields
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            node.map_or_else(|| super::super::to_cel(v), |n| n.to_cel(v)),
                        )
                    })
                    .collect();
                cel::Value::from(map)
            }
            (Kind::List, Value::Array(items)) => {
                let node = self.items.as_deref();
                cel::Value::List(Arc::new(
                    items
                        .iter()
                        .map(|v| node.map_or_else(|| super::super::to_cel(v), |n| n.to_cel(v)))
                        .collect(),
                ))
            }
            (Kind::Double, Value::Number(n)) => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            (Kind::Str(format), Value::String(s)) => string(format, s),
            _ => super::super::to_cel(value),
        }
    }
}

/// Object metadata as rules see it: only `name` and `generateName`.
fn object_meta(meta: &Value) -> cel::Value {
    let mut map = std::collections::HashMap::new();
    for key in ["name", "generateName"] {
        if let Some(Value::String(s)) = meta.get(key) {
            map.insert(key.to_owned(), cel::Value::String(Arc::new(s.clone())));
        }
    }
    cel::Value::from(map)
}

/// A string of `format`; a value the format does not parse stays a string.
fn string(format: Format, s: &str) -> cel::Value {
    let parsed = match format {
        Format::Plain => None,
        Format::Byte => base64::engine::general_purpose::STANDARD
            .decode(s)
            .ok()
            .map(|b| cel::Value::Bytes(Arc::new(b))),
        Format::Duration => parse_duration(s).map(cel::Value::Duration),
        Format::Date => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| cel::Value::Timestamp(t.and_utc().fixed_offset())),
        Format::DateTime => chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(cel::Value::Timestamp),
    };
    parsed.unwrap_or_else(|| cel::Value::String(Arc::new(s.to_owned())))
}

/// A Go duration (`1h30m`, `-1.5s`, `300ms`), with `d` and `w` as the OpenAPI `duration`
/// format also accepts.
pub(super) fn parse_duration(s: &str) -> Option<chrono::Duration> {
    let (negative, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest.get(..number_len)?.parse().ok()?;
        rest = rest.get(number_len..)?;
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let nanos: f64 = match rest.get(..unit_len)? {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "d" => 86400e9,
            "w" => 604_800e9,
            _ => return None,
        };
        rest = rest.get(unit_len..)?;
        total += number * nanos;
    }
    if !total.is_finite() || total > i64::MAX as f64 {
        return None;
    }
    let nanos = total as i64;
    Some(chrono::Duration::nanoseconds(if negative {
        -nanos
    } else {
        nanos
    }))
}

/// The kind of a schema node.
pub(super) fn kind_of(schema: &Value) -> Kind {
    let flag = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
    if flag("x-kubernetes-int-or-string") {
        return Kind::Dynamic;
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object")
            if schema
                .get("additionalProperties")
                .is_some_and(Value::is_object) =>
        {
            Kind::Map
        }
        Some("object") => Kind::Object,
        Some("array") => Kind::List,
        Some("integer") => Kind::Int,
        Some("number") => Kind::Double,
        Some("boolean") => Kind::Bool,
        Some("string") => Kind::Str(match schema.get("format").and_then(Value::as_str) {
            Some("byte") => Format::Byte,
            Some("duration") => Format::Duration,
            Some("date") => Format::Date,
            Some("date-time") => Format::DateTime,
            _ => Format::Plain,
        }),
        _ => Kind::Dynamic,
    }
}

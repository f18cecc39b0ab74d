//! The one pass over a JSON or YAML request body: a serde `DeserializeSeed` that follows the
//! kind's schema while it builds the value. It type-checks every scalar (the first mismatch
//! is kept, worded as Kubernetes' decoder words it, R-RES-031), drops and records unknown
//! fields and records duplicate ones (R-RES-188, R-RES-189), treats `null` as unset, and
//! writes each object's properties in schema order with the required ones at their zero
//! value: the value k8s-openapi's typed round trip produced.

use std::collections::BTreeSet;
use std::fmt;

use serde::Deserialize;
use serde::Deserializer;
use serde::de::DeserializeSeed;
use serde::de::IgnoredAny;
use serde::de::MapAccess;
use serde::de::SeqAccess;
use serde::de::Visitor;
use serde_json::Map;
use serde_json::Value;
use serde_saphyr::DuplicateKeyPolicy;
use serde_saphyr::Spanned;

use super::Finding;
use super::Node;
use super::NodeId;
use super::Object;
use super::Schema;
use super::scalar::Misfit;
use super::scalar::Raw;

/// The media type of a body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// `application/json`.
    #[default]
    Json,
    /// `application/yaml`: one document, decoded as if converted to JSON first.
    Yaml,
}

/// The body does not parse: JSON syntax, YAML syntax, or more than one YAML document.
#[derive(Debug, thiserror::Error)]
pub enum SyntaxError {
    /// Not JSON (or nested deeper than the parser allows).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// Not one YAML document; the text is the parser's.
    #[error("error converting YAML to JSON: yaml: {0}")]
    Yaml(String),
}

/// A value that does not fit its field's type, worded as Kubernetes' decoder words it
/// (`json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type
/// int32`, `illegal base64 data at input byte 3`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TypeError(pub String);

/// A decoded body.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The body's value: unknown fields left out, `null` fields unset, a duplicate keeps its
    /// last value, required fields present.
    pub value: Value,
    /// The unknown and duplicate fields: JSON in body order; YAML duplicates first, then the
    /// unknown fields in key order (the order of the JSON Kubernetes converts YAML into).
    pub findings: Vec<Finding>,
    /// The first value of a wrong type, if any (the request then fails with it).
    pub type_error: Option<TypeError>,
}

/// Parses `body` as `format` in one pass, checking every value against `schema`.
pub fn decode(schema: &Schema, body: &[u8], format: Format) -> Result<Decoded, SyntaxError> {
    let mut ctx = Ctx {
        format,
        segments: Vec::new(),
        findings: Vec::new(),
        type_error: None,
    };
    let seed = Seed {
        schema,
        ctx: &mut ctx,
        node: schema.root(),
    };
    let value = match format {
        Format::Json => {
            let mut de = serde_json::Deserializer::from_slice(body);
            let value = seed.deserialize(&mut de)?;
            de.end()?;
            value
        }
        Format::Yaml => {
            let mut options = serde_saphyr::Options::default();
            options.duplicate_keys = DuplicateKeyPolicy::PassThrough;
            options.with_snippet = false;
            serde_saphyr::with_deserializer_from_slice_with_options(body, options, |de| {
                seed.deserialize(de)
            })
            .map_err(|e| SyntaxError::Yaml(e.to_string()))?
        }
    };
    if format == Format::Yaml {
        // Stable: duplicates keep their line order, unknown fields sort by path segment.
        ctx.findings
            .sort_by(|a, b| yaml_order(a).cmp(&yaml_order(b)));
    }
    Ok(Decoded {
        value,
        findings: ctx.findings,
        type_error: ctx.type_error,
    })
}

fn yaml_order(f: &Finding) -> (u8, Vec<&str>) {
    match f {
        Finding::YamlDuplicate { .. } => (0, Vec::new()),
        Finding::Unknown(path) | Finding::Duplicate(path) => (1, path.split('.').collect()),
    }
}

/// The most findings kept, as Kubernetes' strict decoder keeps (a body cannot make the
/// answer grow without bound).
const MAX_FINDINGS: usize = 100;

/// How deep a zero value of nested required objects is built (schemas may be recursive).
const MAX_ZERO_DEPTH: usize = 16;

/// One step of the path from the root to the current value.
enum Segment<'s> {
    /// A property of the struct named by the second item (Go's error context).
    Field(String, &'s str),
    /// A map key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// What the pass carries down: the path, the findings so far and the first type error.
struct Ctx<'s> {
    format: Format,
    segments: Vec<Segment<'s>>,
    findings: Vec<Finding>,
    type_error: Option<TypeError>,
}

impl Ctx<'_> {
    /// The path as Kubernetes prints it in findings (`spec.containers[0].name`).
    fn path(&self) -> String {
        let mut path = String::new();
        for s in &self.segments {
            match s {
                Segment::Field(name, _) | Segment::Key(name) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(name);
                }
                Segment::Index(i) => path.push_str(&format!("[{i}]")),
            }
        }
        path
    }

    fn push(&mut self, finding: Finding) {
        if self.findings.len() < MAX_FINDINGS && !self.findings.contains(&finding) {
            self.findings.push(finding);
        }
    }

    fn unknown(&mut self) {
        let path = self.path();
        self.push(Finding::Unknown(path));
    }

    /// A key seen before in the same object: by path in JSON, by line in YAML.
    fn duplicate(&mut self, key: &str, line: u64) {
        let finding = match self.format {
            Format::Json => Finding::Duplicate(self.path()),
            Format::Yaml => Finding::YamlDuplicate {
                line,
                key: key.to_owned(),
            },
        };
        self.push(finding);
    }

    /// Keeps the first type error (Go's decoder keeps the first and reads on).
    fn misfit(&mut self, schema: &Schema, node: NodeId, misfit: Misfit) {
        if self.type_error.is_some() {
            return;
        }
        let text = match misfit {
            Misfit::Malformed(text) => text,
            Misfit::Kind(what) => {
                let go_type = schema.go_type(node);
                let fields: Vec<&str> = self
                    .segments
                    .iter()
                    .filter_map(|s| match s {
                        Segment::Field(name, _) => Some(name.as_str()),
                        _ => None,
                    })
                    .collect();
                let owner = self.segments.iter().rev().find_map(|s| match s {
                    Segment::Field(_, owner) => Some(*owner),
                    _ => None,
                });
                match owner {
                    Some(owner) => format!(
                        "json: cannot unmarshal {what} into Go struct field {owner}.{} of type {go_type}",
                        fields.join(".")
                    ),
                    None => {
                        format!("json: cannot unmarshal {what} into Go value of type {go_type}")
                    }
                }
            }
        };
        self.type_error = Some(TypeError(text));
    }
}

/// The value Go leaves in an unsent field of node `id`, as the typed round trip wrote it
/// (objects hold their required fields); `None` for no value (free-form, zero time).
fn zero(schema: &Schema, id: NodeId, depth: usize) -> Option<Value> {
    match schema.node(id) {
        Node::Scalar(s) => s.zero(),
        Node::Array(_) => Some(Value::Array(Vec::new())),
        Node::Map(_) => Some(Value::Object(Map::new())),
        Node::Any => None,
        Node::Object(_) if depth >= MAX_ZERO_DEPTH => Some(Value::Object(Map::new())),
        Node::Object(o) => Some(Value::Object(
            o.properties
                .iter()
                .filter(|(name, _)| o.required.contains(name))
                .filter_map(|(name, child)| Some((name.clone(), zero(schema, *child, depth + 1)?)))
                .collect(),
        )),
    }
}

/// The next key of a map, with its line in YAML (0 in JSON).
fn next_key<'de, A>(format: Format, map: &mut A) -> Result<Option<(String, u64)>, A::Error>
where
    A: MapAccess<'de>,
{
    Ok(match format {
        Format::Json => map.next_key::<String>()?.map(|k| (k, 0)),
        Format::Yaml => map
            .next_key::<Spanned<String>>()?
            .map(|k| (k.value, k.referenced.line())),
    })
}

/// The pass over one value at one schema node.
struct Seed<'s, 'c> {
    schema: &'s Schema,
    ctx: &'c mut Ctx<'s>,
    node: NodeId,
}

impl<'s> Seed<'s, '_> {
    fn child<'c>(&'c mut self, node: NodeId) -> Seed<'s, 'c> {
        Seed {
            schema: self.schema,
            ctx: &mut *self.ctx,
            node,
        }
    }

    /// A scalar where the node wants `raw`'s kind, or a type error (then `null`).
    fn scalar(self, raw: Raw<'_>) -> Value {
        let what = match raw {
            Raw::Bool(_) => "bool",
            Raw::Str(_) => "string",
            Raw::Signed(_) | Raw::Unsigned(_) | Raw::Float(_) => "number",
        };
        let accepted = match self.schema.node(self.node) {
            Node::Scalar(s) => s.accept(raw),
            Node::Any => Ok(match raw {
                Raw::Bool(b) => b.into(),
                Raw::Signed(v) => v.into(),
                Raw::Unsigned(v) => v.into(),
                Raw::Float(v) => v.into(),
                Raw::Str(s) => s.into(),
            }),
            Node::Object(_) | Node::Map(_) | Node::Array(_) => Err(Misfit::Kind(what.to_owned())),
        };
        accepted.unwrap_or_else(|m| {
            self.ctx.misfit(self.schema, self.node, m);
            Value::Null
        })
    }

    fn object<'de, A>(mut self, o: &'s Object, mut map: A) -> Result<Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        let mut slots: Vec<Option<Value>> = vec![None; o.properties.len()];
        let mut seen = vec![false; o.properties.len()];
        let mut unknown = BTreeSet::new();
        while let Some((key, line)) = next_key(self.ctx.format, &mut map)? {
            self.ctx
                .segments
                .push(Segment::Field(key.clone(), o.struct_name()));
            match o.property(&key) {
                Some((i, node)) => {
                    if seen[i] {
                        self.ctx.duplicate(&key, line);
                    }
                    seen[i] = true;
                    let v = map.next_value_seed(self.child(node))?;
                    slots[i] = (!v.is_null()).then_some(v);
                }
                None => {
                    // Kubernetes reports a repeated unknown JSON field as unknown only; the
                    // YAML conversion reports the repeat by its line as well.
                    if !unknown.insert(key.clone()) && self.ctx.format == Format::Yaml {
                        self.ctx.duplicate(&key, line);
                    }
                    map.next_value::<IgnoredAny>()?;
                    self.ctx.unknown();
                }
            }
            self.ctx.segments.pop();
        }
        let mut out = Map::new();
        for ((name, node), slot) in o.properties.iter().zip(slots) {
            let value = match slot {
                Some(v) => Some(v),
                None if o.required.contains(name) => zero(self.schema, *node, 0),
                None => None,
            };
            if let Some(v) = value {
                out.insert(name.clone(), v);
            }
        }
        Ok(Value::Object(out))
    }

    fn map<'de, A>(mut self, values: NodeId, mut map: A) -> Result<Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        let mut out = Map::new();
        while let Some((key, line)) = next_key(self.ctx.format, &mut map)? {
            self.ctx.segments.push(Segment::Key(key.clone()));
            if out.contains_key(&key) {
                self.ctx.duplicate(&key, line);
            }
            let v = map.next_value_seed(self.child(values))?;
            let v = match v {
                Value::Null => zero(self.schema, values, 0).unwrap_or(Value::Null),
                v => v,
            };
            out.insert(key, v);
            self.ctx.segments.pop();
        }
        Ok(Value::Object(out))
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = Value;

    fn deserialize<D>(self, deserializer: D) -> Result<Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        match self.schema.node(self.node) {
            // Nothing below is checked: take the value as it is.
            Node::Any => Value::deserialize(deserializer),
            Node::Object(_) | Node::Map(_) | Node::Array(_) | Node::Scalar(_) => {
                deserializer.deserialize_any(self)
            }
        }
    }
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(self.scalar(Raw::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(self.scalar(Raw::Signed(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(self.scalar(Raw::Unsigned(v)))
    }

    fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
        Ok(self.scalar(Raw::Float(v as f64)))
    }

    fn visit_u128<E>(self, v: u128) -> Result<Value, E> {
        Ok(self.scalar(Raw::Float(v as f64)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(self.scalar(Raw::Float(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(self.scalar(Raw::Str(v)))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A>(mut self, mut seq: A) -> Result<Value, A::Error>
    where
        A: SeqAccess<'de>,
    {
        let Node::Array(items) = self.schema.node(self.node) else {
            self.ctx
                .misfit(self.schema, self.node, Misfit::Kind("array".to_owned()));
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(Value::Null);
        };
        let items = *items;
        let mut out = Vec::new();
        loop {
            self.ctx.segments.push(Segment::Index(out.len()));
            let item = seq.next_element_seed(self.child(items))?;
            self.ctx.segments.pop();
            match item {
                // Go decodes `null` in a list as the item type's zero value.
                Some(Value::Null) => {
                    out.push(zero(self.schema, items, 0).unwrap_or(Value::Null));
                }
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }

    fn visit_map<A>(self, mut map: A) -> Result<Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        match self.schema.node(self.node) {
            Node::Object(o) => self.object(o, map),
            Node::Map(values) => self.map(*values, map),
            Node::Scalar(_) | Node::Array(_) | Node::Any => {
                self.ctx
                    .misfit(self.schema, self.node, Misfit::Kind("object".to_owned()));
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Value::Null)
            }
        }
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;

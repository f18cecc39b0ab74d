//! The one pass over a JSON or YAML request body: a serde `DeserializeSeed` that follows the
//! kind's schema while it builds the value. It type-checks every scalar (the first mismatch
//! is kept, worded as Kubernetes' decoder words it, R-RES-031), drops and records unknown
//! fields and records duplicate ones (R-RES-188, R-RES-189), treats `null` as unset, and
//! writes each object's properties in schema order with the required ones at their zero
//! value: the value k8s-openapi's typed round trip produced. A custom resource's
//! unstructured nodes keep values, `null`s and field order as sent, unchecked.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::Deserialize;
use serde::Deserializer;
use serde::de::DeserializeSeed;
use serde::de::MapAccess;
use serde::de::SeqAccess;
use serde::de::Visitor;
use serde_json::Map;
use serde_json::Value;
use serde_json::value::RawValue;
use serde_saphyr::Spanned;

use super::Finding;
use super::Node;
use super::NodeId;
use super::Object;
use super::Scalar;
use super::Schema;
use super::excerpt::excerpt;
use super::excerpt::excerpt_of;
use super::scalar::Misfit;
use super::scalar::Raw;
use super::skip::Skip;
use super::skip::nested;
use super::surrogates::replace_lone_surrogates;
use super::yaml;
use crate::limits::MAX_NESTING_DEPTH;

/// The media type of a body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// `application/json`.
    #[default]
    Json,
    /// `application/yaml`: one document, decoded as if converted to JSON first.
    Yaml,
}

/// The body does not parse: JSON syntax, nesting past [`MAX_NESTING_DEPTH`], YAML syntax or
/// budgets, or more than one YAML document.
#[derive(Debug, thiserror::Error)]
pub enum SyntaxError {
    /// Not JSON.
    #[error(transparent)]
    Json(serde_json::Error),
    /// JSON nested deeper than [`MAX_NESTING_DEPTH`] (the parser stops at the first level
    /// past it).
    #[error(
        "exceeded the maximum nesting depth of {MAX_NESTING_DEPTH} at line {line} column {column}"
    )]
    TooDeep {
        /// The line of the first level too deep.
        line: usize,
        /// Its column.
        column: usize,
    },
    /// Not one YAML document within the parser's budgets; the text is `line N: <what>`.
    #[error("error converting YAML to JSON: yaml: {0}")]
    Yaml(String),
}

impl From<serde_json::Error> for SyntaxError {
    /// serde_json says `recursion limit exceeded` at its depth limit; that one is named.
    fn from(e: serde_json::Error) -> Self {
        if e.to_string().starts_with("recursion limit exceeded") {
            Self::TooDeep {
                line: e.line(),
                column: e.column(),
            }
        } else {
            Self::Json(e)
        }
    }
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
    /// The unknown and duplicate fields (at most [`MAX_FINDINGS`], each path an excerpt):
    /// JSON in body order; YAML duplicates first, then the unknown fields in key order (the
    /// order of the JSON Kubernetes converts YAML into).
    pub findings: Vec<Finding>,
    /// The first value of a wrong type, if any (the request then fails with it).
    pub type_error: Option<TypeError>,
}

/// Parses `body` as `format` in one pass, checking every value against `schema`. The work is
/// linear in the body: a finding's path is built only when the finding is kept, as an excerpt.
pub fn decode(schema: &Schema, body: &[u8], format: Format) -> Result<Decoded, SyntaxError> {
    decode_with(schema, body, format, true)
}

/// Parses a partial object (a server-side apply configuration) as [`decode`] does, but
/// leaves unset required fields unset: a configuration lists only the fields its manager
/// wants, and a required field it leaves out is not one it claims.
pub fn decode_partial(
    schema: &Schema,
    body: &[u8],
    format: Format,
) -> Result<Decoded, SyntaxError> {
    decode_with(schema, body, format, false)
}

fn decode_with(
    schema: &Schema,
    body: &[u8],
    format: Format,
    fill_required: bool,
) -> Result<Decoded, SyntaxError> {
    let mut ctx = Ctx {
        fill_required,
        format,
        segments: Vec::new(),
        findings: Vec::new(),
        kept: HashSet::new(),
        pruned: HashSet::new(),
        type_error: None,
    };
    let seed = Seed {
        schema,
        ctx: &mut ctx,
        node: schema.root(),
    };
    let value = match format {
        Format::Json => {
            let body = replace_lone_surrogates(body);
            let mut de = serde_json::Deserializer::from_slice(&body);
            let value = seed.deserialize(&mut de)?;
            de.end()?;
            value
        }
        Format::Yaml => {
            serde_saphyr::with_deserializer_from_slice_with_options(body, yaml::options(), |de| {
                seed.deserialize(de)
            })
            .map_err(|e| SyntaxError::Yaml(yaml::message(&e)))?
        }
    };
    if format == Format::Yaml {
        // Stable: duplicates keep their line order, unknown fields sort by path segment.
        ctx.findings
            .sort_by(|a, b| yaml_order(a).cmp(&yaml_order(b)));
    }
    if matches!(schema.node(schema.root()), Node::Unstructured(_)) {
        ctx.findings = unstructured::kubernetes_order(ctx.findings, &ctx.pruned);
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

/// The most findings kept, as Kubernetes' strict decoder keeps (sigs.k8s.io/json's
/// `saveStrictError` stops at 100), so a body cannot make the answer grow without bound.
pub const MAX_FINDINGS: usize = 100;

/// How deep a zero value of nested required objects is built (schemas may be recursive).
const MAX_ZERO_DEPTH: usize = 16;

/// One step of the path from the root to the current value. The key is moved in and out
/// (never copied), so a long key costs nothing per value below it.
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
    /// Whether unset required fields get their zero value (a whole object) or stay unset (a
    /// partial one).
    fill_required: bool,
    format: Format,
    segments: Vec<Segment<'s>>,
    findings: Vec<Finding>,
    /// The findings kept, to drop a repeat in O(1).
    kept: HashSet<Finding>,
    /// The unknown fields a custom resource's schema pruned (the others are `ObjectMeta`'s).
    pruned: HashSet<Finding>,
    type_error: Option<TypeError>,
}

impl Ctx<'_> {
    /// Whether [`MAX_FINDINGS`] are kept: nothing more is looked for.
    fn full(&self) -> bool {
        self.findings.len() >= MAX_FINDINGS
    }

    /// The path as Kubernetes prints it in findings (`spec.containers[0].name`), as an
    /// excerpt: O(depth + excerpt) however long its keys are.
    fn path(&self) -> String {
        let mut pieces: Vec<Cow<'_, str>> = Vec::with_capacity(2 * self.segments.len());
        let mut written = false;
        for s in &self.segments {
            match s {
                Segment::Field(name, _) | Segment::Key(name) => {
                    if written {
                        pieces.push(Cow::Borrowed("."));
                    }
                    pieces.push(Cow::Borrowed(name));
                    written |= !name.is_empty();
                }
                Segment::Index(i) => {
                    pieces.push(Cow::Owned(format!("[{i}]")));
                    written = true;
                }
            }
        }
        let pieces: Vec<&str> = pieces.iter().map(AsRef::as_ref).collect();
        excerpt_of(&pieces)
    }

    /// The key of the innermost step.
    fn key(&self) -> &str {
        match self.segments.last() {
            Some(Segment::Field(name, _) | Segment::Key(name)) => name,
            Some(Segment::Index(_)) | None => "",
        }
    }

    /// Leaves the innermost step, handing its key back.
    fn leave(&mut self) -> String {
        match self.segments.pop() {
            Some(Segment::Field(name, _) | Segment::Key(name)) => name,
            Some(Segment::Index(_)) | None => String::new(),
        }
    }

    /// Keeps the finding `make` builds, unless [`MAX_FINDINGS`] are kept (then it is not
    /// built) or it was kept before.
    fn report(&mut self, make: impl FnOnce(&Self) -> Finding) {
        if self.full() {
            return;
        }
        let finding = make(self);
        if self.kept.insert(finding.clone()) {
            self.findings.push(finding);
        }
    }

    /// The innermost field is not in the schema.
    fn unknown(&mut self) {
        self.report(|ctx| Finding::Unknown(ctx.path()));
    }

    /// The innermost key was seen before in the same object: by path in JSON, by line in
    /// YAML.
    fn duplicate(&mut self, line: u64) {
        self.report(|ctx| match ctx.format {
            Format::Json => Finding::Duplicate(ctx.path()),
            Format::Yaml => Finding::YamlDuplicate {
                line,
                key: excerpt(ctx.key()),
            },
        });
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
        Node::Any | Node::Unstructured(_) => None,
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

    /// A value that does not fit the node: the type error is kept, the value is `null`.
    fn misfit(self, misfit: Misfit) -> Value {
        self.ctx.misfit(self.schema, self.node, misfit);
        Value::Null
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
            Node::Any | Node::Unstructured(_) => Ok(match raw {
                Raw::Bool(b) => b.into(),
                Raw::Signed(v) => v.into(),
                Raw::Unsigned(v) => v.into(),
                Raw::Float(v) => v.into(),
                Raw::Str(s) => s.into(),
            }),
            Node::Object(_) | Node::Map(_) | Node::Array(_) => Err(Misfit::Kind(what.to_owned())),
        };
        accepted.unwrap_or_else(|m| self.misfit(m))
    }

    /// A JSON value at an integer node, from its text: Go's decoder reads a number literal
    /// with `strconv.ParseInt`, so `-0` is 0 while `-0.0` and `1e2` are not integers, and a
    /// type error quotes the literal (`number 1e2`).
    fn json_integer(self, scalar: Scalar, text: &str) -> Value {
        match text.as_bytes().first() {
            Some(b'"') => {
                // The parser has checked the literal: it unescapes.
                let s: String = serde_json::from_str(text).unwrap_or_default();
                self.scalar(Raw::Str(&s))
            }
            Some(b't') => self.scalar(Raw::Bool(true)),
            Some(b'f') => self.scalar(Raw::Bool(false)),
            Some(b'n') => Value::Null,
            Some(b'[') => self.misfit(Misfit::Kind("array".to_owned())),
            Some(b'{') => self.misfit(Misfit::Kind("object".to_owned())),
            _ => scalar
                .accept_integer_text(text)
                .unwrap_or_else(|m| self.misfit(m)),
        }
    }

    fn object<'de, A>(mut self, o: &'s Object, mut map: A) -> Result<Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        let format = self.ctx.format;
        let mut slots: Vec<Option<Value>> = vec![None; o.properties.len()];
        let mut seen = vec![false; o.properties.len()];
        let mut unknown = HashSet::new();
        while let Some((key, line)) = next_key(format, &mut map)? {
            let Some((i, node)) = o.property(&key) else {
                map.next_value_seed(Skip)?;
                if self.ctx.full() {
                    continue;
                }
                // Kubernetes reports a repeated unknown JSON field as unknown only; the YAML
                // conversion reports the repeat by its line as well.
                let repeated = unknown.contains(&key);
                self.ctx.segments.push(Segment::Field(key, o.struct_name()));
                match (repeated, format) {
                    (false, _) => self.ctx.unknown(),
                    (true, Format::Yaml) => self.ctx.duplicate(line),
                    (true, Format::Json) => {}
                }
                unknown.insert(self.ctx.leave());
                continue;
            };
            self.ctx.segments.push(Segment::Field(key, o.struct_name()));
            if seen[i] {
                self.ctx.duplicate(line);
            }
            seen[i] = true;
            let v = map.next_value_seed(self.child(node))?;
            slots[i] = (!v.is_null()).then_some(v);
            self.ctx.segments.pop();
        }
        let mut out = Map::new();
        for ((name, node), slot) in o.properties.iter().zip(slots) {
            let value = match slot {
                Some(v) => Some(v),
                None if self.ctx.fill_required && o.required.contains(name) => {
                    zero(self.schema, *node, 0)
                }
                None => None,
            };
            if let Some(v) = value {
                out.insert(name.clone(), v);
            }
        }
        Ok(Value::Object(out))
    }

    /// A free-form object (RawExtension, FieldsV1, JSON): kept as sent, nothing reported,
    /// a repeated key keeps its last value.
    fn free_form<'de, A>(mut self, mut map: A) -> Result<Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        let node = self.node;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self.child(node))?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }

    fn map<'de, A>(mut self, values: NodeId, mut map: A) -> Result<Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        let mut out = Map::new();
        while let Some((key, line)) = next_key(self.ctx.format, &mut map)? {
            let repeated = !self.ctx.full() && out.contains_key(&key);
            self.ctx.segments.push(Segment::Key(key));
            if repeated {
                self.ctx.duplicate(line);
            }
            let v = map.next_value_seed(self.child(values))?;
            let v = match v {
                Value::Null => zero(self.schema, values, 0).unwrap_or(Value::Null),
                v => v,
            };
            out.insert(self.ctx.leave(), v);
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
        nested(|| match self.schema.node(self.node) {
            // The literal's text decides (serde_json hands `-0` over as a float).
            &Node::Scalar(scalar @ (Scalar::Int32 | Scalar::Int64 | Scalar::IntOrString))
                if self.ctx.format == Format::Json =>
            {
                let raw = <&RawValue>::deserialize(deserializer)?;
                Ok(self.json_integer(scalar, raw.get()))
            }
            _ => deserializer.deserialize_any(self),
        })
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
        let node = self.node;
        let items = match self.schema.node(node) {
            Node::Array(items) => *items,
            Node::Unstructured(u) => return self.unstructured_list(u.items, seq),
            // Free-form: kept as sent, `null` included.
            Node::Any => {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element_seed(self.child(node))? {
                    out.push(item);
                }
                return Ok(Value::Array(out));
            }
            Node::Object(_) | Node::Map(_) | Node::Scalar(_) => {
                while seq.next_element_seed(Skip)?.is_some() {}
                return Ok(self.misfit(Misfit::Kind("array".to_owned())));
            }
        };
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
            Node::Any => self.free_form(map),
            Node::Unstructured(u) => self.unstructured(u, map),
            Node::Scalar(_) | Node::Array(_) => {
                while map.next_entry_seed(Skip, Skip)?.is_some() {}
                Ok(self.misfit(Misfit::Kind("object".to_owned())))
            }
        }
    }
}

#[path = "decode_unstructured.rs"]
mod unstructured;

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;

//! The one pass over a JSON body: a serde `DeserializeSeed` that follows the kind's schema
//! while it builds the value, dropping and recording unknown fields and recording duplicate
//! ones (R-RES-188, R-RES-189). Type mismatches are not judged here: the value is built as
//! sent and the typed decode refuses it (R-RES-190).

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

use super::Finding;
use super::Node;
use super::NodeId;
use super::Schema;

/// The body is not JSON (syntax, or nesting deeper than the parser allows).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct WalkError(#[from] serde_json::Error);

/// A walked body: the value without its unknown fields, and what was found, in body order.
#[derive(Debug, Clone, PartialEq)]
pub struct Walked {
    /// The body's value; unknown fields are left out, a duplicate keeps its last value.
    pub value: Value,
    /// The unknown and duplicate fields.
    pub findings: Vec<Finding>,
}

/// Parses `body` as JSON in one pass, checking every object against `schema`.
pub fn walk(schema: &Schema, body: &[u8]) -> Result<Walked, WalkError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let mut ctx = Ctx::default();
    let value = Seed {
        schema,
        ctx: &mut ctx,
        node: schema.root(),
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(Walked {
        value,
        findings: ctx.findings,
    })
}

/// The most findings kept, as Kubernetes' strict decoder keeps (a body cannot make the
/// answer grow without bound).
const MAX_FINDINGS: usize = 100;

/// What the walk carries down: the current path and the findings so far.
#[derive(Default)]
struct Ctx {
    path: String,
    findings: Vec<Finding>,
}

impl Ctx {
    /// Records a finding at the current path, unless the same one is recorded already or
    /// [`MAX_FINDINGS`] are (Kubernetes dedupes and caps its strict errors the same way).
    fn record(&mut self, finding: fn(String) -> Finding) {
        let found = finding(self.path.clone());
        if self.findings.len() < MAX_FINDINGS && !self.findings.contains(&found) {
            self.findings.push(found);
        }
    }

    /// Appends a field or map key to the path, returning the length to truncate back to.
    fn enter_field(&mut self, name: &str) -> usize {
        let mark = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(name);
        mark
    }

    /// Appends a list index (`[3]`) to the path, returning the length to truncate back to.
    fn enter_index(&mut self, index: usize) -> usize {
        let mark = self.path.len();
        self.path.push_str(&format!("[{index}]"));
        mark
    }
}

/// How the value under one key of an object is walked.
enum Child {
    /// Against this schema node.
    Checked(NodeId),
    /// Not at all: the key is not in the schema, so the value is skipped.
    Unknown,
    /// Taken as sent: the schema does not expect an object here.
    Unchecked,
}

/// The walk of one value at one schema node.
struct Seed<'s, 'c> {
    schema: &'s Schema,
    ctx: &'c mut Ctx,
    node: NodeId,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = Value;

    fn deserialize<D>(self, deserializer: D) -> Result<Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        match self.schema.node(self.node) {
            // Nothing below is checked: take the value as it is.
            Node::Scalar | Node::Any => Value::deserialize(deserializer),
            Node::Object(_) | Node::Map(_) | Node::Array(_) => deserializer.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A>(self, mut seq: A) -> Result<Value, A::Error>
    where
        A: SeqAccess<'de>,
    {
        let mut out = Vec::new();
        let Node::Array(items) = self.schema.node(self.node) else {
            // An array where the schema wants something else: the typed decode refuses it.
            while let Some(v) = seq.next_element::<Value>()? {
                out.push(v);
            }
            return Ok(Value::Array(out));
        };
        loop {
            let mark = self.ctx.enter_index(out.len());
            let item = seq.next_element_seed(Seed {
                schema: self.schema,
                ctx: &mut *self.ctx,
                node: *items,
            })?;
            self.ctx.path.truncate(mark);
            match item {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }

    fn visit_map<A>(self, mut map: A) -> Result<Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        let node = self.schema.node(self.node);
        let mut out = Map::new();
        // Unknown keys are not kept in `out`, so their repeats are found here.
        let mut unknown = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let mark = self.ctx.enter_field(&key);
            if out.contains_key(&key) || unknown.contains(&key) {
                self.ctx.record(Finding::Duplicate);
            }
            let child = match node {
                Node::Object(props) => props
                    .get(&key)
                    .map_or(Child::Unknown, |c| Child::Checked(*c)),
                Node::Map(values) => Child::Checked(*values),
                // An object where the schema wants something else: kept as sent, unchecked.
                Node::Array(_) | Node::Scalar | Node::Any => Child::Unchecked,
            };
            match child {
                Child::Checked(node) => {
                    let v = map.next_value_seed(Seed {
                        schema: self.schema,
                        ctx: &mut *self.ctx,
                        node,
                    })?;
                    out.insert(key, v);
                }
                Child::Unknown => {
                    map.next_value::<IgnoredAny>()?;
                    self.ctx.record(Finding::Unknown);
                    unknown.insert(key);
                }
                Child::Unchecked => {
                    let v = map.next_value::<Value>()?;
                    out.insert(key, v);
                }
            }
            self.ctx.path.truncate(mark);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;

//! The decoder's walk through a custom resource's unstructured nodes: values kept as sent,
//! `null`s and field order included, fields no node claims dropped and reported.

use std::collections::HashSet;

use serde::de::MapAccess;
use serde::de::SeqAccess;
use serde_json::Map;
use serde_json::Value;

use super::Seed;
use super::Segment;
use super::next_key;
use crate::schema::NodeId;
use crate::schema::Unstructured;
use crate::schema::skip::Skip;

impl<'s> Seed<'s, '_> {
    /// An object in a custom resource: fields in the order sent, `null` kept, a repeated
    /// field reported and keeping its last value in its first place, a field no node claims
    /// dropped and reported (once).
    pub(super) fn unstructured<'de, A>(
        mut self,
        u: &'s Unstructured,
        mut map: A,
    ) -> Result<Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        let mut out = Map::new();
        let mut dropped = HashSet::new();
        while let Some((key, line)) = next_key(self.ctx.format, &mut map)? {
            let node = u.field(&key);
            let repeated = match node {
                Some(_) => out.contains_key(&key),
                None => dropped.contains(&key),
            };
            self.ctx.segments.push(Segment::Key(key));
            if repeated {
                self.ctx.duplicate(line);
            }
            match node {
                Some(node) => {
                    let v = map.next_value_seed(self.child(node))?;
                    out.insert(self.ctx.leave(), v);
                }
                None => {
                    map.next_value_seed(Skip)?;
                    if !repeated {
                        self.ctx.unknown();
                    }
                    dropped.insert(self.ctx.leave());
                }
            }
        }
        Ok(Value::Object(out))
    }

    /// A list in a custom resource: kept as sent, `null` items included.
    pub(super) fn unstructured_list<'de, A>(
        mut self,
        items: NodeId,
        mut seq: A,
    ) -> Result<Value, A::Error>
    where
        A: SeqAccess<'de>,
    {
        let mut out = Vec::new();
        loop {
            self.ctx.segments.push(Segment::Index(out.len()));
            let item = seq.next_element_seed(self.child(items))?;
            self.ctx.segments.pop();
            match item {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }
}

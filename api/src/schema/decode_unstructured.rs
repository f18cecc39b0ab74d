//! The decoder's walk through a custom resource's unstructured nodes: values kept as sent,
//! `null`s and field order included, fields no node claims dropped and reported.

use std::collections::HashSet;

use serde::de::MapAccess;
use serde::de::SeqAccess;
use serde_json::Map;
use serde_json::Value;

use super::Ctx;
use super::Seed;
use super::Segment;
use super::next_key;
use crate::schema::Finding;
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
                        self.ctx.pruned_unknown();
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

impl Ctx<'_> {
    /// The innermost field is unknown to a custom resource's schema (pruned).
    fn pruned_unknown(&mut self) {
        let before = self.findings.len();
        self.unknown();
        if let Some(f) = self.findings.get(before) {
            self.pruned.insert(f.clone());
        }
    }
}

/// A custom resource's findings in the order Kubernetes lists them: the decoder's
/// duplicates, then the root `metadata`'s unknown fields, then the pruned fields sorted,
/// then embedded resources' `metadata`'s unknown fields sorted.
pub(super) fn kubernetes_order(findings: Vec<Finding>, pruned: &HashSet<Finding>) -> Vec<Finding> {
    let mut groups: [Vec<Finding>; 4] = Default::default();
    for f in findings {
        let group = match &f {
            Finding::Unknown(_) if pruned.contains(&f) => 2,
            Finding::Unknown(path) if path.starts_with("metadata.") => 1,
            Finding::Unknown(_) => 3,
            Finding::Duplicate(_) | Finding::YamlDuplicate { .. } => 0,
        };
        if let Some(g) = groups.get_mut(group) {
            g.push(f);
        }
    }
    let path = |f: &Finding| match f {
        Finding::Unknown(p) | Finding::Duplicate(p) => p.clone(),
        Finding::YamlDuplicate { .. } => String::new(),
    };
    for g in groups.iter_mut().skip(2) {
        g.sort_by_cached_key(path);
    }
    groups.into_iter().flatten().collect()
}

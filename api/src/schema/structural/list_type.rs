//! The invariants of `x-kubernetes-list-type` (apiextensions' `listtype`): a `set` holds no
//! value twice and a `map` holds objects no two of which share their key fields; each repeat
//! is reported once, at the index of its second occurrence.

use std::collections::HashMap;

use serde_json::Map;
use serde_json::Value;

use super::node::Id;
use super::node::ListType;
use super::node::Node;
use super::validate::MAX_ERRORS;
use crate::limits::MAX_NESTING_DEPTH;
use crate::validation::FieldError;

/// `v`'s text with object keys sorted (Go's JSON encoding of a map), the identity two
/// values share when they are equal.
pub(super) fn canonical(v: &Value, depth: usize) -> String {
    match v {
        Value::Object(map) if depth < MAX_NESTING_DEPTH => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let parts: Vec<String> = entries
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}:{}",
                        Value::String((*k).clone()),
                        canonical(v, depth + 1)
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(list) if depth < MAX_NESTING_DEPTH => {
            let parts: Vec<String> = list.iter().map(|v| canonical(v, depth + 1)).collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// The indices of the second occurrence of each repeated value of `values`.
fn repeats<'v>(values: impl Iterator<Item = &'v Value>) -> Vec<usize> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut found = Vec::new();
    for (i, v) in values.enumerate() {
        let times = seen.entry(canonical(v, 0)).or_default();
        *times += 1;
        if *times == 2 {
            found.push(i);
        }
    }
    found
}

/// Walks a custom resource for list-type violations.
pub(super) struct ListTypes<'a> {
    /// The structural nodes.
    pub nodes: &'a [Node],
}

impl ListTypes<'_> {
    /// The violations in object `map` at node `id`, below `path`.
    pub fn object(
        &self,
        id: Id,
        map: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Vec<FieldError> {
        let Some(node) = self.nodes.get(id) else {
            return Vec::new();
        };
        let mut errs = Vec::new();
        for (k, v) in map {
            if errs.len() >= MAX_ERRORS {
                break;
            }
            if let Some(&prop) = node.properties.get(k) {
                let child = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                errs.extend(self.value(prop, v, &child, depth + 1));
            } else if let Some(values) = node.additional {
                errs.extend(self.value(values, v, &format!("{path}[{k}]"), depth + 1));
            }
        }
        errs
    }

    fn value(&self, id: Id, v: &Value, path: &str, depth: usize) -> Vec<FieldError> {
        if depth > MAX_NESTING_DEPTH {
            return Vec::new();
        }
        match v {
            Value::Object(map) => self.object(id, map, path, depth),
            Value::Array(list) => self.list(id, list, path, depth),
            _ => Vec::new(),
        }
    }

    fn list(&self, id: Id, list: &[Value], path: &str, depth: usize) -> Vec<FieldError> {
        let Some(node) = self.nodes.get(id) else {
            return Vec::new();
        };
        let mut errs = Vec::new();
        match &node.list_type {
            ListType::Atomic => {}
            ListType::Set => {
                for i in repeats(list.iter()).into_iter().take(MAX_ERRORS) {
                    errs.push(FieldError::duplicate(
                        format!("{path}[{i}]"),
                        list[i].clone(),
                    ));
                }
            }
            ListType::Map(keys) => errs.extend(map_list(keys, list, path)),
        }
        if let Some(items) = node.items {
            for (i, item) in list.iter().enumerate() {
                if errs.len() >= MAX_ERRORS {
                    break;
                }
                errs.extend(self.value(items, item, &format!("{path}[{i}]"), depth + 1));
            }
        }
        errs
    }
}

/// The violations of a list-type map keyed by `keys`.
fn map_list(keys: &[String], list: &[Value], path: &str) -> Vec<FieldError> {
    if let Some((i, item)) = list
        .iter()
        .enumerate()
        .find(|(_, x)| !x.is_null() && !x.is_object())
    {
        return vec![FieldError::invalid(
            format!("{path}[{i}]"),
            item.clone(),
            "must be an object for an array of list-type map",
        )];
    }
    let key_values: Vec<Value> = list
        .iter()
        .map(|x| {
            let key: Map<String, Value> = keys
                .iter()
                .filter_map(|k| Some((k.clone(), x.get(k)?.clone())))
                .collect();
            Value::Object(key)
        })
        .collect();
    repeats(key_values.iter())
        .into_iter()
        .take(MAX_ERRORS)
        .map(|i| FieldError::duplicate(format!("{path}[{i}]"), key_values[i].clone()))
        .collect()
}

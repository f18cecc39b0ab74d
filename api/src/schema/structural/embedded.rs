//! The rules of embedded resources (`x-kubernetes-embedded-resource`, apiextensions'
//! `objectmeta.Validate` below the root): `apiVersion` and `kind` set, strings, well-formed;
//! `metadata` an `ObjectMeta` that passes `ValidateObjectMeta` (any name rule, no namespace
//! requirement).

use serde_json::Map;
use serde_json::Value;

use super::node::Id;
use super::node::Node;
use super::validate::MAX_ERRORS;
use crate::limits::MAX_NESTING_DEPTH;
use crate::schema::Format;
use crate::schema::Schema;
use crate::schema::decode;
use crate::validation::FieldError;
use crate::validation::NameRule;
use crate::validation::validate_dns1035_label;
use crate::validation::validate_object_meta;

/// Walks a custom resource for its embedded resources.
pub(super) struct Embedded<'a> {
    /// The structural nodes.
    pub nodes: &'a [Node],
    /// The compiled `ObjectMeta` schema.
    pub object_meta: &'a Schema,
}

/// `path.name`, or `name` at the root.
fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

impl Embedded<'_> {
    /// The problems of the embedded resources in `v` at node `id`, below `path`.
    pub fn check(&self, id: Id, v: &Value, path: &str, depth: usize) -> Vec<FieldError> {
        let Some(node) = self.nodes.get(id) else {
            return Vec::new();
        };
        if depth > MAX_NESTING_DEPTH {
            return Vec::new();
        }
        let mut errs = Vec::new();
        match v {
            Value::Object(map) => {
                if node.embedded && depth > 0 {
                    errs.extend(self.resource(map, path));
                }
                for (k, child_value) in map {
                    if errs.len() >= MAX_ERRORS {
                        break;
                    }
                    if let Some(&prop) = node.properties.get(k) {
                        errs.extend(self.check(prop, child_value, &child(path, k), depth + 1));
                    } else if let Some(values) = node.additional {
                        errs.extend(self.check(
                            values,
                            child_value,
                            &format!("{path}[{k}]"),
                            depth + 1,
                        ));
                    }
                }
            }
            Value::Array(list) => {
                if let Some(items) = node.items {
                    for (i, item) in list.iter().enumerate() {
                        if errs.len() >= MAX_ERRORS {
                            break;
                        }
                        errs.extend(self.check(items, item, &format!("{path}[{i}]"), depth + 1));
                    }
                }
            }
            _ => {}
        }
        errs
    }

    /// The type and object metadata of one embedded resource at `path`.
    fn resource(&self, map: &Map<String, Value>, path: &str) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for key in ["apiVersion", "kind"] {
            if !map.contains_key(key) {
                errs.push(FieldError::required(child(path, key), ""));
            }
        }
        for (k, v) in map {
            match k.as_str() {
                "apiVersion" => errs.extend(api_version(v, &child(path, k))),
                "kind" => errs.extend(kind(v, &child(path, k))),
                "metadata" => errs.extend(self.metadata(v, &child(path, k))),
                _ => {}
            }
        }
        errs
    }

    fn metadata(&self, v: &Value, path: &str) -> Vec<FieldError> {
        let decoded = serde_json::to_vec(v)
            .ok()
            .and_then(|bytes| decode(self.object_meta, &bytes, Format::Json).ok());
        let meta = match decoded {
            Some(d) => match d.type_error {
                None => d.value,
                Some(e) => return vec![FieldError::invalid(path, v.clone(), e.0)],
            },
            None => return vec![FieldError::invalid(path, v.clone(), "invalid metadata")],
        };
        let mut meta = match meta {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        if meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
        {
            meta.insert("name".to_owned(), Value::from("fakename"));
        }
        let namespaced = meta
            .get("namespace")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        let obj = Value::Object(Map::from_iter([(
            "metadata".to_owned(),
            Value::Object(meta),
        )]));
        validate_object_meta(&obj, NameRule::PathSegment, namespaced, None)
            .into_iter()
            .map(|mut e| {
                let rest = e.field.strip_prefix("metadata").unwrap_or(&e.field);
                e.field = format!("{path}{rest}");
                e
            })
            .collect()
    }
}

/// `apiVersion`: a non-empty string that parses as `group/version` or `version`.
fn api_version(v: &Value, path: &str) -> Option<FieldError> {
    let Value::String(s) = v else {
        return Some(FieldError::invalid(path, v.clone(), "must be a string"));
    };
    if s.is_empty() {
        return Some(FieldError::invalid(path, s.as_str(), "must not be empty"));
    }
    let parts: Vec<&str> = s.split('/').collect();
    match parts.as_slice() {
        [_] | [_, _] => None,
        _ => Some(FieldError::invalid(
            path,
            s.as_str(),
            format!("unexpected GroupVersion string: {s}"),
        )),
    }
}

/// `kind`: a non-empty string that, lower-cased, is an RFC 1035 label.
fn kind(v: &Value, path: &str) -> Option<FieldError> {
    let Value::String(s) = v else {
        return Some(FieldError::invalid(path, v.clone(), "must be a string"));
    };
    if s.is_empty() {
        return Some(FieldError::invalid(path, s.as_str(), "must not be empty"));
    }
    let msgs = validate_dns1035_label(&s.to_lowercase());
    (!msgs.is_empty()).then(|| {
        FieldError::invalid(
            path,
            s.as_str(),
            format!(
                "may have mixed case, but should otherwise match: {}",
                msgs.join(",")
            ),
        )
    })
}

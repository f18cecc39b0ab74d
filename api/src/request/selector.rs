//! Label and field selectors (`labelSelector`, `fieldSelector`; spec 000 R-RES-110), parsed
//! with Kubernetes' syntax and evaluated against an object's JSON.
//!
//! Labels: `k`, `!k`, `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, comma-separated
//! (all must hold). Fields: `metadata.name` and `metadata.namespace` with `=`, `==`, `!=`,
//! the fields every kind supports; any other field is rejected as Kubernetes rejects a field
//! label the kind does not support.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::error::ApiError;

/// One label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelRequirement {
    Exists(String),
    NotExists(String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
}

/// A parsed label selector (empty: matches everything).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<LabelRequirement>,
}

/// A parsed field selector (empty: matches everything).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// (field path as JSON pointer, value, must equal)
    requirements: Vec<(String, String, bool)>,
}

/// The `labelSelector` and `fieldSelector` of a list, watch or deletecollection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selectors {
    /// The label selector.
    pub labels: LabelSelector,
    /// The field selector.
    pub fields: FieldSelector,
}

impl Selectors {
    /// The selectors of `query`; 400 when one is malformed.
    pub fn from_query(query: &super::QueryParams) -> Result<Self, ApiError> {
        Ok(Self {
            labels: LabelSelector::parse(query.get("labelSelector").unwrap_or_default())?,
            fields: FieldSelector::parse(query.get("fieldSelector").unwrap_or_default())?,
        })
    }

    /// Whether `obj` is selected.
    pub fn matches(&self, obj: &Value) -> bool {
        self.labels.matches(obj) && self.fields.matches(obj)
    }

    /// Whether everything is selected (lists then need not look inside objects).
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }
}

/// Splits at commas outside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn bad(selector: &str, why: &str) -> ApiError {
    ApiError::BadRequest(format!(
        "unable to parse requirement: {why} in selector {selector:?}"
    ))
}

fn set_of(selector: &str, values: &str) -> Result<BTreeSet<String>, ApiError> {
    let inner = values
        .trim()
        .strip_prefix('(')
        .and_then(|v| v.strip_suffix(')'))
        .ok_or_else(|| bad(selector, "expected a parenthesized value list"))?;
    Ok(inner.split(',').map(|v| v.trim().to_owned()).collect())
}

fn valid_key(key: &str) -> bool {
    !key.is_empty() && !key.contains(|c: char| c.is_whitespace() || "=!(),".contains(c))
}

impl LabelSelector {
    /// Parses a `labelSelector` value; 400 when it is malformed.
    pub fn parse(selector: &str) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        if selector.trim().is_empty() {
            return Ok(Self { requirements });
        }
        for part in split_top(selector) {
            let part = part.trim();
            let req = if let Some((k, v)) = part.split_once("!=") {
                LabelRequirement::NotIn(k.trim().to_owned(), [v.trim().to_owned()].into())
            } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                LabelRequirement::In(k.trim().to_owned(), [v.trim().to_owned()].into())
            } else if let Some((k, v)) = part.split_once(" notin ") {
                LabelRequirement::NotIn(k.trim().to_owned(), set_of(selector, v)?)
            } else if let Some((k, v)) = part.split_once(" in ") {
                LabelRequirement::In(k.trim().to_owned(), set_of(selector, v)?)
            } else if let Some(k) = part.strip_prefix('!') {
                LabelRequirement::NotExists(k.trim().to_owned())
            } else {
                LabelRequirement::Exists(part.to_owned())
            };
            let key = match &req {
                LabelRequirement::Exists(k)
                | LabelRequirement::NotExists(k)
                | LabelRequirement::In(k, _)
                | LabelRequirement::NotIn(k, _) => k,
            };
            if !valid_key(key) {
                return Err(bad(selector, "invalid label key"));
            }
            requirements.push(req);
        }
        Ok(Self { requirements })
    }

    /// Whether `obj`'s `metadata.labels` satisfy every requirement.
    pub fn matches(&self, obj: &Value) -> bool {
        let label = |k: &str| {
            obj.pointer("/metadata/labels")
                .and_then(|l| l.get(k))
                .and_then(Value::as_str)
        };
        self.requirements.iter().all(|r| match r {
            LabelRequirement::Exists(k) => label(k).is_some(),
            LabelRequirement::NotExists(k) => label(k).is_none(),
            LabelRequirement::In(k, vs) => label(k).is_some_and(|v| vs.contains(v)),
            LabelRequirement::NotIn(k, vs) => label(k).is_none_or(|v| !vs.contains(v)),
        })
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

impl FieldSelector {
    /// Parses a `fieldSelector` value; 400 for a malformed selector or a field the kinds
    /// served do not support.
    pub fn parse(selector: &str) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        if selector.trim().is_empty() {
            return Ok(Self { requirements });
        }
        for part in selector.split(',') {
            let (field, value, equal) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                (f, v, true)
            } else {
                return Err(ApiError::BadRequest(format!(
                    "invalid selector: {selector:?}; can't understand {part:?}"
                )));
            };
            let pointer = match field.trim() {
                "metadata.name" => "/metadata/name",
                "metadata.namespace" => "/metadata/namespace",
                other => {
                    return Err(ApiError::BadRequest(format!(
                        "field label not supported: {other}"
                    )));
                }
            };
            requirements.push((pointer.to_owned(), value.trim().to_owned(), equal));
        }
        Ok(Self { requirements })
    }

    /// Whether `obj` satisfies every requirement (a missing field reads as empty).
    pub fn matches(&self, obj: &Value) -> bool {
        self.requirements.iter().all(|(pointer, value, equal)| {
            let actual = obj
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default();
            (actual == value) == *equal
        })
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(labels: Value) -> Value {
        json!({"metadata":{"name":"n","namespace":"ns","labels":labels}})
    }

    // R-RES-110
    #[test]
    fn label_selectors() {
        let o = obj(json!({"app":"web","tier":"front"}));
        let yes = [
            "",
            "app",
            "app=web",
            "app==web",
            "app!=db",
            "!db",
            "app in (web,db)",
            "tier notin (back)",
            "app=web,tier=front",
            "missing!=x",
            "x notin (a)",
        ];
        for s in yes {
            assert!(LabelSelector::parse(s).expect(s).matches(&o), "{s}");
        }
        let no = [
            "db",
            "app=db",
            "!app",
            "app in (db)",
            "app notin (web, db)",
            "app=web,tier=back",
        ];
        for s in no {
            assert!(!LabelSelector::parse(s).expect(s).matches(&o), "{s}");
        }
        assert!(LabelSelector::parse("app in web").is_err());
        assert!(LabelSelector::parse("=x").is_err());
        assert!(LabelSelector::parse("a,,b").is_err());
        assert!(LabelSelector::parse("").expect("empty").is_empty());
    }

    // R-RES-110
    #[test]
    fn field_selectors() {
        let o = obj(json!({}));
        for s in [
            "metadata.name=n",
            "metadata.name==n",
            "metadata.namespace!=other",
            "metadata.name=n,metadata.namespace=ns",
        ] {
            assert!(FieldSelector::parse(s).expect(s).matches(&o), "{s}");
        }
        assert!(
            !FieldSelector::parse("metadata.name=m")
                .expect("parses")
                .matches(&o)
        );
        assert!(FieldSelector::parse("spec.nodeName=x").is_err());
        assert!(FieldSelector::parse("metadata.name").is_err());
    }
}

//! The pair of selectors a list, watch or deletecollection takes (`labelSelector`,
//! `fieldSelector`; spec 000 R-RES-110), parsed with Kubernetes' syntax into a
//! [`LabelSelector`] (matched in `crate::labels`) and a [`FieldSelector`], and evaluated
//! against an object's JSON.
//!
//! Labels: `k`, `!k`, `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, comma-separated
//! (all must hold). Keys are qualified names (`[prefix/]name`) and values label values, checked
//! as Kubernetes' `NewRequirement` checks them. Fields: see [`FieldSelector`].

use std::collections::BTreeSet;

use serde_json::Value;

use super::FieldLabels;
use super::FieldSelector;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::labels::LabelRequirement;
use crate::labels::LabelSelector;
use crate::validation::validate_label_value;
use crate::validation::validate_qualified_name;

/// The `labelSelector` and `fieldSelector` of a list, watch or deletecollection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selectors {
    /// The label selector.
    pub labels: LabelSelector,
    /// The field selector.
    pub fields: FieldSelector,
}

impl Selectors {
    /// The selectors of `query`; 400 when one is malformed. Field names are checked against
    /// the kind by [`Selectors::for_kind`].
    pub fn from_query(query: &super::QueryParams) -> Result<Self, ApiError> {
        Ok(Self {
            labels: LabelSelector::parse(query.get("labelSelector").unwrap_or_default())?,
            fields: FieldSelector::parse(query.get("fieldSelector").unwrap_or_default())?,
        })
    }

    /// The selectors for a kind whose selectable fields are `labels`: 400 for a field the
    /// kind does not support.
    pub fn for_kind(self, labels: FieldLabels) -> Result<Self, ApiError> {
        Ok(Self {
            labels: self.labels,
            fields: self.fields.for_kind(labels)?,
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

    /// Whether the object named `name` in `namespace` (empty: cluster scoped) is selected,
    /// when that alone decides it ([`FieldSelector::matches_identity`]); `None` when the
    /// object must be read.
    pub fn matches_identity(&self, namespace: &str, name: &str) -> Option<bool> {
        match self.fields.matches_identity(namespace, name) {
            Some(true) if !self.labels.is_empty() => None,
            decided => decided,
        }
    }
}

/// Splits at commas outside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth = depth.saturating_add(1),
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i.saturating_add(1);
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn syntax(found: &str, expected: &str) -> ApiError {
    ApiError::BadRequest(format!("found '{}', expected: {expected}", excerpt(found)))
}

fn invalid(what: &str, value: &str, why: &str) -> ApiError {
    ApiError::BadRequest(format!(
        "unable to parse requirement: {}: Invalid value: {:?}: {why}",
        excerpt(what),
        excerpt(value)
    ))
}

/// A label key must be a qualified name: `name` or `prefix/name`, the prefix a DNS subdomain.
fn check_key(key: &str) -> Result<(), ApiError> {
    if key.is_empty() {
        return Err(syntax("", "identifier"));
    }
    match validate_qualified_name(key).as_slice() {
        [] => Ok(()),
        errs => Err(invalid("key", key, &errs.join("; "))),
    }
}

fn check_value(key: &str, value: &str) -> Result<(), ApiError> {
    match validate_label_value(value).as_slice() {
        [] => Ok(()),
        errs => Err(invalid(
            &format!("values[0][{key}]"),
            value,
            &errs.join("; "),
        )),
    }
}

/// The values of `(a,b)`.
fn set_of(values: &str) -> Result<BTreeSet<String>, ApiError> {
    let values = values.trim();
    let inner = values
        .strip_prefix('(')
        .ok_or_else(|| syntax(values, "'('"))?
        .strip_suffix(')')
        .ok_or_else(|| syntax(values, "')'"))?;
    Ok(inner.split(',').map(|v| v.trim().to_owned()).collect())
}

/// One comma-separated term of a label selector.
fn requirement(part: &str) -> Result<LabelRequirement, ApiError> {
    let part = part.trim();
    let req = if let Some((k, v)) = part.split_once("!=") {
        LabelRequirement::NotIn(k.trim().to_owned(), [v.trim().to_owned()].into())
    } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
        LabelRequirement::In(k.trim().to_owned(), [v.trim().to_owned()].into())
    } else if let Some((k, v)) = part.split_once(" notin ") {
        LabelRequirement::NotIn(k.trim().to_owned(), set_of(v)?)
    } else if let Some((k, v)) = part.split_once(" in ") {
        LabelRequirement::In(k.trim().to_owned(), set_of(v)?)
    } else if let Some(k) = part.strip_prefix('!') {
        LabelRequirement::NotExists(k.trim().to_owned())
    } else {
        LabelRequirement::Exists(part.to_owned())
    };
    let (key, values) = match &req {
        LabelRequirement::Exists(k) | LabelRequirement::NotExists(k) => (k, None),
        LabelRequirement::In(k, vs) | LabelRequirement::NotIn(k, vs) => (k, Some(vs)),
    };
    check_key(key)?;
    for v in values.into_iter().flatten() {
        check_value(key, v)?;
    }
    Ok(req)
}

impl LabelSelector {
    /// Parses a `labelSelector` value; 400 when it is malformed or a key or value is not
    /// valid.
    pub fn parse(selector: &str) -> Result<Self, ApiError> {
        if selector.trim().is_empty() {
            return Ok(Self::default());
        }
        let requirements = split_top(selector)
            .into_iter()
            .map(requirement)
            .collect::<Result<_, _>>()?;
        Ok(Self::from_requirements(requirements))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(labels: Value) -> Value {
        json!({"metadata":{"name":"n","namespace":"ns","labels":labels}})
    }

    fn message(selector: &str) -> String {
        match LabelSelector::parse(selector) {
            Err(ApiError::BadRequest(m)) => m,
            other => panic!("{selector}: expected 400, got {other:?}"),
        }
    }

    // R-RES-110
    #[test]
    fn label_selectors() {
        let o = obj(json!({"app":"web","tier":"front","example.com/team":"a"}));
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
            "example.com/team=a",
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
        assert!(LabelSelector::parse("").expect("empty").is_empty());
    }

    // R-RES-110: malformed selectors are 400s that say what is wrong, as Kubernetes' do.
    #[test]
    fn malformed_label_selectors() {
        assert_eq!(message("app in web"), "found 'web', expected: '('");
        assert_eq!(message("app in (web"), "found '(web', expected: ')'");
        assert_eq!(message("=x"), "found '', expected: identifier");
        assert_eq!(message("a,,b"), "found '', expected: identifier");
        assert!(message("bad key=x").contains(r#"Invalid value: "bad key": name part must"#));
        assert!(message("-a=x").contains("name part must consist of alphanumeric"));
        assert!(message("Not_A.Domain/a=x").contains("prefix part"));
        assert!(message(&format!("{}=x", "k".repeat(64))).contains("no more than 63"));
        assert!(message("a=b c").contains(r#"values[0][a]: Invalid value: "b c""#));
        assert!(message("a in (x,-y)").contains("a valid label must be"));
    }
}

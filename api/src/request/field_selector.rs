//! Field selectors (`fieldSelector`; spec 000 R-RES-110): `field=value`, `field==value` and
//! `field!=value` terms, comma-separated (all must hold), with Kubernetes' escapes (`\,`,
//! `\=`, `\\`) in values.
//!
//! Which fields may be named depends on the kind, as Kubernetes' field label conversion
//! decides it: kinds without their own conversion take `metadata.name` and
//! `metadata.namespace`; Namespace, Secret and Event list their own ([`FieldLabels`]). A
//! selector is parsed without the kind first (the query is decoded once for every verb), then
//! [`FieldSelector::for_kind`] rejects the fields the kind does not support.

use serde_json::Value;

use crate::error::ApiError;
use crate::error::excerpt;

/// A field a kind's field selectors may name, and where its value is in the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectableField {
    /// The field as written in `fieldSelector` (`status.phase`).
    pub label: &'static str,
    /// JSON pointers to the value; the first one holding a non-empty string counts (Event's
    /// `source` is `source.component`, else `reportingComponent`).
    pub pointers: &'static [&'static str],
}

/// `metadata.name`, which every kind supports.
pub const METADATA_NAME: SelectableField = SelectableField {
    label: "metadata.name",
    pointers: &["/metadata/name"],
};

/// `metadata.namespace`, which every kind but Namespace supports.
pub const METADATA_NAMESPACE: SelectableField = SelectableField {
    label: "metadata.namespace",
    pointers: &["/metadata/namespace"],
};

/// The fields a kind's field selectors may name (Kubernetes' field label conversion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldLabels {
    /// `metadata.name` and `metadata.namespace`: Kubernetes'
    /// `DefaultMetaV1FieldSelectorConversion`, for kinds without a conversion of their own.
    Metadata,
    /// Exactly these: the kind's own conversion function.
    Only(&'static [SelectableField]),
    /// A custom kind's `selectableFields` (JSON paths such as `.spec.color`, whose string,
    /// integer or boolean values are compared as text), then what [`FieldLabels::Metadata`]
    /// takes.
    Custom(std::sync::Arc<[String]>),
}

impl FieldLabels {
    /// The JSON pointers of `label`'s value; 400 with Kubernetes' message for a field the
    /// kind does not support.
    fn find(&self, label: &str) -> Result<Vec<String>, ApiError> {
        let known: &[SelectableField] = match self {
            Self::Metadata | Self::Custom(_) => &[METADATA_NAME, METADATA_NAMESPACE],
            Self::Only(fields) => fields,
        };
        if let Self::Custom(paths) = self
            && paths.iter().any(|p| p.strip_prefix('.') == Some(label))
        {
            return Ok(vec![format!("/{}", label.replace('.', "/"))]);
        }
        known
            .iter()
            .find(|f| f.label == label)
            .map(|f| f.pointers.iter().map(|p| (*p).to_owned()).collect())
            .ok_or_else(|| {
                ApiError::BadRequest(match self {
                    Self::Metadata | Self::Custom(_) => format!(
                        "{:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                        excerpt(label)
                    ),
                    Self::Only(_) => format!("field label not supported: {}", excerpt(label)),
                })
            })
    }
}

/// One `field op value` term.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldRequirement {
    /// The field as written.
    label: String,
    /// Where its value is: the kind's pointers once resolved, else the label's dotted path.
    pointers: Vec<String>,
    /// The value compared with.
    value: String,
    /// `=`/`==` (true) or `!=` (false).
    equal: bool,
}

/// A parsed field selector (empty: matches everything).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

/// Splits at commas that are not escaped.
fn split_terms(selector: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in selector.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                terms.push(&selector[start..i]);
                start = i.saturating_add(1);
            }
            _ => {}
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// The term's field, operator (`true`: equality) and raw value, split at the first operator.
fn split_term(term: &str) -> Option<(&str, bool, &str)> {
    (0..term.len())
        .filter(|i| term.is_char_boundary(*i))
        .find_map(|i| {
            let rest = &term[i..];
            [("!=", false), ("==", true), ("=", true)]
                .into_iter()
                .find(|(op, _)| rest.starts_with(op))
                .map(|(op, equal)| (&term[..i], equal, &rest[op.len()..]))
        })
}

fn unescape(selector: &str, value: &str) -> Result<String, ApiError> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(e @ ('\\' | ',' | '=')) => out.push(e),
            _ => {
                return Err(ApiError::BadRequest(format!(
                    "invalid field selector: '{}': invalid escape sequence in {:?}",
                    excerpt(selector),
                    excerpt(value)
                )));
            }
        }
    }
    Ok(out)
}

impl FieldSelector {
    /// Parses a `fieldSelector` value (any field name; see [`FieldSelector::for_kind`]); 400
    /// for a term without an operator or with a bad escape. Empty terms are skipped.
    pub fn parse(selector: &str) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        for term in split_terms(selector) {
            if term.is_empty() {
                continue;
            }
            let (label, equal, value) = split_term(term).ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "invalid selector: '{}'; can't understand '{}'",
                    excerpt(selector),
                    excerpt(term)
                ))
            })?;
            requirements.push(FieldRequirement {
                label: label.to_owned(),
                pointers: vec![format!("/{}", label.replace('.', "/"))],
                value: unescape(selector, value)?,
                equal,
            });
        }
        Ok(Self { requirements })
    }

    /// The selector for a kind whose fields are `labels`: each field is looked up where the
    /// kind keeps it; a field the kind does not support is a 400 with Kubernetes' message.
    pub fn for_kind(self, labels: FieldLabels) -> Result<Self, ApiError> {
        let requirements = self
            .requirements
            .into_iter()
            .map(|r| {
                let pointers = labels.find(&r.label)?;
                Ok(FieldRequirement { pointers, ..r })
            })
            .collect::<Result<_, ApiError>>()?;
        Ok(Self { requirements })
    }

    /// Whether `obj` satisfies every requirement (a missing field reads as empty; integers
    /// and booleans read as their text, as custom kinds' selectable fields do).
    pub fn matches(&self, obj: &Value) -> bool {
        self.requirements.iter().all(|r| {
            let actual = (r.pointers.iter())
                .filter_map(|p| match obj.pointer(p)? {
                    Value::String(s) => Some(std::borrow::Cow::Borrowed(s.as_str())),
                    v @ (Value::Number(_) | Value::Bool(_)) => Some(v.to_string().into()),
                    _ => None,
                })
                .find(|v| !v.is_empty())
                .unwrap_or_default();
            (actual == r.value) == r.equal
        })
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// What an object's namespace and name alone say of it (a list knows both from the key,
    /// without reading the object): `Some(false)` when a term on `metadata.namespace` or
    /// `metadata.name` fails, `Some(true)` when every term is on them and holds, `None` when
    /// the other terms must read the object.
    pub fn matches_identity(&self, namespace: &str, name: &str) -> Option<bool> {
        let mut decided = true;
        for r in &self.requirements {
            let actual = match r.pointers.as_slice() {
                [p] if p == "/metadata/namespace" => namespace,
                [p] if p == "/metadata/name" => name,
                _ => {
                    decided = false;
                    continue;
                }
            };
            if (actual == r.value) != r.equal {
                return Some(false);
            }
        }
        decided.then_some(true)
    }

    /// Whether one of its terms requires the field `label` to equal `value` (what an
    /// authorizer reads of a selector, R-ACC-172).
    pub fn requires(&self, label: &str, value: &str) -> bool {
        (self.requirements.iter()).any(|r| r.equal && r.label == label && r.value == value)
    }

    /// The terms as written: the field, whether it is an equality (`=`, `==`; else `!=`) and
    /// the value.
    pub fn terms(&self) -> impl Iterator<Item = (&str, bool, &str)> {
        self.requirements
            .iter()
            .map(|r| (r.label.as_str(), r.equal, r.value.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const EVENT_SOURCE: SelectableField = SelectableField {
        label: "source",
        pointers: &["/source/component", "/reportingComponent"],
    };

    fn parsed(s: &str, labels: FieldLabels) -> Result<FieldSelector, ApiError> {
        FieldSelector::parse(s)?.for_kind(labels)
    }

    fn message(r: Result<FieldSelector, ApiError>) -> String {
        match r {
            Err(ApiError::BadRequest(m)) => m,
            other => panic!("expected 400, got {other:?}"),
        }
    }

    // R-RES-110
    #[test]
    fn terms_and_operators() {
        let o = json!({"metadata":{"name":"n","namespace":"ns"}});
        for s in [
            "",
            "metadata.name=n",
            "metadata.name==n",
            "metadata.namespace!=other",
            "metadata.name=n,metadata.namespace=ns",
            "metadata.name=n,,",
        ] {
            assert!(
                parsed(s, FieldLabels::Metadata).expect(s).matches(&o),
                "{s}"
            );
        }
        for s in ["metadata.name=m", "metadata.name!=n", "metadata.namespace="] {
            assert!(
                !parsed(s, FieldLabels::Metadata).expect(s).matches(&o),
                "{s}"
            );
        }
        assert_eq!(
            message(FieldSelector::parse("metadata.name")),
            "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
        );
        assert!(FieldSelector::parse(r"metadata.name=a\x").is_err());
    }

    // R-RES-110
    #[test]
    fn escaped_values() {
        let o = json!({"metadata":{"name":"a,b=c\\"}});
        let s = parsed(r"metadata.name=a\,b\=c\\", FieldLabels::Metadata).expect("parses");
        assert!(s.matches(&o));
    }

    // R-RES-110: each kind names its own fields, with Kubernetes' message for the others.
    #[test]
    fn fields_depend_on_the_kind() {
        assert_eq!(
            message(parsed("spec.nodeName=x", FieldLabels::Metadata)),
            r#""spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace""#
        );
        let event = FieldLabels::Only(&[METADATA_NAME, EVENT_SOURCE]);
        assert_eq!(
            message(parsed("metadata.namespace=x", event.clone())),
            "field label not supported: metadata.namespace"
        );
        let s = parsed("source=kubelet", event).expect("supported");
        assert!(s.matches(&json!({"source":{"component":"kubelet"}})));
        assert!(s.matches(&json!({"source":{},"reportingComponent":"kubelet"})));
        assert!(
            !s.matches(&json!({"source":{"component":"other"},"reportingComponent":"kubelet"}))
        );
    }

    // R-RES-110: what the namespace and name decide agrees with reading the object, and
    // terms on other fields leave it undecided.
    #[test]
    fn the_namespace_and_name_decide_only_terms_on_them() {
        let pod = FieldLabels::Only(&[
            METADATA_NAME,
            METADATA_NAMESPACE,
            SelectableField {
                label: "spec.nodeName",
                pointers: &["/spec/nodeName"],
            },
        ]);
        let o = json!({"metadata":{"name":"n","namespace":"ns"},"spec":{"nodeName":"a"}});
        for (selector, decided) in [
            ("metadata.name=n", Some(true)),
            ("metadata.name=m", Some(false)),
            ("metadata.name!=n", Some(false)),
            ("metadata.namespace=ns,metadata.name==n", Some(true)),
            ("metadata.namespace=other,metadata.name=n", Some(false)),
            ("metadata.name=n,spec.nodeName=a", None),
            ("metadata.name=n,spec.nodeName=b", None),
            ("metadata.name=m,spec.nodeName=a", Some(false)),
        ] {
            let s = parsed(selector, pod.clone()).expect(selector);
            assert_eq!(s.matches_identity("ns", "n"), decided, "{selector}");
            if let Some(decided) = decided {
                assert_eq!(s.matches(&o), decided, "{selector}");
            }
        }
        let cluster = parsed("metadata.namespace=", FieldLabels::Metadata).expect("parses");
        assert_eq!(cluster.matches_identity("", "n"), Some(true));
        assert!(cluster.matches(&json!({"metadata":{"name":"n"}})));
    }

    // R-ACC-172
    #[test]
    fn a_selector_requires_a_field_only_with_an_equality_term() {
        let requires = |selector: &str, value: &str| {
            FieldSelector::parse(selector).is_ok_and(|s| s.requires("spec.nodeName", value))
        };
        assert!(requires("spec.nodeName=n1", "n1"));
        assert!(requires("status.phase=Running,spec.nodeName==n1", "n1"));
        assert!(!requires("spec.nodeName!=n1", "n1"));
        assert!(!requires("spec.nodeName=n2", "n1"));
        assert!(!requires("", "n1"));
        assert!(!requires("spec.nodeName=n1,broken", "n1"));
        assert!(requires(r"spec.nodeName=a\,b", "a,b"));
        assert!(!requires("spec.nodeName=a,b", "a"));
    }
}

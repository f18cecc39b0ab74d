//! A ValidatingAdmissionPolicyBinding as the dispatcher reads it: the policy it binds, the
//! params it names and what it does with a failed validation.

use serde_json::Value;

use super::definition::meta;
use super::match_resources::MatchResources;

/// What a binding does with a failed validation (`spec.validationActions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidationAction {
    /// The request is refused.
    Deny,
    /// A `Warning` header is added.
    Warn,
    /// An audit annotation records the failure.
    Audit,
}

impl ValidationAction {
    /// The action's name in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Deny => "Deny",
            Self::Warn => "Warn",
            Self::Audit => "Audit",
        }
    }
}

/// `spec.paramRef`.
#[derive(Debug, Clone)]
pub struct ParamRef {
    /// `name` (empty: none).
    pub name: String,
    /// `namespace` (empty: the request's, for namespaced params).
    pub namespace: String,
    /// `selector`, if set.
    pub selector: Option<Value>,
    /// `parameterNotFoundAction: Deny`.
    pub deny_when_missing: bool,
}

/// A binding.
#[derive(Debug)]
pub struct Binding {
    /// `metadata.name`.
    pub name: String,
    /// `spec.policyName`.
    pub policy: String,
    /// `spec.paramRef`.
    pub param_ref: Option<ParamRef>,
    /// `spec.matchResources` (`None`: everything the policy matches).
    pub match_resources: Option<MatchResources>,
    /// `spec.validationActions`, in order.
    pub actions: Vec<ValidationAction>,
}

fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or_default()
}

impl Binding {
    /// The binding `object`.
    pub fn read(object: &Value) -> Self {
        let spec = object.get("spec").unwrap_or(&Value::Null);
        let param_ref = spec
            .get("paramRef")
            .filter(|p| p.is_object())
            .map(|p| ParamRef {
                name: text(p, "name").to_owned(),
                namespace: text(p, "namespace").to_owned(),
                selector: p.get("selector").filter(|s| s.is_object()).cloned(),
                deny_when_missing: text(p, "parameterNotFoundAction") == "Deny",
            });
        let actions = (spec.get("validationActions").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(|a| match a.as_str() {
                Some("Deny") => Some(ValidationAction::Deny),
                Some("Warn") => Some(ValidationAction::Warn),
                Some("Audit") => Some(ValidationAction::Audit),
                _ => None,
            })
            .collect();
        Self {
            name: meta(object, "name").as_str().unwrap_or_default().to_owned(),
            policy: text(spec, "policyName").to_owned(),
            param_ref,
            match_resources: (spec.get("matchResources"))
                .filter(|m| m.is_object())
                .map(MatchResources::compile),
            actions,
        }
    }
}

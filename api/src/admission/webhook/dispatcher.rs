//! What both webhook plugins share: the configurations followed, which webhooks a write goes
//! to (rules with `matchPolicy`, namespace and object selectors, `matchConditions`), and the
//! AdmissionRequest each is sent.

use std::sync::Arc;

use serde_json::Value;

use super::Caller;
use super::Configurations;
use super::Webhook;
use super::call::CallFailure;
use crate::admission::Attributes;
use crate::admission::Namespaces;
use crate::admission::admission_request;
use crate::auth::AuthorizerChain;
use crate::cel::CelAuthorizer;
use crate::registry::ResourceType;

/// The resources whose writes are never sent to webhooks, so that a broken webhook cannot
/// lock out its own repair (Kubernetes' `IsExemptAdmissionConfigurationResource`).
const EXEMPT_RESOURCES: &[&str] = &[
    "mutatingwebhookconfigurations",
    "validatingwebhookconfigurations",
    "validatingadmissionpolicies",
    "validatingadmissionpolicybindings",
    "mutatingadmissionpolicies",
    "mutatingadmissionpolicybindings",
];

/// The webhooks of one configuration kind and what calling them takes.
pub struct Dispatcher {
    /// The configurations followed.
    pub configurations: Arc<Configurations>,
    /// How webhooks are called.
    pub caller: Caller,
    /// The replica's namespaces, for namespace selectors.
    pub namespaces: Arc<Namespaces>,
    /// The authorizers the `authorizer` variable of `matchConditions` asks.
    pub authorizers: AuthorizerChain,
}

/// One webhook a write goes to and the request it is sent (in the version it asked for).
pub struct Invocation {
    /// The webhook.
    pub hook: Arc<Webhook>,
    /// Its AdmissionRequest (the uid is set per call).
    pub request: Value,
    /// The `apiVersion` the object is sent in, when the webhook asked for another version
    /// of the resource than the one written (`matchPolicy: Equivalent`): a patched object
    /// is given back the written `apiVersion`.
    pub version: Option<String>,
}

/// Whether the write is of a resource webhooks never see.
pub fn exempt(attributes: &Attributes<'_>) -> bool {
    let resource = attributes.resource;
    resource.group.starts_with("admissionregistration.")
        && EXEMPT_RESOURCES.contains(&resource.plural.as_str())
}

/// `object` with `apiVersion` `api_version`.
fn in_version(object: Option<&Value>, api_version: &str) -> Option<Value> {
    let mut object = object?.clone();
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".to_owned(), api_version.into());
    }
    Some(object)
}

impl Dispatcher {
    /// The version `hook`'s rules take the write in: `Some(None)` when a rule names the
    /// write as it is; `Some(Some(v))` when only an Equivalent match of version `v` of the
    /// same resource does; `None` when no rule covers it.
    fn matched_version(hook: &Webhook, attributes: &Attributes<'_>) -> Option<Option<String>> {
        if hook.rules.iter().any(|r| r.rule.matches(attributes)) {
            return Some(None);
        }
        if hook.exact {
            return None;
        }
        let resource = attributes.resource;
        let names = |list: &[String], value: &str| list.iter().any(|v| v == "*" || v == value);
        for rule in &hook.rules {
            if !names(&rule.groups, &resource.group) || !names(&rule.resources, &resource.plural) {
                continue;
            }
            for version in rule.versions.iter().filter(|v| **v != resource.version) {
                let other = ResourceType {
                    version: version.clone(),
                    ..resource.clone()
                };
                let attributes = Attributes {
                    resource: &other,
                    ..*attributes
                };
                if rule.rule.matches(&attributes) {
                    return Some(Some(version.clone()));
                }
            }
        }
        None
    }

    /// The invocation of `hook` for this write, if its rules, selectors and match conditions
    /// cover it; a match condition that fails to evaluate is a [`CallFailure`].
    pub async fn invocation(
        &self,
        hook: &Arc<Webhook>,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Option<Invocation>, CallFailure> {
        let Some(version) = Self::matched_version(hook, attributes) else {
            return Ok(None);
        };
        if !hook.selectors.matches_object(object, old)
            || !(hook.selectors)
                .matches_namespace(attributes, object, old, |name| self.namespaces.get(name))
        {
            return Ok(None);
        }
        let resource = attributes.resource;
        let request = match &version {
            None => admission_request(attributes, "", object, old),
            Some(v) => {
                let api_version = match resource.group.as_str() {
                    "" => v.clone(),
                    group => format!("{group}/{v}"),
                };
                let object = in_version(object, &api_version);
                let old = in_version(old, &api_version);
                let mut request = admission_request(attributes, "", object.as_ref(), old.as_ref());
                for field in ["kind", "resource"] {
                    if let Some(gv) = request.get_mut(field).and_then(Value::as_object_mut) {
                        gv.insert("version".to_owned(), v.as_str().into());
                    }
                }
                request
            }
        };
        if !self.conditions_hold(hook, attributes, &request).await? {
            return Ok(None);
        }
        Ok(Some(Invocation {
            hook: hook.clone(),
            request,
            version: version.map(|_| api_version_of(object)),
        }))
    }

    /// Kubernetes' match conditions: any condition false skips the webhook; otherwise any
    /// error fails the match.
    async fn conditions_hold(
        &self,
        hook: &Webhook,
        attributes: &Attributes<'_>,
        request: &Value,
    ) -> Result<bool, CallFailure> {
        if hook.conditions.is_empty() {
            return Ok(true);
        }
        let null = Value::Null;
        let object = request.get("object").unwrap_or(&null);
        let old = request.get("oldObject").unwrap_or(&null);
        let variables = [("object", object), ("oldObject", old), ("request", request)];
        let authorizer = CelAuthorizer::new(self.authorizers.clone(), attributes.user.clone());
        let mut errors = Vec::new();
        for condition in &hook.conditions {
            let result = match &condition.program {
                Err(e) => Err(e.clone()),
                Ok(program) if program.references("authorizer") => authorizer
                    .evaluate(program, &variables)
                    .await
                    .map_err(|e| e.to_string()),
                Ok(program) => crate::cel::evaluate(program, &variables).map_err(|e| e.to_string()),
            };
            match result {
                Ok(Value::Bool(false)) => return Ok(false),
                Ok(Value::Bool(true)) => {}
                Ok(other) => errors.push(format!(
                    "matchCondition {:?}: expression must evaluate to bool, got {other}",
                    condition.name
                )),
                Err(e) => errors.push(format!("matchCondition {:?}: {e}", condition.name)),
            }
        }
        match errors.is_empty() {
            true => Ok(true),
            false => Err(CallFailure(format!(
                "failed to evaluate match conditions: {}",
                errors.join(", ")
            ))),
        }
    }
}

fn api_version_of(object: Option<&Value>) -> String {
    (object
        .and_then(|o| o.get("apiVersion"))
        .and_then(Value::as_str))
    .unwrap_or_default()
    .to_owned()
}

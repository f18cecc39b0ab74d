//! What both webhook plugins share: the configurations followed, which webhooks a write goes
//! to (rules with `matchPolicy`, namespace and object selectors, `matchConditions`), and the
//! AdmissionRequest each is sent.

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use super::Caller;
use super::Configurations;
use super::Webhook;
use super::call::CallFailure;
use crate::admission::Attributes;
use crate::admission::Namespaces;
use crate::admission::admission_request;
use crate::admission::policy::Equivalents;
use crate::admission::policy::ResourceTable;
use crate::auth::AuthorizerChain;
use crate::cel::CelAuthorizer;
use crate::error::ApiError;
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
    /// The served types: a write's equivalent resources and their conversions.
    pub resources: ResourceTable,
}

/// One webhook a write goes to and the request it is sent (in the version it asked for).
pub struct Invocation {
    /// The webhook.
    pub hook: Arc<Webhook>,
    /// Its AdmissionRequest (the uid is set per call).
    pub request: Value,
    /// The type the objects are sent as, when the webhook asked for another version of the
    /// resource than the one written (`matchPolicy: Equivalent`): a patched object is
    /// converted back from it.
    pub converted: Option<ResourceType>,
}

/// Whether the write is of a resource webhooks never see.
pub fn exempt(attributes: &Attributes<'_>) -> bool {
    let resource = attributes.resource;
    resource.group.starts_with("admissionregistration.")
        && EXEMPT_RESOURCES.contains(&resource.plural.as_str())
}

impl Dispatcher {
    /// The type `hook`'s rules take the write as: `Some(None)` when a rule names the write
    /// as it is; `Some(Some(t))` when only an Equivalent match of the equivalent type `t`
    /// does (rule by rule, as Kubernetes tries them); `None` when no rule covers it.
    fn matched_type(
        hook: &Webhook,
        attributes: &Attributes<'_>,
        equivalents: &Equivalents<'_>,
    ) -> Option<Option<ResourceType>> {
        if hook.rules.iter().any(|r| r.matches(attributes)) {
            return Some(None);
        }
        let plural = &attributes.resource.plural;
        if hook.exact || !hook.rules.iter().any(|r| r.names_resource(plural)) {
            return None;
        }
        hook.rules.iter().find_map(|rule| {
            equivalents.get().iter().find_map(|resource| {
                let other = Attributes {
                    resource,
                    ..*attributes
                };
                rule.matches(&other).then(|| Some(resource.clone()))
            })
        })
    }

    /// `object` and `old` as `to` (a subresource's own object stays as it is).
    async fn converted(
        &self,
        attributes: &Attributes<'_>,
        to: &ResourceType,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<(Option<Value>, Option<Value>), ApiError> {
        if attributes.object_kind.is_some() {
            return Ok((object.cloned(), old.cloned()));
        }
        let mut converted = Vec::with_capacity(2);
        for value in [object, old] {
            converted.push(match value {
                Some(value) => Some(self.resources.convert(to, value.clone()).await?),
                None => None,
            });
        }
        let old = converted.pop().flatten();
        Ok((converted.pop().flatten(), old))
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
        let equivalents = Equivalents::new(&self.resources, attributes.resource);
        let Some(matched) = Self::matched_type(hook, attributes, &equivalents) else {
            return Ok(None);
        };
        if !hook.selectors.matches_object(object, old)
            || !(hook.selectors)
                .matches_namespace(attributes, object, old, |name| self.namespaces.get(name))
        {
            return Ok(None);
        }
        let request = match &matched {
            None => admission_request(attributes, "", object, old),
            Some(to) => {
                let (object, old) = (self.converted(attributes, to, object, old).await)
                    .map_err(|e| CallFailure(format!("failed to convert object version: {e}")))?;
                let mut request = admission_request(attributes, "", object.as_ref(), old.as_ref());
                request["resource"] =
                    json!({"group": to.group, "version": to.version, "resource": to.plural});
                if attributes.object_kind.is_none() {
                    request["kind"] =
                        json!({"group": to.group, "version": to.version, "kind": to.kind});
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
            converted: matched,
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

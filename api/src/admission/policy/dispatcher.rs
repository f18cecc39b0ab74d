//! The ValidatingAdmissionPolicy plugin's work on one write (Kubernetes' dispatcher): every
//! policy whose constraints cover the write, with every binding that covers it and each of
//! its params, judged; failed validations turned into the binding's actions (a refusal, a
//! `Warning`, an audit annotation), `auditAnnotations` published as `<policy>/<key>`.

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use super::activation::Activation;
use super::binding::Binding;
use super::binding::ValidationAction;
use super::definition::FailurePolicy;
use super::inputs::Inputs;
use super::invocations::Followed;
use super::invocations::Step;
use super::match_resources::Matched;
use super::resources::ResourceTable;
use super::validations::ValidatingPolicy;
use super::validations::Validations;
use super::validator::Decision;
use super::validator::validate;
use crate::admission::Attributes;
use crate::admission::Namespaces;
use crate::admission::Notes;
use crate::cel::to_cel;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::storage::Storage;

/// The longest `auditAnnotations` value published (Kubernetes' 10 KiB).
const MAX_ANNOTATION_BYTES: usize = 10 * 1024;

/// The first refusal of a write: policy, binding, message, reason.
struct Refusal {
    policy: String,
    binding: Option<String>,
    message: String,
    reason: &'static str,
}

/// Judges writes by the replica's policies.
pub struct Dispatcher {
    policies: Followed<Validations>,
    flavor: Flavor,
}

impl Dispatcher {
    /// A dispatcher following the policies and bindings `resources` serves (`None` when it
    /// serves neither kind).
    pub fn start(
        storage: &Arc<dyn Storage>,
        resources: ResourceTable,
        namespaces: Arc<Namespaces>,
        flavor: Flavor,
    ) -> Option<Self> {
        Some(Self {
            policies: Followed::start(storage, resources, namespaces, flavor, "validating")?,
            flavor,
        })
    }

    /// Judges the write `attributes` describes: `Ok` when every policy lets it pass.
    pub async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let snapshot = self.policies.cache.snapshot();
        if snapshot.hooks.is_empty() {
            return Ok(());
        }
        let steps = (self.policies)
            .invocations(&snapshot, attributes, object, old)
            .await;
        // The values of the write, per version it is judged in.
        let mut inputs: Vec<(Matched, Inputs)> = Vec::new();
        let mut refusal: Option<Refusal> = None;
        let mut annotations: Vec<(String, Vec<String>)> = Vec::new();
        let mut current: Option<(usize, &ValidatingPolicy)> = None;
        for step in steps {
            let (policy, binding, param, matched) = match step {
                Step::Misconfigured {
                    policy,
                    binding,
                    message,
                } => {
                    configuration_error(&mut refusal, policy, binding, message);
                    continue;
                }
                Step::Invoke {
                    hook,
                    policy,
                    binding,
                    param,
                    matched,
                } => {
                    if current.is_some_and(|(at, _)| at != hook) {
                        publish(current, &mut annotations);
                    }
                    current = Some((hook, policy));
                    (policy, binding, param, matched)
                }
            };
            let index = match inputs.iter().position(|(m, _)| *m == matched) {
                Some(index) => index,
                None => {
                    let namespaces = &self.policies.namespaces;
                    let made = Inputs::of(
                        attributes,
                        object,
                        old,
                        namespaces,
                        &matched,
                        &self.policies.resources,
                    );
                    match made.await {
                        Ok(made) => {
                            inputs.push((matched, made));
                            inputs.len() - 1
                        }
                        Err(e) => {
                            let message = format!(
                                "failed to configure binding: failed to convert object version: {e}"
                            );
                            configuration_error(&mut refusal, policy, Some(binding), message);
                            continue;
                        }
                    }
                }
            };
            let Some((_, inputs)) = inputs.get(index) else {
                continue;
            };
            let mut values = inputs.values.clone();
            let param = param.map_or(cel::Value::Null, |p| to_cel(&p));
            values.push(("params", param));
            let mut activation =
                Activation::new(values, &policy.variables, inputs.authorizer.as_ref());
            let verdict = validate(policy, &mut activation).await;
            for decision in &verdict.decisions {
                self.act(&mut refusal, policy, binding, decision, notes);
            }
            for message in verdict.refusals {
                refusal.get_or_insert(Refusal {
                    policy: policy.name.clone(),
                    binding: Some(binding.name.clone()),
                    message,
                    reason: "Invalid",
                });
            }
            for (key, value) in verdict.annotations {
                collect(&mut annotations, key, value);
            }
        }
        publish(current, &mut annotations);
        match refusal {
            None => Ok(()),
            Some(refusal) => Err(refused(attributes, refusal)),
        }
    }

    /// Applies `binding`'s actions to a failed validation.
    fn act(
        &self,
        refusal: &mut Option<Refusal>,
        policy: &ValidatingPolicy,
        binding: &Binding,
        decision: &Decision,
        notes: &mut Notes,
    ) {
        for action in &binding.actions {
            match action {
                ValidationAction::Deny => {
                    refusal.get_or_insert_with(|| Refusal {
                        policy: policy.name.clone(),
                        binding: Some(binding.name.clone()),
                        message: decision.message.clone(),
                        reason: decision.reason,
                    });
                }
                ValidationAction::Warn => notes.warnings.push(format!(
                    "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
                    policy.name, binding.name, decision.message
                )),
                ValidationAction::Audit => {
                    let actions: Vec<&str> = binding.actions.iter().map(|a| a.as_str()).collect();
                    let value = json!([{
                        "message": decision.message,
                        "policy": binding.policy,
                        "binding": binding.name,
                        "expressionIndex": decision.index,
                        "validationActions": actions,
                    }]);
                    let key = format!(
                        "validation.policy.admission.{}/validation_failure",
                        self.flavor.group_domain()
                    );
                    crate::audit::annotate(&key, &value.to_string());
                }
            }
        }
    }
}

/// Publishes the audit annotations a policy's evaluations collected, as `<policy>/<key>`.
fn publish(
    current: Option<(usize, &ValidatingPolicy)>,
    annotations: &mut Vec<(String, Vec<String>)>,
) {
    if let Some((_, policy)) = current {
        for (key, values) in annotations.drain(..) {
            crate::audit::annotate(&format!("{}/{key}", policy.name), &values.join(", "));
        }
    }
}

/// Adds `value` under `key`, once (Kubernetes' audit annotation collector).
fn collect(annotations: &mut Vec<(String, Vec<String>)>, key: String, mut value: String) {
    if value.len() > MAX_ANNOTATION_BYTES {
        let mut end = MAX_ANNOTATION_BYTES;
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        value.truncate(end);
    }
    match annotations.iter_mut().find(|(k, _)| *k == key) {
        Some((_, values)) if values.contains(&value) => {}
        Some((_, values)) => values.push(value),
        None => annotations.push((key, vec![value])),
    }
}

/// A policy or binding that cannot be used: the write is refused under `Fail`.
fn configuration_error(
    refusal: &mut Option<Refusal>,
    policy: &ValidatingPolicy,
    binding: Option<&Binding>,
    message: String,
) {
    if policy.failure_policy == FailurePolicy::Ignore {
        return;
    }
    refusal.get_or_insert_with(|| Refusal {
        policy: policy.name.clone(),
        binding: binding.map(|b| b.name.clone()),
        message,
        reason: "Invalid",
    });
}

/// The error of a refusal: Kubernetes' forbidden message with the policy's reason and code.
fn refused(attributes: &Attributes<'_>, refusal: Refusal) -> ApiError {
    let message = match &refusal.binding {
        Some(binding) => format!(
            "ValidatingAdmissionPolicy '{}' with binding '{binding}' denied request: {}",
            refusal.policy, refusal.message
        ),
        None => format!(
            "ValidatingAdmissionPolicy '{}' denied request: {}",
            refusal.policy, refusal.message
        ),
    };
    let code = match refusal.reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    };
    ApiError::PolicyDenied {
        resource: attributes.resource.group_resource(),
        name: attributes.name.to_owned(),
        reason: refusal.reason,
        code,
        message,
    }
}

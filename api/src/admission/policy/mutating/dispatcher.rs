//! The MutatingAdmissionPolicy plugin's work on one write (Kubernetes' mutating dispatcher):
//! every invocation the policies and bindings make of it ([`invocations`]) whose match
//! conditions hold runs its policy's mutations in order on the object as the invocations
//! before left it; a mutation that fails is the policy's error, which refuses the write under
//! `failurePolicy: Fail` once every invocation ran. A change of the object asks the chain
//! for its reinvocation pass, in which only the `IfNeeded` invocations made before the
//! change run again. An invocation matched only through an equivalent resource
//! (`matchPolicy: Equivalent`) mutates the object converted to that resource's version, and
//! the result is converted back (as Kubernetes' dispatcher does with versioned attributes);
//! its ApplyConfiguration merges by the written version's schema.

use std::sync::Arc;

use serde_json::Value;

use super::apply_configuration;
use super::json_patch;
use super::mutations::MutatingPolicy;
use super::mutations::Mutations;
use super::mutations::PatchType;
use super::reinvocation::InvocationKey;
use crate::admission::Attributes;
use crate::admission::Namespaces;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::policy::ResourceTable;
use crate::admission::policy::activation::Activation;
use crate::admission::policy::activation::Failure;
use crate::admission::policy::activation::OUT_OF_BUDGET;
use crate::admission::policy::activation::POLICY_BUDGET;
use crate::admission::policy::binding::Binding;
use crate::admission::policy::definition::FailurePolicy;
use crate::admission::policy::inputs::Inputs;
use crate::admission::policy::invocations::Followed;
use crate::admission::policy::invocations::Step;
use crate::admission::policy::match_resources::Matched;
use crate::admission::policy::validator::matches;
use crate::cel::to_cel;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::storage::Storage;

/// An error of one policy (Kubernetes' `PolicyError`).
struct PolicyError {
    policy: String,
    binding: Option<String>,
    message: String,
    /// `Invalid` for a mutation's or a match condition's error; `Forbidden` (the refusal's
    /// own reason) for a configuration error.
    reason: &'static str,
}

/// Mutates writes by the replica's MutatingAdmissionPolicies.
pub struct MutatingDispatcher {
    policies: Followed<Mutations>,
}

impl MutatingDispatcher {
    /// A dispatcher following the policies and bindings `resources` serves (`None` when it
    /// serves neither kind).
    pub fn start(
        storage: &Arc<dyn Storage>,
        resources: ResourceTable,
        namespaces: Arc<Namespaces>,
        flavor: Flavor,
    ) -> Option<Self> {
        let policies = Followed::start(storage, resources, namespaces, flavor, "mutating")?;
        Some(Self { policies })
    }

    /// Mutates `object`, the object of the create, update or connect `attributes` describes
    /// (its schema at [`Attributes::shape`]).
    pub async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(object) = object else {
            return Ok(());
        };
        if attributes.operation == Operation::Delete {
            return Ok(());
        }
        let snapshot = self.policies.cache.snapshot();
        if snapshot.hooks.is_empty() {
            return Ok(());
        }
        let steps = (self.policies)
            .invocations(&snapshot, attributes, Some(&*object), old)
            .await;
        if steps.is_empty() {
            return Ok(());
        }
        if notes.reinvoking && notes.policies.changed_since_last_pass(object) {
            notes.policies.require_reinvoking();
        }
        let Inputs {
            values: mut current,
            authorizer,
        } = Inputs::of(
            attributes,
            Some(&*object),
            old,
            &self.policies.namespaces,
            &Matched::Exact,
            &self.policies.resources,
        )
        .await?;
        let mut errors = Vec::new();
        let mut changed = false;
        for step in steps {
            let step_parts = match step {
                Step::Misconfigured {
                    policy,
                    binding,
                    message,
                } => {
                    if policy.failure_policy == FailurePolicy::Fail {
                        errors.push(PolicyError {
                            policy: policy.name.clone(),
                            binding: binding.map(|b| b.name.clone()),
                            message,
                            reason: "Forbidden",
                        });
                    }
                    continue;
                }
                Step::Invoke {
                    policy,
                    binding,
                    param,
                    matched,
                    ..
                } => (policy, binding, param, matched),
            };
            let (policy, binding, param, matched) = step_parts;
            let key = key(policy, binding, param.as_deref());
            let mut values = match &matched {
                Matched::Exact => current.clone(),
                Matched::Equivalent(_) => {
                    let resources = &self.policies.resources;
                    let namespaces = &self.policies.namespaces;
                    (Inputs::of(
                        attributes,
                        Some(&*object),
                        old,
                        namespaces,
                        &matched,
                        resources,
                    ))
                    .await?
                    .values
                }
            };
            values.push(("params", param.map_or(cel::Value::Null, |p| to_cel(&p))));
            let mut activation = Activation::new(values, &policy.variables, authorizer.as_ref());
            let mut fail = |message: String| {
                if policy.failure_policy == FailurePolicy::Fail {
                    errors.push(PolicyError {
                        policy: policy.name.clone(),
                        binding: Some(binding.name.clone()),
                        message,
                        reason: "Invalid",
                    });
                }
            };
            match matches(policy, &mut activation).await {
                Ok(true) => {}
                Ok(false) => continue,
                Err(message) => {
                    fail(message);
                    continue;
                }
            }
            if notes.reinvoking && !notes.policies.should_reinvoke(&key) {
                continue;
            }
            let before = object.clone();
            let failures = match &matched {
                Matched::Exact => mutate(policy, &mut activation, object, attributes).await,
                Matched::Equivalent(to) => {
                    let resources = &self.policies.resources;
                    let converted = resources.convert(to, object.clone()).await?;
                    let mut mutated = converted.clone();
                    let failures = mutate(policy, &mut activation, &mut mutated, attributes).await;
                    if mutated != converted {
                        *object =
                            (resources.convert_back(to, attributes.resource, mutated)).await?;
                    }
                    failures
                }
            };
            for message in failures {
                fail(message);
            }
            if *object != before {
                changed = true;
                notes.policies.require_reinvoking();
                if let Some((_, value)) = current.iter_mut().find(|(name, _)| *name == "object") {
                    *value = to_cel(object);
                }
            }
            if policy.body.reinvoke_if_needed {
                notes.policies.invoked(key);
            }
        }
        notes.policies.leave(object);
        if changed {
            notes.reinvoke = true;
            notes.patched = true;
        }
        match errors.is_empty() {
            true => Ok(()),
            false => Err(denied(attributes, errors)),
        }
    }
}

/// Runs `policy`'s mutations on `object` in order, each with a budget of its own; the
/// messages of those that failed (their changes are not made, the others' are).
async fn mutate(
    policy: &MutatingPolicy,
    activation: &mut Activation<'_>,
    object: &mut Value,
    attributes: &Attributes<'_>,
) -> Vec<String> {
    let mut failures = Vec::new();
    for mutation in &policy.body.mutations {
        let mut budget = POLICY_BUDGET;
        let result = match activation.evaluate(&mutation.expression, &mut budget).await {
            Ok(result) => result,
            Err(Failure::Error(e)) => {
                failures.push(e);
                continue;
            }
            Err(Failure::OutOfBudget) => {
                failures.push(OUT_OF_BUDGET.to_owned());
                continue;
            }
        };
        let patched = match mutation.patch_type {
            PatchType::ApplyConfiguration => {
                apply_configuration::apply(object, &result, attributes.shape)
            }
            PatchType::JsonPatch => json_patch::apply(object, &result),
        };
        match patched {
            Ok(patched) => {
                *object = patched;
                activation.set_object(object);
            }
            Err(message) => failures.push(message),
        }
    }
    failures
}

/// The key of an invocation.
fn key(policy: &MutatingPolicy, binding: &Binding, param: Option<&Value>) -> InvocationKey {
    let param = param.map(|p| {
        let text = |field: &str| {
            (p.pointer(&format!("/metadata/{field}")))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        (text("namespace"), text("name"))
    });
    (policy.name.clone(), binding.name.clone(), param)
}

/// Kubernetes' refusal of a write by policies' `errors` (at least one): 403, the first
/// error's reason, its message `policy '<p>' with binding '<b>' denied request: ...` the
/// whole message, every error a cause.
fn denied(attributes: &Attributes<'_>, errors: Vec<PolicyError>) -> ApiError {
    let reason = errors.first().map_or("Forbidden", |e| e.reason);
    let messages = (errors.into_iter())
        .map(|error| match &error.binding {
            Some(binding) => format!(
                "policy '{}' with binding '{binding}' denied request: {}",
                error.policy, error.message
            ),
            None => format!(
                "policy {:?} denied request: {}",
                error.policy, error.message
            ),
        })
        .collect();
    ApiError::PolicyErrors {
        resource: attributes.resource.group_resource(),
        name: attributes.name.to_owned(),
        reason,
        messages,
    }
}

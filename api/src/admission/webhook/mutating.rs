//! `MutatingAdmissionWebhook`: the mutating webhooks a write matches, called one after the
//! other in order, each seeing the object as the ones before left it; a JSON Patch answer
//! changes the object; `reinvocationPolicy: IfNeeded` webhooks are called again on the
//! reinvocation pass when a later mutation changed the object.

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use super::Dispatcher;
use super::call::call_failed;
use super::call::denied;
use super::call::dry_run_unsupported;
use super::call::record;
use super::dispatcher::exempt;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::patch::PatchType;
use crate::patch::Shape;

/// The mutating webhook plugin.
pub struct MutatingWebhooks {
    dispatcher: Arc<Dispatcher>,
}

impl MutatingWebhooks {
    /// The plugin over `dispatcher`'s MutatingWebhookConfigurations.
    pub fn new(dispatcher: Arc<Dispatcher>) -> Self {
        Self { dispatcher }
    }
}

/// The audit annotation of one call (Kubernetes' `mutation.webhook.admission.k8s.io`).
fn annotate_mutation(round: usize, index: usize, uid: &str, name: &str, mutated: bool) {
    let configuration = uid.rsplit_once('/').map_or(uid, |(c, _)| c);
    let value = json!({"configuration": configuration, "webhook": name, "mutated": mutated});
    crate::audit::annotate(
        &format!("mutation.webhook.admission.k8s.io/round_{round}_index_{index}"),
        &value.to_string(),
    );
}

/// The annotation of a failed call let through by `failurePolicy: Ignore`.
pub(super) fn annotate_failed_open(kind: &str, round: usize, index: usize, name: &str) {
    crate::audit::annotate(
        &format!("failed-open.{kind}.webhook.admission.k8s.io/round_{round}_index_{index}"),
        name,
    );
}

#[async_trait::async_trait]
impl Plugin for MutatingWebhooks {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        mut object: Option<&mut Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let hooks = self.dispatcher.configurations.webhooks();
        if hooks.is_empty() || exempt(attributes) {
            return Ok(());
        }
        let round = usize::from(notes.reinvoking);
        if notes.reinvoking && notes.webhooks.changed_since(object.as_deref()) {
            notes.webhooks.changed();
        }
        for (index, hook) in hooks.iter().enumerate() {
            if notes.reinvoking && !notes.webhooks.reinvokes(&hook.uid) {
                continue;
            }
            let matched = (self.dispatcher)
                .invocation(hook, attributes, object.as_deref(), old)
                .await;
            let invocation = match matched {
                Ok(Some(invocation)) => invocation,
                Ok(None) => continue,
                Err(_) if hook.fail_open => {
                    annotate_failed_open("mutating", round, index, &hook.name);
                    continue;
                }
                Err(failure) => return Err(call_failed(hook, &failure)),
            };
            if attributes.dry_run
                && let Some(refused) = dry_run_unsupported(hook)
            {
                return Err(refused);
            }
            let answer = match self
                .dispatcher
                .caller
                .call(hook, &invocation.request, true)
                .await
            {
                Ok(answer) => answer,
                Err(failure) if hook.fail_open => {
                    tracing::warn!(webhook = %hook.name, cause = %failure.0, "failed calling webhook, failing open");
                    annotate_failed_open("mutating", round, index, &hook.name);
                    continue;
                }
                Err(failure) => return Err(call_failed(hook, &failure)),
            };
            record(hook, &answer, &mut notes.warnings);
            if !answer.allowed {
                return Err(denied(hook, answer.status.as_ref()));
            }
            let mut mutated = false;
            if let (Some(patch), Some(current)) = (&answer.patch, object.as_deref_mut()) {
                let sent = match invocation.request.get("object") {
                    Some(sent) if !sent.is_null() => sent.clone(),
                    _ => current.clone(),
                };
                let mut patched =
                    crate::patch::apply(PatchType::Json, sent, patch, Shape::untyped())
                        .map_err(|e| ApiError::Internal(e.to_string()))?;
                if let (Some(sent_as), None) = (&invocation.converted, attributes.object_kind) {
                    patched = (self.dispatcher.resources)
                        .convert_back(sent_as, attributes.resource, patched)
                        .await?;
                }
                mutated = patched != *current;
                *current = patched;
            }
            annotate_mutation(round, index, &hook.uid, &hook.name, mutated);
            if mutated {
                notes.webhooks.changed();
                notes.reinvoke = true;
                notes.patched = true;
            }
            if hook.reinvoke_if_needed {
                notes.webhooks.invoked(&hook.uid);
            }
        }
        if hooks.iter().any(|h| h.reinvoke_if_needed) {
            notes.webhooks.left(object.as_deref());
        }
        Ok(())
    }
}

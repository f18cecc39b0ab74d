//! `ValidatingAdmissionWebhook`: the validating webhooks a write matches, called concurrently
//! (a bounded number at a time) on the object as it will be stored; the first refusal or
//! failure in webhook order is the answer, after every call has ended.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::Value;

use super::Dispatcher;
use super::Webhook;
use super::call::call_failed;
use super::call::denied;
use super::call::dry_run_unsupported;
use super::call::record;
use super::dispatcher::exempt;
use super::mutating::annotate_failed_open;
use super::review::Answer;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Plugin;
use crate::error::ApiError;

/// The most validating webhooks called at once for one write.
const MAX_CONCURRENT_CALLS: usize = 16;

/// The validating webhook plugin.
pub struct ValidatingWebhooks {
    dispatcher: Arc<Dispatcher>,
}

impl ValidatingWebhooks {
    /// The plugin over `dispatcher`'s ValidatingWebhookConfigurations.
    pub fn new(dispatcher: Arc<Dispatcher>) -> Self {
        Self { dispatcher }
    }
}

/// How one webhook's part of a write ended.
enum Outcome {
    /// Not called: it does not cover the write.
    Skipped,
    /// It answered.
    Answered(Answer),
    /// It failed, and its failure policy lets the write pass.
    FailedOpen,
    /// The write is refused.
    Refused(ApiError),
}

impl ValidatingWebhooks {
    async fn run(
        &self,
        hook: &Arc<Webhook>,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Outcome {
        let fail = |failure| match hook.fail_open {
            true => Outcome::FailedOpen,
            false => Outcome::Refused(call_failed(hook, &failure)),
        };
        let invocation = match self
            .dispatcher
            .invocation(hook, attributes, object, old)
            .await
        {
            Ok(Some(invocation)) => invocation,
            Ok(None) => return Outcome::Skipped,
            Err(failure) => return fail(failure),
        };
        if attributes.dry_run
            && let Some(refused) = dry_run_unsupported(hook)
        {
            return Outcome::Refused(refused);
        }
        match self
            .dispatcher
            .caller
            .call(hook, &invocation.request, false)
            .await
        {
            Ok(answer) => Outcome::Answered(answer),
            Err(failure) => {
                tracing::warn!(webhook = %hook.name, cause = %failure.0, "failed calling webhook");
                fail(failure)
            }
        }
    }
}

#[async_trait::async_trait]
impl Plugin for ValidatingWebhooks {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let hooks = self.dispatcher.configurations.webhooks();
        if hooks.is_empty() || exempt(attributes) {
            return Ok(());
        }
        let mut calls = Vec::with_capacity(hooks.len());
        for hook in hooks.iter() {
            calls.push(self.run(hook, attributes, object, old));
        }
        let outcomes: Vec<Outcome> = futures::stream::iter(calls)
            .buffered(MAX_CONCURRENT_CALLS)
            .collect()
            .await;
        let mut refusal = None;
        for (index, (hook, outcome)) in hooks.iter().zip(outcomes).enumerate() {
            match outcome {
                Outcome::Skipped => {}
                Outcome::FailedOpen => annotate_failed_open("validating", 0, index, &hook.name),
                Outcome::Answered(answer) => {
                    record(hook, &answer, &mut notes.warnings);
                    if !answer.allowed && refusal.is_none() {
                        refusal = Some(denied(hook, answer.status.as_ref()));
                    }
                }
                Outcome::Refused(error) => {
                    refusal.get_or_insert(error);
                }
            }
        }
        refusal.map_or(Ok(()), Err)
    }
}

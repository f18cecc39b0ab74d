//! One call of one admission webhook: the review posted through the transport, bounded by the
//! webhook's timeout and an answer-size limit, and the answer checked; the errors of a failed
//! call and of a refusal, worded as kube-apiserver words them.

use std::sync::Arc;

use serde_json::Value;

use super::SideEffects;
use super::Webhook;
use super::review::Answer;
use super::review::read_answer;
use super::review::review_body;
use crate::RandomSource;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::storage::Storage;
use crate::webhook::CallLimits;
use crate::webhook::WebhookTransport;
use crate::webhook::resolve;

/// The largest answer read from an admission webhook (Kubernetes reads up to its request
/// body limit, 3 MiB of object, plus the review around it).
const MAX_ANSWER_BYTES: usize = 6 * 1024 * 1024;

/// What calling webhooks takes.
#[derive(Clone)]
pub struct Caller {
    /// The HTTPS transport; `None`: this server calls no webhooks (every call fails).
    pub transport: Option<Arc<dyn WebhookTransport>>,
    /// The replica's store, where Services and EndpointSlices are read.
    pub storage: Arc<dyn Storage>,
    /// The naming flavor (the EndpointSlice owner label).
    pub flavor: Flavor,
    /// Where review uids come from.
    pub random: RandomSource,
}

/// Why a call did not give a usable answer: the text after `failed calling webhook "<name>": `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFailure(pub String);

impl Caller {
    /// Posts the review of `request` (whose `uid` is set here) to `hook` and reads its
    /// answer. No lock is held: the caller holds only its own snapshot of the webhooks.
    pub async fn call(
        &self,
        hook: &Webhook,
        request: &Value,
        mutating: bool,
    ) -> Result<Answer, CallFailure> {
        let Some(version) = hook.review_version else {
            return Err(CallFailure(
                "could not create admission objects: webhook does not accept known AdmissionReview versions"
                    .to_owned(),
            ));
        };
        let config = (hook.client.as_ref())
            .map_err(|e| CallFailure(format!("failed to call webhook: {e}")))?;
        let Some(transport) = &self.transport else {
            return Err(CallFailure(
                "failed to call webhook: this server calls no webhooks".to_owned(),
            ));
        };
        let mut endpoint = resolve(config, self.storage.as_ref(), self.flavor)
            .await
            .map_err(|e| CallFailure(format!("failed to call webhook: {e}")))?;
        let separator = if endpoint.url.contains('?') { '&' } else { '?' };
        endpoint.url = format!(
            "{}{separator}timeout={}s",
            endpoint.url,
            hook.timeout.as_secs()
        );
        let uid = self.random.uuid();
        let mut request = request.clone();
        if let Some(map) = request.as_object_mut() {
            map.insert("uid".to_owned(), Value::from(uid.as_str()));
        }
        let body = review_body(version, &request);
        let limits = CallLimits {
            timeout: hook.timeout,
            max_response_bytes: MAX_ANSWER_BYTES,
        };
        let answer = transport
            .post(&endpoint, body, limits)
            .await
            .map_err(|e| CallFailure(format!("failed to call webhook: {e}")))?;
        read_answer(&answer, version, &uid, mutating)
            .map_err(|e| CallFailure(format!("received invalid webhook response: {e}")))
    }
}

/// The 500 of a failed call under `failurePolicy: Fail`.
pub fn call_failed(hook: &Webhook, failure: &CallFailure) -> ApiError {
    ApiError::Internal(format!(
        "failed calling webhook \"{}\": {}",
        hook.name, failure.0
    ))
}

/// The refusal of `hook`, from its answer's `status` (Kubernetes' `ToStatusErr`): the code
/// given (403 when below 400), the message prefixed with who denied, the reason and details
/// as given.
pub fn denied(hook: &Webhook, status: Option<&Value>) -> ApiError {
    let denied_by = format!("admission webhook \"{}\" denied the request", hook.name);
    let text = |key: &str| {
        status
            .and_then(|s| s.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let code = status
        .and_then(|s| s.get("code"))
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c))
        .unwrap_or(403);
    let message = match (text("message"), text("reason")) {
        ("", "") => format!("{denied_by} without explanation"),
        ("", reason) => format!("{denied_by}: {reason}"),
        (message, _) => format!("{denied_by}: {message}"),
    };
    let details = status
        .and_then(|s| s.get("details"))
        .filter(|d| d.as_object().is_some_and(|d| !d.is_empty()))
        .map(|d| Box::new(d.clone()));
    ApiError::WebhookDenied {
        code,
        message,
        reason: text("reason").to_owned(),
        details,
    }
}

/// The 400 of a dry run that would call `hook`, which may have side effects (R-RES-194).
pub fn dry_run_unsupported(hook: &Webhook) -> Option<ApiError> {
    (hook.side_effects == SideEffects::Some).then(|| {
        ApiError::BadRequest(format!(
            "admission webhook \"{}\" does not support dry run",
            hook.name
        ))
    })
}

/// Sends `answer`'s warnings and audit annotations (`<webhook name>/<key>`) on.
pub fn record(hook: &Webhook, answer: &Answer, warnings: &mut Vec<String>) {
    warnings.extend(answer.warnings.iter().cloned());
    for (key, value) in &answer.audit_annotations {
        crate::audit::annotate(&format!("{}/{key}", hook.name), value);
    }
}

#[cfg(test)]
#[path = "call_tests.rs"]
mod tests;

//! How a definition's objects move between its versions (`spec.conversion`): `None`
//! changes only `apiVersion`; `Webhook` sends a ConversionReview to the definition's webhook
//! and checks its answer as kube-apiserver does (one object per object sent, in the desired
//! version, of the same kind, name, namespace and uid; only labels and annotations are
//! taken from the answer's metadata, the rest is restored from the object sent).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::random::RandomSource;
use crate::registry::conversion::VersionConversion;
use crate::storage::Storage;
use crate::webhook::CallLimits;
use crate::webhook::ClientConfig;
use crate::webhook::WebhookTransport;
use crate::webhook::resolve;

/// How long converting the objects of one read or write may take, all its reviews together
/// (kube-apiserver's conversion webhook client sends one review, with this timeout).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// The most objects one ConversionReview carries; a longer list is sent in several.
const MAX_OBJECTS_PER_REVIEW: usize = 500;
/// The most bytes of objects one ConversionReview carries (at least one object).
const MAX_REVIEW_BYTES: usize = 8 * 1024 * 1024;
/// The largest answer read, as a multiple of the review sent (at least 16 MiB).
const ANSWER_FACTOR: usize = 4;
const MIN_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// The ConversionReview versions this server speaks, in no order of preference: the
/// definition's own list decides.
const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];

/// What calling conversion webhooks takes: the transport, and the replica's store, where
/// a `service` webhook's EndpointSlices are found.
pub struct WebhookCalls {
    transport: Arc<dyn WebhookTransport>,
    storage: Arc<dyn Storage>,
    flavor: Flavor,
    random: RandomSource,
}

impl WebhookCalls {
    /// Calls through `transport`, resolving Services from `storage`.
    pub fn new(
        transport: Arc<dyn WebhookTransport>,
        storage: Arc<dyn Storage>,
        flavor: Flavor,
        random: RandomSource,
    ) -> Self {
        Self {
            transport,
            storage,
            flavor,
            random,
        }
    }
}

/// A definition's webhook, as its `spec.conversion.webhook` says.
struct Webhook {
    /// The client config, or why it cannot be used.
    config: Result<ClientConfig, String>,
    /// The first of the definition's review versions this server speaks.
    review_version: Option<&'static str>,
    /// How to call it; `None` when this server calls no webhooks.
    calls: Option<Arc<WebhookCalls>>,
}

/// The conversion of one definition's objects.
pub(super) struct CustomConversion {
    kind: String,
    webhook: Option<Webhook>,
}

impl CustomConversion {
    /// The conversion `crd` asks for.
    pub(super) fn of(crd: &Value, calls: Option<&Arc<WebhookCalls>>) -> Self {
        let kind = (crd.pointer("/spec/names/kind").and_then(Value::as_str))
            .unwrap_or_default()
            .to_owned();
        let conversion = crd.pointer("/spec/conversion");
        let strategy = conversion
            .and_then(|c| c.get("strategy"))
            .and_then(Value::as_str);
        let webhook = (strategy == Some("Webhook")).then(|| {
            let webhook = conversion.and_then(|c| c.get("webhook"));
            let config = match webhook.and_then(|w| w.get("clientConfig")) {
                Some(config) => ClientConfig::from_value(config),
                None => Err("the definition names no webhook".to_owned()),
            };
            let review_version = (webhook.and_then(|w| w.get("conversionReviewVersions")))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .find_map(|v| REVIEW_VERSIONS.iter().find(|known| **known == v).copied());
            Webhook {
                config,
                review_version,
                calls: calls.cloned(),
            }
        });
        Self { kind, webhook }
    }

    /// `apiVersion, Kind=kind` of `obj`, as Go prints a GroupVersionKind.
    fn gvk(&self, obj: &Value) -> String {
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        format!("{api_version}, Kind={}", self.kind)
    }
}

fn api_version_of(obj: &Value) -> &str {
    obj.get("apiVersion").and_then(Value::as_str).unwrap_or("")
}

#[async_trait::async_trait]
impl VersionConversion for CustomConversion {
    fn calls_out(&self) -> bool {
        self.webhook.is_some()
    }

    async fn convert(
        &self,
        mut objects: Vec<Value>,
        api_version: &str,
    ) -> Result<Vec<Value>, ApiError> {
        let todo: Vec<usize> = (objects.iter().enumerate())
            .filter(|(_, o)| api_version_of(o) != api_version)
            .map(|(i, _)| i)
            .collect();
        let Some(webhook) = &self.webhook else {
            for i in todo {
                if let Some(Value::Object(m)) = objects.get_mut(i) {
                    m.insert("apiVersion".to_owned(), api_version.into());
                }
            }
            return Ok(objects);
        };
        let deadline = tokio::time::Instant::now() + CALL_TIMEOUT;
        let mut start = 0;
        while start < todo.len() {
            let mut end = start;
            let mut bytes = 0;
            while end < todo.len() && end - start < MAX_OBJECTS_PER_REVIEW {
                let size = objects.get(todo[end]).map_or(0, |o| o.to_string().len());
                if end > start && bytes + size > MAX_REVIEW_BYTES {
                    break;
                }
                bytes += size;
                end += 1;
            }
            let batch: Vec<usize> = todo[start..end].to_vec();
            let sent: Vec<Value> = (batch.iter())
                .filter_map(|i| objects.get(*i).cloned())
                .collect();
            let gvk = sent.first().map(|o| self.gvk(o)).unwrap_or_default();
            let converted = self
                .review(webhook, &sent, api_version, bytes, deadline)
                .await
                .map_err(|e| {
                    ApiError::Internal(format!("conversion webhook for {gvk} failed: {e}"))
                })?;
            if converted.len() != sent.len() {
                return Err(ApiError::Internal(format!(
                    "conversion webhook for {gvk} returned {} objects, expected {}",
                    converted.len(),
                    sent.len()
                )));
            }
            for (index, (i, (original, answer))) in
                (batch.iter().zip(sent.iter().zip(converted))).enumerate()
            {
                let restored = self.checked(original, answer, api_version).map_err(|e| {
                    ApiError::Internal(format!(
                        "conversion webhook for {gvk} returned invalid converted object at index {index}: {e}"
                    ))
                })?;
                if let Some(slot) = objects.get_mut(*i) {
                    *slot = restored;
                }
            }
            start = end;
        }
        Ok(objects)
    }
}

impl CustomConversion {
    /// Sends `objects` (`bytes` of them) to the webhook, answering the converted objects by
    /// `deadline`.
    async fn review(
        &self,
        webhook: &Webhook,
        objects: &[Value],
        api_version: &str,
        bytes: usize,
        deadline: tokio::time::Instant,
    ) -> Result<Vec<Value>, String> {
        let config = webhook.config.as_ref().map_err(Clone::clone)?;
        let calls = (webhook.calls.as_ref()).ok_or("this server calls no webhooks")?;
        let version = (webhook.review_version).ok_or("no supported conversion review versions")?;
        let review_api_version = format!("apiextensions.{}/{version}", calls.flavor.group_domain());
        let uid = calls.random.uuid();
        let request = json!({
            "kind": "ConversionReview",
            "apiVersion": review_api_version,
            "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objects},
        });
        let body = serde_json::to_vec(&request).map_err(|e| e.to_string())?;
        let endpoint = resolve(config, calls.storage.as_ref(), calls.flavor)
            .await
            .map_err(|e| e.to_string())?;
        let limits = CallLimits {
            timeout: deadline.saturating_duration_since(tokio::time::Instant::now()),
            max_response_bytes: (bytes * ANSWER_FACTOR).max(MIN_ANSWER_BYTES),
        };
        let answer =
            (calls.transport.post(&endpoint, body, limits).await).map_err(|e| e.to_string())?;
        let answer: Value = serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
        converted_objects(&answer, version, &review_api_version, &uid)
    }

    /// `answer`, the webhook's conversion of `original` to `api_version`, checked, with the
    /// original's metadata apart from labels and annotations.
    fn checked(&self, original: &Value, answer: Value, api_version: &str) -> Result<Value, String> {
        let Value::Object(mut converted) = answer else {
            return Err("invalid type, expected=Unstructured".to_owned());
        };
        let got = converted
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if got != api_version {
            return Err(format!(
                "invalid groupVersion (expected {api_version}, received {got})"
            ));
        }
        let text = |v: &Value, pointer: &str| {
            v.pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let got = converted.get("kind").and_then(Value::as_str).unwrap_or("");
        if got != self.kind {
            return Err(format!(
                "invalid kind (expected {}, received {got})",
                self.kind
            ));
        }
        let answered = Value::Object(converted.clone());
        for (field, label) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
            let (expected, got) = (
                text(original, &format!("/metadata/{field}")),
                text(&answered, &format!("/metadata/{field}")),
            );
            if expected != got {
                return Err(format!("must have the same {label}: {expected} != {got}"));
            }
        }
        let answered_meta = match converted.get("metadata") {
            Some(Value::Object(meta)) => meta.clone(),
            Some(_) => return Err("invalid metadata in converted object".to_owned()),
            None => return Err("missing metadata in converted object".to_owned()),
        };
        let mut metadata = match original.get("metadata") {
            Some(Value::Object(meta)) => meta.clone(),
            _ => Map::new(),
        };
        for field in ["labels", "annotations"] {
            match answered_meta.get(field) {
                None | Some(Value::Null) => {
                    metadata.remove(field);
                }
                Some(Value::Object(values)) => {
                    if let Some((key, _)) = values.iter().find(|(_, v)| !v.is_string()) {
                        return Err(format!(
                            "metadata.{field}[{key}] must be a string in converted object"
                        ));
                    }
                    metadata.insert(field.to_owned(), Value::Object(values.clone()));
                }
                Some(_) => {
                    return Err(format!("invalid metadata.{field} in converted object"));
                }
            }
        }
        converted.insert("metadata".to_owned(), Value::Object(metadata));
        Ok(Value::Object(converted))
    }
}

/// The converted objects of a ConversionReview `answer` to the request `uid` sent as
/// `review_api_version` (`version` of the review).
fn converted_objects(
    answer: &Value,
    version: &str,
    review_api_version: &str,
    uid: &str,
) -> Result<Vec<Value>, String> {
    let text = |pointer: &str| {
        answer
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    if version == "v1"
        && (text("/kind") != "ConversionReview" || text("/apiVersion") != review_api_version)
    {
        return Err(format!(
            "expected webhook response of {review_api_version}, Kind=ConversionReview, got {}, Kind={}",
            text("/apiVersion"),
            text("/kind")
        ));
    }
    if answer.get("response").is_none_or(Value::is_null) {
        return Err("no response provided".to_owned());
    }
    if version == "v1" && text("/response/uid") != uid {
        return Err(format!(
            "expected response.uid={uid:?}, got {:?}",
            text("/response/uid")
        ));
    }
    let status = text("/response/result/status");
    if status != "Success" {
        return Err(match text("/response/result/message") {
            "" => format!("response.result.status was '{status}', not 'Success'"),
            message => message.to_owned(),
        });
    }
    Ok((answer.pointer("/response/convertedObjects"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

#[cfg(test)]
mod tests;

//! Real admission webhooks for the admission tests: [`ReviewWebhook`]s answering
//! AdmissionReviews (each keeps every review it got, to check the request fields, `dryRun`
//! and reinvocation): one that adds a label by JSON Patch ([`labelling`]), one that denies
//! objects carrying a label ([`denying`]), and a [`Silent`] server that accepts connections
//! and never answers (timeouts).

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use bytes::Bytes;
use serde_json::Value;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::error::HarnessError;
use crate::error::Result;
use crate::review_webhook::ReviewWebhook;

/// The label whose presence [`denying`] refuses.
pub const DENY_LABEL: &str = "webhook.example.com/deny";

/// The reason [`denying`] refuses with (its own: the server passes it on as given).
pub const DENY_REASON: &str = "LabelNotAllowed";

/// The message [`denying`] refuses with.
pub const DENY_MESSAGE: &str = "objects labelled webhook.example.com/deny are not allowed";

/// The AdmissionReview answer to `review` with `response` fields beside `uid`.
fn reply(review: &Value, mut response: Value) -> Bytes {
    response["uid"] = review["request"]["uid"].clone();
    let answer = json!({
        "apiVersion": review["apiVersion"],
        "kind": "AdmissionReview",
        "response": response,
    });
    Bytes::from(answer.to_string())
}

/// A JSON Pointer token (`~` and `/` escaped).
fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Starts a mutating webhook (certificate also valid for `names`) that sets the label `key`
/// to `value` on every object it sees without it, with a JSON Patch, a warning and an audit
/// annotation.
pub async fn labelling(
    dir: &Path,
    names: &[&str],
    key: &str,
    value: &str,
) -> Result<ReviewWebhook> {
    let (key, value) = (key.to_owned(), value.to_owned());
    let answer = move |review: &Value| {
        let object = &review["request"]["object"];
        let labels = &object["metadata"]["labels"];
        let patch = match labels.get(&key) {
            Some(v) if v == value.as_str() => json!([]),
            _ if labels.is_object() => json!([{"op": "add",
                "path": format!("/metadata/labels/{}", token(&key)), "value": value}]),
            _ => json!([{"op": "add", "path": "/metadata/labels", "value": {&key: &value}}]),
        };
        let encoded = base64::engine::general_purpose::STANDARD.encode(patch.to_string());
        reply(
            review,
            json!({"allowed": true, "patchType": "JSONPatch", "patch": encoded,
                   "warnings": [format!("labelled {key}")],
                   "auditAnnotations": {"labelled": key}}),
        )
    };
    ReviewWebhook::start_naming(dir, "mutate", names, Arc::new(answer)).await
}

/// Starts a validating webhook (certificate also valid for `names`) that refuses objects
/// labelled [`DENY_LABEL`] with 403, [`DENY_REASON`] and [`DENY_MESSAGE`], and allows
/// everything else.
pub async fn denying(dir: &Path, names: &[&str]) -> Result<ReviewWebhook> {
    let answer = |review: &Value| {
        let request = &review["request"];
        let object = match &request["object"] {
            Value::Null => &request["oldObject"],
            object => object,
        };
        match object["metadata"]["labels"].get(DENY_LABEL) {
            Some(_) => reply(
                review,
                json!({"allowed": false,
                       "status": {"code": 403, "reason": DENY_REASON, "message": DENY_MESSAGE}}),
            ),
            None => reply(review, json!({"allowed": true})),
        }
    };
    ReviewWebhook::start_naming(dir, "validate", names, Arc::new(answer)).await
}

/// A server that accepts connections and never answers; stops when dropped.
pub struct Silent {
    url: String,
    server: JoinHandle<()>,
}

impl Silent {
    /// Starts it on a free loopback port.
    pub async fn start() -> Result<Self> {
        let io = |source| HarnessError::Io {
            path: "127.0.0.1:0".into(),
            source,
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(io)?;
        let port = listener.local_addr().map_err(io)?.port();
        let server = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((connection, _)) = listener.accept().await {
                held.push(connection);
            }
        });
        Ok(Self {
            url: format!("https://127.0.0.1:{port}/slow"),
            server,
        })
    }

    /// Its URL.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.server.abort();
    }
}

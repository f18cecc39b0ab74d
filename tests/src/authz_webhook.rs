//! A real SubjectAccessReview webhook server for the authorization tests: a
//! [`ReviewWebhook`] answering each review by its `spec.user` from a table (an unknown user gets
//! no opinion) in the `apiVersion` the review came in.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use serde_json::json;

use crate::error::Result;
use crate::review_webhook::ReviewWebhook;

/// What the server answers one user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `status.allowed: true`.
    Allow,
    /// `status.denied: true` with this reason.
    Deny(String),
    /// Neither allowed nor denied.
    NoOpinion,
    /// A body that is not a SubjectAccessReview.
    Garbage,
}

/// The answers of the server, by `spec.user`.
pub type Table = BTreeMap<String, Answer>;

/// Starts a SubjectAccessReview server on a free loopback port, its certificates in `dir`,
/// answering `table`.
pub async fn start(dir: &Path, table: Table) -> Result<ReviewWebhook> {
    let answer = move |review: &Value| answer(review, &table);
    ReviewWebhook::start(dir, "authorize", Arc::new(answer)).await
}

/// The reviews `webhook` received so far about `user`.
pub fn received_for(webhook: &ReviewWebhook, user: &str) -> Vec<Value> {
    (webhook.received().into_iter())
        .filter(|r| r["spec"]["user"] == user)
        .collect()
}

/// The SubjectAccessReview answering `review`.
fn answer(review: &Value, table: &Table) -> Bytes {
    let user = review["spec"]["user"].as_str().unwrap_or_default();
    let status = match table.get(user).unwrap_or(&Answer::NoOpinion) {
        Answer::Allow => json!({"allowed": true}),
        Answer::Deny(reason) => json!({"allowed": false, "denied": true, "reason": reason}),
        Answer::NoOpinion => json!({"allowed": false}),
        Answer::Garbage => return Bytes::from_static(b"<html>not a review</html>"),
    };
    let reply = json!({
        "apiVersion": review["apiVersion"],
        "kind": "SubjectAccessReview",
        "status": status,
    });
    Bytes::from(reply.to_string())
}

//! A real TokenReview webhook server for the authentication webhook tests: a
//! [`ReviewWebhook`] answering each review per token from a table (an unknown token is not
//! authenticated, with an error), in the `apiVersion` the review came in.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use serde_json::json;

use crate::error::Result;
use crate::review_webhook::ReviewWebhook;

/// The answers of the server: the `status.user` each known token authenticates as.
pub type Users = BTreeMap<String, Value>;

/// Starts a TokenReview server on a free loopback port, its certificates in `dir`, answering
/// `users`.
pub async fn start(dir: &Path, users: Users) -> Result<ReviewWebhook> {
    let answer = move |review: &Value| answer(review, &users);
    ReviewWebhook::start(dir, "review", Arc::new(answer)).await
}

/// The TokenReview answering `review`.
fn answer(review: &Value, users: &Users) -> Bytes {
    let token = review["spec"]["token"].as_str().unwrap_or_default();
    let status = match users.get(token) {
        Some(user) => json!({"authenticated": true, "user": user}),
        None => json!({"authenticated": false, "error": "the token is unknown to the webhook"}),
    };
    let reply = json!({
        "apiVersion": review["apiVersion"],
        "kind": "TokenReview",
        "status": status,
    });
    Bytes::from(reply.to_string())
}

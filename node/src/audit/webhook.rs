//! The webhook client of the audit and authentication webhooks (`--audit-webhook-config-file`,
//! `--authentication-token-webhook-config-file`): [`TlsWebhook`] posts JSON over TLS to the
//! server its kubeconfig names ([`crate::kubeconfig`]); as the audit [`WebhookTransport`] it posts each `EventList`, bounded
//! by a timeout.

use std::path::Path;
use std::time::Duration;

use apiary_api::audit::WebhookTransport;
use axum::body::Body;
use http::Method;

use crate::kubeconfig::Endpoint;

/// The longest one post may take (kube-apiserver's webhook client timeout).
pub const POST_TIMEOUT: Duration = Duration::from_secs(30);

/// Posts to the webhook server over TLS.
pub struct TlsWebhook {
    endpoint: Endpoint,
}

/// The most bytes of a webhook's answer that are read.
const MAX_ANSWER_BYTES: usize = 1 << 20;

impl TlsWebhook {
    /// The client the kubeconfig at `path` describes (its current context, else its first
    /// cluster and user); relative certificate paths are read next to it.
    pub fn from_kubeconfig(path: &Path) -> Result<Self, String> {
        Ok(Self {
            endpoint: Endpoint::from_kubeconfig(path, None)?,
        })
    }

    /// Posts `body` (JSON) once, without a time limit of its own: the answer's status and its
    /// body (at most [`MAX_ANSWER_BYTES`]). Errors name no part of the body.
    pub async fn exchange(&self, body: Vec<u8>) -> Result<(http::StatusCode, Vec<u8>), String> {
        let response = self
            .endpoint
            .send(Method::POST, None, Some("application/json"), body)
            .await?;
        let status = response.status();
        let answer = axum::body::to_bytes(Body::new(response.into_body()), MAX_ANSWER_BYTES)
            .await
            .map_err(|e| format!("reading the answer: {e}"))?;
        Ok((status, answer.to_vec()))
    }

    async fn post_once(&self, body: Vec<u8>) -> Result<(), String> {
        let (status, _) = self.exchange(body).await?;
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("the webhook answered {status}"))
        }
    }
}

#[async_trait::async_trait]
impl WebhookTransport for TlsWebhook {
    async fn post(&self, body: Vec<u8>) -> Result<(), String> {
        tokio::time::timeout(POST_TIMEOUT, self.post_once(body))
            .await
            .map_err(|_| format!("no answer within {POST_TIMEOUT:?}"))?
    }
}

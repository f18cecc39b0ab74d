//! The HTTPS transport of the API's webhook calls (a CRD's conversion webhook): one POST
//! over a new TLS connection per call ([`crate::kubeconfig::Endpoint`]), verified against
//! the webhook's CA bundle, bounded by the call's timeout and answer size.

use apiary_api::webhook::CallError;
use apiary_api::webhook::CallLimits;
use apiary_api::webhook::Endpoint;
use apiary_api::webhook::WebhookTransport;
use axum::body::Body;
use http::Method;

use crate::kubeconfig;

/// Calls webhooks over HTTPS.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpsWebhooks;

#[async_trait::async_trait]
impl WebhookTransport for HttpsWebhooks {
    async fn post(
        &self,
        endpoint: &Endpoint,
        body: Vec<u8>,
        limits: CallLimits,
    ) -> Result<Vec<u8>, CallError> {
        let failed = |cause: String| CallError::Failed {
            url: endpoint.url.clone(),
            cause,
        };
        let call = async {
            let target = kubeconfig::Endpoint::for_webhook(
                &endpoint.url,
                &endpoint.server_name,
                endpoint.ca_bundle.as_deref(),
            )
            .map_err(failed)?;
            let response = target
                .send(Method::POST, None, Some("application/json"), body)
                .await
                .map_err(failed)?;
            let status = response.status();
            if !status.is_success() {
                return Err(CallError::Status {
                    status: status.as_u16(),
                });
            }
            let answer =
                axum::body::to_bytes(Body::new(response.into_body()), limits.max_response_bytes)
                    .await
                    .map_err(|e| {
                        failed(format!(
                            "the answer could not be read within {} bytes: {e}",
                            limits.max_response_bytes
                        ))
                    })?;
            Ok(answer.to_vec())
        };
        tokio::time::timeout(limits.timeout, call)
            .await
            .map_err(|_| failed("context deadline exceeded".to_owned()))?
    }
}

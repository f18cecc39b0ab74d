//! The HTTPS transport of the API's webhook calls (admission webhooks, a CRD's conversion
//! webhook): one POST per call over a kept-alive TLS connection to the webhook
//! ([`crate::kubeconfig::Endpoint`], built once per URL, server name and CA bundle and kept
//! in a bounded cache), verified against the webhook's CA bundle, bounded by the call's
//! timeout and answer size.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;

use apiary_api::webhook::CallError;
use apiary_api::webhook::CallLimits;
use apiary_api::webhook::Endpoint;
use apiary_api::webhook::WebhookTransport;
use axum::body::Body;
use http::Method;

use crate::kubeconfig;

/// Webhook endpoints kept at once; the least recently used one goes when a new one comes.
const MAX_ENDPOINTS: usize = 128;

/// What tells two webhook endpoints apart: URL, server name and CA bundle.
type Key = (String, String, Option<Arc<[u8]>>);

/// The endpoints called so far, each with the tick it was last used at.
#[derive(Default)]
struct Endpoints {
    tick: u64,
    cache: HashMap<Key, (u64, Arc<kubeconfig::Endpoint>)>,
}

/// Calls webhooks over HTTPS.
#[derive(Default)]
pub struct HttpsWebhooks {
    endpoints: Mutex<Endpoints>,
}

impl HttpsWebhooks {
    /// The endpoint of `endpoint`, built on its first call.
    fn endpoint(&self, endpoint: &Endpoint) -> Result<Arc<kubeconfig::Endpoint>, String> {
        let key = (
            endpoint.url.clone(),
            endpoint.server_name.clone(),
            endpoint.ca_bundle.clone(),
        );
        let mut guard = self.endpoints.lock().unwrap_or_else(|p| p.into_inner());
        let Endpoints { tick, cache } = &mut *guard;
        *tick += 1;
        if let Some((used, found)) = cache.get_mut(&key) {
            *used = *tick;
            return Ok(found.clone());
        }
        let built = Arc::new(kubeconfig::Endpoint::for_webhook(
            &endpoint.url,
            &endpoint.server_name,
            endpoint.ca_bundle.as_deref(),
        )?);
        if cache.len() >= MAX_ENDPOINTS {
            let oldest = cache.iter().min_by_key(|(_, (used, _))| *used);
            if let Some(oldest) = oldest.map(|(key, _)| key.clone()) {
                cache.remove(&oldest);
            }
        }
        cache.insert(key, (*tick, built.clone()));
        Ok(built)
    }
}

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
            let target = self.endpoint(endpoint).map_err(failed)?;
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

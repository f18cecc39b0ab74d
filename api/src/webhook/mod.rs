//! Calls the API server makes to webhooks (a CRD's conversion webhook; admission webhooks
//! use the same parts): where a webhook is ([`ClientConfig`], resolved to an [`Endpoint`]
//! by [`resolve`]), and the seam that carries one call ([`WebhookTransport`], an HTTPS
//! client the node provides). The API crate speaks no TLS itself.

mod resolve;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::Value;

pub use self::resolve::resolve;

/// Where a webhook is: its `clientConfig` (`url`, or `service` with `caBundle`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// The URL or the Service.
    pub target: Target,
    /// The PEM certificates that verify the webhook's serving certificate (`caBundle`);
    /// `None`: the host's roots.
    pub ca_bundle: Option<Arc<[u8]>>,
}

/// The two ways a `clientConfig` names a webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `url`: `https://host[:port][/path][?query]`, used as given.
    Url(String),
    /// `service`: a Service in the cluster, reached through its EndpointSlices (there is
    /// no kube-proxy), verified as `<name>.<namespace>.svc`.
    Service {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// The request path (`/` when absent).
        path: String,
        /// The Service port (443 when absent).
        port: i64,
    },
}

impl ClientConfig {
    /// The config `value` holds (a validated `clientConfig`), or why it cannot be used.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let text = |v: &Value, field: &str| v.get(field).and_then(Value::as_str).map(str::to_owned);
        let ca_bundle = match text(value, "caBundle").filter(|c| !c.is_empty()) {
            None => None,
            Some(encoded) => Some(
                base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .map_err(|e| format!("caBundle is not base64: {e}"))?
                    .into(),
            ),
        };
        let target = match (
            text(value, "url"),
            value.get("service").filter(|s| !s.is_null()),
        ) {
            (Some(url), None) => Target::Url(url),
            (None, Some(service)) => Target::Service {
                namespace: text(service, "namespace").unwrap_or_default(),
                name: text(service, "name").unwrap_or_default(),
                path: text(service, "path").unwrap_or_else(|| "/".to_owned()),
                port: service.get("port").and_then(Value::as_i64).unwrap_or(443),
            },
            _ => return Err("exactly one of url or service is required".to_owned()),
        };
        Ok(Self { target, ca_bundle })
    }
}

/// A webhook resolved to an address: what a transport connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The `https` URL posted to (for a Service: one ready endpoint's address and port).
    pub url: String,
    /// The name the serving certificate must carry (the URL's host, or
    /// `<service>.<namespace>.svc`).
    pub server_name: String,
    /// The PEM roots that verify it; `None`: the host's roots.
    pub ca_bundle: Option<Arc<[u8]>>,
}

/// The bounds of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLimits {
    /// The whole call (connect, TLS, request, response) ends by then.
    pub timeout: Duration,
    /// The largest response body read; a larger one fails the call.
    pub max_response_bytes: usize,
}

/// Why a call failed. The text follows Go's client errors (`Post "<url>": <cause>`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The webhook could not be resolved to an address.
    #[error("{0}")]
    Unresolved(String),
    /// The request did not complete: connection, TLS, timeout, or an unreadable answer.
    #[error("Post \"{url}\": {cause}")]
    Failed {
        /// The URL posted to.
        url: String,
        /// What went wrong.
        cause: String,
    },
    /// The webhook answered with a status other than 200.
    #[error(
        "the server responded with the status code {status} but did not return more information"
    )]
    Status {
        /// The HTTP status.
        status: u16,
    },
}

/// Carries one webhook call: a JSON POST over HTTPS.
///
/// ### Correctness requirements
/// - Bounded: returns within `limits.timeout` and never reads more than
///   `limits.max_response_bytes` of the answer; no retry of its own.
/// - Verifies the webhook: its certificate chains to `endpoint.ca_bundle` (or the host's
///   roots when `None`) and names `endpoint.server_name`.
/// - Sends `Content-Type` and `Accept` `application/json`; answers the body of a 200, and
///   [`CallError::Status`] for any other status.
/// - Logs no body: reviews carry objects, which may hold secret values.
#[async_trait::async_trait]
pub trait WebhookTransport: Send + Sync + 'static {
    /// Posts `body` to `endpoint`.
    async fn post(
        &self,
        endpoint: &Endpoint,
        body: Vec<u8>,
        limits: CallLimits,
    ) -> Result<Vec<u8>, CallError>;
}

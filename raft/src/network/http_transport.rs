//! The production [`Transport`]: HTTP POST of protobuf bodies over hyper, with TLS (mutual,
//! when the client config carries a certificate) for `https://` peers and plain TCP for
//! `http://` peers. Connections are pooled and reused per peer.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http::StatusCode;
use http::Uri;
use http_body_util::BodyExt;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::Connector;
use super::Transport;
use super::TransportError;
use super::rpc;

/// How long an idle pooled connection to a peer is kept.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// HTTP(S) peer transport.
#[derive(Clone)]
pub struct HttpTransport {
    client: Client<Connector, Full<Bytes>>,
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport").finish_non_exhaustive()
    }
}

impl HttpTransport {
    /// A transport that speaks https (with `tls`) to `https://` peers, and plain http to
    /// `http://` peers. Without `tls`, `https://` peers are refused.
    pub fn new(tls: Option<Arc<rustls::ClientConfig>>) -> Self {
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build(Connector::new(tls));
        Self { client }
    }

    async fn post(&self, target: &str, rpc: &str, body: Bytes) -> Result<Bytes, TransportError> {
        let url = format!("{}{}{rpc}", target.trim_end_matches('/'), rpc::PATH_PREFIX);
        let invalid = |reason: String| TransportError::InvalidTarget {
            target: target.to_string(),
            reason,
        };
        let uri: Uri = url
            .parse()
            .map_err(|e: http::uri::InvalidUri| invalid(e.to_string()))?;
        let request = Request::post(uri)
            .header(http::header::CONTENT_TYPE, "application/x-protobuf")
            .body(Full::new(body))
            .map_err(|e| invalid(e.to_string()))?;
        let broken = |source: Box<dyn std::error::Error + Send + Sync>| TransportError::Broken {
            target: target.to_string(),
            rpc: rpc.to_string(),
            source,
        };
        let response = self.client.request(request).await.map_err(|e| {
            if e.is_connect() {
                TransportError::Unreachable {
                    target: target.to_string(),
                    source: Box::new(e),
                }
            } else {
                broken(Box::new(e))
            }
        })?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| broken(Box::new(e)))?
            .to_bytes();
        if status != StatusCode::OK {
            return Err(TransportError::Rejected {
                target: target.to_string(),
                rpc: rpc.to_string(),
                status: status.as_u16(),
                message: String::from_utf8_lossy(&body).into_owned(),
            });
        }
        Ok(body)
    }
}

#[async_trait::async_trait]
impl Transport for HttpTransport {
    async fn call(
        &self,
        target: &str,
        rpc: &str,
        body: Bytes,
        deadline: Duration,
    ) -> Result<Bytes, TransportError> {
        match tokio::time::timeout(deadline, self.post(target, rpc, body)).await {
            Ok(result) => result,
            Err(_) => Err(TransportError::Timeout {
                target: target.to_string(),
                rpc: rpc.to_string(),
                deadline,
            }),
        }
    }
}

#[cfg(test)]
#[path = "http_transport_test.rs"]
mod http_transport_test;

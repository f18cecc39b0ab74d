//! The production [`Transport`]: HTTP POST of protobuf bodies over hyper, with TLS (mutual,
//! when the client config carries a certificate) for `https://` peers and plain TCP for
//! `http://` peers. Connections are pooled and reused per peer.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Context;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http::StatusCode;
use http::Uri;
use http_body_util::BodyExt;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::Connected;
use hyper_util::client::legacy::connect::Connection;
use hyper_util::rt::TokioExecutor;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::io::ReadBuf;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::Transport;
use super::TransportError;
use super::rpc;

/// How long an idle pooled connection to a peer is kept.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// HTTP(S) peer transport.
#[derive(Clone)]
pub struct HttpTransport {
    client: Client<PeerConnector, Full<Bytes>>,
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
        let connector = PeerConnector {
            tls: tls.map(TlsConnector::from),
        };
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build(connector);
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

/// Opens TCP (and TLS for `https`) connections for the pooled client.
#[derive(Clone)]
struct PeerConnector {
    tls: Option<TlsConnector>,
}

impl tower::Service<Uri> for PeerConnector {
    type Response = TokioIo<PeerStream>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let tls = self.tls.clone();
        Box::pin(async move {
            let invalid =
                |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_string());
            let https = match uri.scheme_str() {
                Some("https") => true,
                Some("http") => false,
                _ => return Err(invalid("peer URL scheme must be http or https")),
            };
            let host = uri.host().ok_or_else(|| invalid("peer URL has no host"))?;
            let host = host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            let tcp = TcpStream::connect((host.as_str(), port)).await?;
            // Heartbeats are small; do not let Nagle delay them.
            tcp.set_nodelay(true)?;
            if !https {
                return Ok(TokioIo::new(PeerStream::Plain(tcp)));
            }
            let tls = tls.ok_or_else(|| invalid("https peer URL but no TLS client config"))?;
            let name = ServerName::try_from(host).map_err(|e| invalid(&e.to_string()))?;
            let stream = tls.connect(name, tcp).await?;
            Ok(TokioIo::new(PeerStream::Tls(Box::new(stream))))
        })
    }
}

/// A connection to a peer, with or without TLS.
enum PeerStream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Connection for PeerStream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl AsyncRead for PeerStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for PeerStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_flush(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
#[path = "http_transport_test.rs"]
mod http_transport_test;

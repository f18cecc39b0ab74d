//! A pooled HTTPS client for the server's own calls out (webhooks, audit, the operator
//! commands): HTTP/1.1 connections over rustls, kept alive and reused across requests to one
//! server, so a call pays a TLS handshake only when no idle connection is left.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Context;
use std::task::Poll;
use std::time::Duration;

use axum::body::Body;
use http::Uri;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::Connected;
use hyper_util::client::legacy::connect::Connection;
use hyper_util::rt::TokioExecutor;
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// How long an unused connection stays open.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// Idle connections kept per server.
const MAX_IDLE_PER_HOST: usize = 32;

/// A pooled client whose connections verify the server as `server_name` with `tls`.
pub type TlsClient = Client<Connector, Body>;

/// A client of servers whose certificates must name `server_name` (which may differ from the
/// host a request's URI connects to: a service's DNS name served at an endpoint's address).
pub fn client(tls: Arc<ClientConfig>, server_name: &str) -> Result<TlsClient, String> {
    let server_name = ServerName::try_from(server_name.to_owned()).map_err(|e| e.to_string())?;
    let connector = Connector {
        tls: TlsConnector::from(tls),
        server_name,
    };
    Ok(Client::builder(TokioExecutor::new())
        .pool_idle_timeout(IDLE_TIMEOUT)
        .pool_max_idle_per_host(MAX_IDLE_PER_HOST)
        .build(connector))
}

/// An error and its causes, outermost first (the pooled client's own error says only which
/// stage failed).
pub fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

/// Opens a TCP connection to a URI's host and port and a TLS session over it.
#[derive(Clone)]
pub struct Connector {
    tls: TlsConnector,
    server_name: ServerName<'static>,
}

impl tower::Service<Uri> for Connector {
    type Response = Stream;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Stream, std::io::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let (tls, name) = (self.tls.clone(), self.server_name.clone());
        Box::pin(async move {
            let host = uri.host().unwrap_or_default();
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let port = uri.port_u16().unwrap_or(443);
            let tcp = TcpStream::connect((host, port)).await.map_err(|e| {
                std::io::Error::new(e.kind(), format!("connect to {host}:{port}: {e}"))
            })?;
            tcp.set_nodelay(true)?;
            let stream = tls
                .connect(name, tcp)
                .await
                .map_err(|e| std::io::Error::new(e.kind(), format!("TLS: {e}")))?;
            Ok(Stream(TokioIo::new(stream)))
        })
    }
}

/// One TLS connection, as the pooled client reads and writes it.
pub struct Stream(TokioIo<TlsStream<TcpStream>>);

impl Connection for Stream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl hyper::rt::Read for Stream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Stream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

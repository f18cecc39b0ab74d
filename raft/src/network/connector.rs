//! The connector under the HTTP clients: TCP to the URI's host and port, and TLS (mutual when
//! the client configuration carries a certificate) for `https://`.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Context;
use std::task::Poll;

use http::Uri;
use hyper_util::client::legacy::connect::Connected;
use hyper_util::client::legacy::connect::Connection;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::io::ReadBuf;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// Opens TCP connections, with a TLS handshake for `https://` URIs, for hyper-util's pooled
/// client (which takes any `tower::Service<Uri>` yielding a connection). Dials the URI's host
/// itself: no proxy, no DNS beyond the system resolver, no system trust store.
#[derive(Clone)]
pub struct Connector {
    tls: Option<TlsConnector>,
}

impl Connector {
    /// A connector that uses `tls` (trust anchors, and a client certificate for mutual TLS) for
    /// `https://` URIs; without it, `https://` URIs are refused and only `http://` is dialed.
    pub fn new(tls: Option<Arc<rustls::ClientConfig>>) -> Self {
        Self {
            tls: tls.map(TlsConnector::from),
        }
    }
}

impl tower::Service<Uri> for Connector {
    type Response = TokioIo<MaybeTlsStream>;
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
                _ => return Err(invalid("URL scheme must be http or https")),
            };
            let host = uri.host().ok_or_else(|| invalid("URL has no host"))?;
            let host = host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            let tcp = TcpStream::connect((host.as_str(), port)).await?;
            // Heartbeats and API requests are small; do not let Nagle delay them.
            tcp.set_nodelay(true)?;
            if !https {
                return Ok(TokioIo::new(MaybeTlsStream::Plain(tcp)));
            }
            let tls = tls.ok_or_else(|| invalid("https URL but no TLS client config"))?;
            let name = ServerName::try_from(host).map_err(|e| invalid(&e.to_string()))?;
            let stream = tls.connect(name, tcp).await?;
            Ok(TokioIo::new(MaybeTlsStream::Tls(Box::new(stream))))
        })
    }
}

/// One open connection, with or without TLS.
pub enum MaybeTlsStream {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP (boxed: the TLS state is large).
    Tls(Box<TlsStream<TcpStream>>),
}

impl Connection for MaybeTlsStream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl AsyncRead for MaybeTlsStream {
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

impl AsyncWrite for MaybeTlsStream {
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

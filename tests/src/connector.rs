//! Opens the connections of [`crate::HttpClient`]: plain TCP for `http://`, TLS for `https://`.
//!
//! hyper-util's pooled client takes any `tower::Service<Uri>` that yields a connection; this one
//! dials loopback addresses itself so the same client type serves Apiary (mutual TLS) and the
//! etcd baseline (plain or TLS) without a proxy, DNS or system trust store in the way.

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
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::io::ReadBuf;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// Dials `http://` and `https://` URIs; `https://` needs a TLS configuration.
#[derive(Clone)]
pub struct Connector {
    /// Trust anchors and client identity for `https://`; `None` allows plain HTTP only.
    tls: Option<Arc<ClientConfig>>,
}

impl Connector {
    /// A connector that uses `tls` for `https://` URIs (and fails them when it is `None`).
    pub fn new(tls: Option<Arc<ClientConfig>>) -> Self {
        Self { tls }
    }
}

/// One open connection, plain or TLS.
pub enum Stream {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP (boxed: the TLS state is large).
    Tls(Box<TlsStream<TcpStream>>),
}

impl tower::Service<Uri> for Connector {
    type Response = TokioIo<Stream>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let tls = self.tls.clone();
        Box::pin(async move { connect(uri, tls).await.map(TokioIo::new) })
    }
}

/// Dials `uri`'s host and port, with a TLS handshake for `https`.
async fn connect(uri: Uri, tls: Option<Arc<ClientConfig>>) -> io::Result<Stream> {
    let host = uri
        .host()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "URI without a host"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let https = uri.scheme_str() == Some("https");
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let tcp = TcpStream::connect((host.as_str(), port)).await?;
    // Requests are small and latency is what the benchmark measures.
    tcp.set_nodelay(true)?;
    if !https {
        return Ok(Stream::Plain(tcp));
    }
    let tls = tls.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "https URI without a TLS configuration",
        )
    })?;
    let name =
        ServerName::try_from(host).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let stream = TlsConnector::from(tls).connect(name, tcp).await?;
    Ok(Stream::Tls(Box::new(stream)))
}

impl Connection for Stream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl AsyncRead for Stream {
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

impl AsyncWrite for Stream {
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

//! The HTTPS accept loop shared by the API and the peer listeners: TLS handshake (rustls), then
//! HTTP/1.1 or HTTP/2 (hyper-util's auto server, ALPN or preface detection) into an axum
//! [`Router`], and a graceful drain on shutdown.
//!
//! The verified client leaf certificate of a connection, if one was presented, is inserted into
//! every request of that connection as [`ClientCertificate`], where x509 authentication finds it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use apiary_api::auth::ClientCertificate;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioExecutor;
use hyper_util::rt::TokioIo;
use hyper_util::server::conn::auto;
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio::net::TcpStream;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// A client that opens a TCP connection and never finishes the handshake must not hold a task
/// forever.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// After shutdown, open connections (long watches among them) get this long to finish their
/// current requests before they are dropped.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// A transient accept error (too many open files, a reset during accept) is retried after this
/// pause rather than ending the listener.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serves `app` over TLS on `listener` until `shutdown` is cancelled, then stops accepting,
/// asks every connection to finish gracefully and waits up to [`DRAIN_TIMEOUT`] for them.
pub async fn serve_https(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    app: Router,
    shutdown: CancellationToken,
) {
    let acceptor = TlsAcceptor::from(tls);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, remote)) => {
                    connections.spawn(serve_connection(
                        acceptor.clone(),
                        tcp,
                        remote,
                        app.clone(),
                        shutdown.clone(),
                    ));
                }
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::info!(
            open = connections.len(),
            "connections still open after the drain timeout; closing them"
        );
        connections.shutdown().await;
    }
}

async fn serve_connection(
    acceptor: TlsAcceptor,
    tcp: TcpStream,
    remote: SocketAddr,
    app: Router,
    shutdown: CancellationToken,
) {
    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(error)) => {
            tracing::debug!(%remote, %error, "TLS handshake failed");
            return;
        }
        Err(_elapsed) => {
            tracing::debug!(%remote, "TLS handshake timed out");
            return;
        }
    };
    let certificate = tls
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first())
        .map(|leaf| ClientCertificate(leaf.as_ref().to_vec()));
    let service = hyper::service::service_fn(move |mut request: http::Request<Incoming>| {
        if let Some(certificate) = &certificate {
            request.extensions_mut().insert(certificate.clone());
        }
        let app = app.clone();
        // A Router never fails (`Infallible`): errors are responses.
        async move { app.oneshot(request).await }
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(tls), service);
    tokio::pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = shutdown.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(error) = result {
        tracing::debug!(%remote, %error, "connection ended with an error");
    }
}

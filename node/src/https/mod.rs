//! The HTTPS accept loop shared by the API and the peer listeners: TLS handshake (rustls), then
//! HTTP/1.1 or HTTP/2 (hyper-util's auto server, ALPN or preface detection) into an axum
//! [`Router`], within the budgets of [`HttpLimits`], and a graceful drain on shutdown.
//!
//! The verified client leaf certificate of a connection, if one was presented, is inserted into
//! every request of that connection as [`ClientCertificate`], where x509 authentication finds it.
//!
//! # Budgets
//! - connections: at [`HttpLimits::max_connections`] the loop stops accepting until one ends;
//! - handshake: [`HttpLimits::handshake_timeout`];
//! - header, idle and write-stall timeouts: each connection's watchdog (`activity`), fed by
//!   its socket (`io`) and its response bodies (`body`);
//! - request bodies: `body::RequestBody` fails once the body-read timeout has passed;
//! - header size, HTTP/2 streams, frames, windows, resets and pings: hyper's settings
//!   ([`HttpLimits`]);
//! - transfer codings other than `chunked`: 501 (`transfer_encoding`).

mod activity;
mod body;
mod io;
pub mod limits;
mod transfer_encoding;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use apiary_api::audit::PeerAddress;
use apiary_api::auth::ClientCertificate;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioExecutor;
use hyper_util::rt::TokioIo;
use hyper_util::server::conn::auto;
pub use limits::HttpLimits;
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio::net::TcpStream;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use self::activity::Activity;
use self::activity::Expiry;
use self::body::RequestBody;
use self::body::ResponseBody;
use self::io::WatchedIo;

/// After shutdown, open connections (long watches among them) get this long to finish their
/// current requests before they are dropped. An idle connection closed gracefully (HTTP/2:
/// GOAWAY) gets as long to say goodbye.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// A transient accept error (too many open files, a reset during accept) is retried after this
/// pause rather than ending the listener.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// A listener held at its connection cap says so at most this often.
const CAPACITY_WARNING_INTERVAL: Duration = Duration::from_secs(60);

/// The ALPN protocol name of HTTP/2.
const ALPN_H2: &[u8] = b"h2";

/// Serves `app` over TLS on `listener` within `limits` until `shutdown` is cancelled, then
/// stops accepting, asks every connection to finish gracefully and waits up to
/// [`DRAIN_TIMEOUT`] for them.
pub async fn serve_https(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    app: Router,
    limits: HttpLimits,
    shutdown: CancellationToken,
) {
    let acceptor = TlsAcceptor::from(tls);
    let builder = Arc::new(limits.builder());
    let mut connections = JoinSet::new();
    let mut warned_full: Option<Instant> = None;
    loop {
        let full = connections.len() >= limits.max_connections;
        if full && warned_full.is_none_or(|at| at.elapsed() >= CAPACITY_WARNING_INTERVAL) {
            warned_full = Some(Instant::now());
            tracing::warn!(
                limit = limits.max_connections,
                "connection limit reached; not accepting until a connection closes"
            );
        }
        tokio::select! {
            () = shutdown.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept(), if !full => match accepted {
                Ok((tcp, remote)) => {
                    connections.spawn(serve_connection(Connection {
                        acceptor: acceptor.clone(),
                        builder: builder.clone(),
                        limits: limits.clone(),
                        app: app.clone(),
                        remote,
                        shutdown: shutdown.clone(),
                    }, tcp));
                }
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
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

/// What serving one accepted connection needs.
struct Connection {
    acceptor: TlsAcceptor,
    builder: Arc<auto::Builder<TokioExecutor>>,
    limits: HttpLimits,
    app: Router,
    remote: SocketAddr,
    shutdown: CancellationToken,
}

/// Turns on TCP keep-alive probes ([`limits::TCP_KEEPALIVE`]), so a vanished client's connection
/// is found even while nothing is written to it, and turns off Nagle's algorithm, so the last
/// partial segment of a response is sent at once rather than held until the client's delayed
/// acknowledgement of the segments before it (up to 40 ms on Linux; Go, hence kube-apiserver
/// and etcd, sets `TCP_NODELAY` on every connection).
fn tune_socket(tcp: &TcpStream) -> std::io::Result<()> {
    tcp.set_nodelay(true)?;
    rustix::net::sockopt::set_socket_keepalive(tcp, true)?;
    rustix::net::sockopt::set_tcp_keepidle(tcp, limits::TCP_KEEPALIVE)?;
    rustix::net::sockopt::set_tcp_keepintvl(tcp, limits::TCP_KEEPALIVE)?;
    Ok(())
}

async fn serve_connection(connection: Connection, tcp: TcpStream) {
    let Connection {
        acceptor,
        builder,
        limits,
        app,
        remote,
        shutdown,
    } = connection;
    if let Err(error) = tune_socket(&tcp) {
        tracing::debug!(%remote, %error, "cannot set the connection's TCP options");
    }
    let tls = match tokio::time::timeout(limits.handshake_timeout, acceptor.accept(tcp)).await {
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
    let session = tls.get_ref().1;
    let certificate = session
        .peer_certificates()
        .and_then(|chain| chain.first())
        .map(|leaf| ClientCertificate::new(leaf.as_ref().to_vec()));
    let activity = Activity::new(limits.clone(), session.alpn_protocol() == Some(ALPN_H2));
    let body_timeout = limits.body_read_timeout;
    let requests = activity.clone();
    let service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
        let guard = requests.request_started(request.version() == http::Version::HTTP_2);
        let refusal = transfer_encoding::refusal(request.headers());
        let (mut parts, body) = request.into_parts();
        if let Some(certificate) = &certificate {
            parts.extensions.insert(certificate.clone());
        }
        parts.extensions.insert(PeerAddress(remote));
        let request = http::Request::from_parts(parts, RequestBody::new(body, body_timeout));
        let app = app.clone();
        async move {
            let response = match refusal {
                Some(refusal) => refusal,
                // A Router never fails (`Infallible`): errors are responses.
                None => app.oneshot(request).await?,
            };
            Ok::<_, Infallible>(response.map(|body| ResponseBody::new(body, guard)))
        }
    });
    let io = WatchedIo::new(tls, activity.clone(), limits.write_stall_timeout);
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
    tokio::pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = shutdown.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
        expiry = activity.expired() => {
            tracing::debug!(%remote, ?expiry, "closing the connection");
            if expiry != Expiry::Idle {
                return;
            }
            connection.as_mut().graceful_shutdown();
            match tokio::time::timeout(DRAIN_TIMEOUT, connection).await {
                Ok(result) => result,
                Err(_elapsed) => return,
            }
        }
    };
    if let Err(error) = result {
        tracing::debug!(%remote, %error, "connection ended with an error");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // An accepted connection sends without Nagle's delay and probes a vanished peer.
    #[tokio::test]
    async fn accepted_sockets_send_at_once_and_keep_alive() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (_client, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
        let (tcp, _) = accepted.expect("accept");
        assert!(!tcp.nodelay().expect("nodelay"));
        tune_socket(&tcp).expect("tuned");
        assert!(tcp.nodelay().expect("nodelay"));
        assert!(rustix::net::sockopt::socket_keepalive(&tcp).expect("keepalive"));
        assert_eq!(
            rustix::net::sockopt::tcp_keepidle(&tcp).expect("keepidle"),
            limits::TCP_KEEPALIVE
        );
    }
}

//! Tests of the HTTP transport against small local servers: answers, deadlines, refusals.

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use bytes::Bytes;
use hyper_util::rt::TokioIo;

use super::*;

async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}")
}

fn test_router() -> Router {
    Router::new()
        .route("/raft/echo", post(|body: Bytes| async move { body }))
        .route(
            "/raft/slow",
            post(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "late"
            }),
        )
        .route(
            "/raft/refuse",
            post(|| async { (StatusCode::BAD_REQUEST, "no thanks") }),
        )
}

#[tokio::test]
async fn answers_carry_the_peer_body() {
    let url = serve(test_router()).await;
    let transport = HttpTransport::new(None);
    for _ in 0..3 {
        // Repeated calls reuse the pooled connection.
        let answer = transport
            .call(
                &url,
                "echo",
                Bytes::from_static(b"ping"),
                Duration::from_secs(2),
            )
            .await
            .unwrap();
        assert_eq!(Bytes::from_static(b"ping"), answer);
    }
}

#[tokio::test]
async fn a_slow_peer_times_out_at_the_deadline() {
    let url = serve(test_router()).await;
    let transport = HttpTransport::new(None);
    let started = tokio::time::Instant::now();
    let err = transport
        .call(&url, "slow", Bytes::new(), Duration::from_millis(100))
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn refusals_and_unknown_rpcs_are_rejected_with_their_status() {
    let url = serve(test_router()).await;
    let transport = HttpTransport::new(None);
    let err = transport
        .call(&url, "refuse", Bytes::new(), Duration::from_secs(2))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransportError::Rejected { status: 400, message, .. } if message == "no thanks"),
        "{err:?}"
    );
    let err = transport
        .call(&url, "missing", Bytes::new(), Duration::from_secs(2))
        .await
        .unwrap_err();
    assert!(
        matches!(err, TransportError::Rejected { status: 404, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn nobody_listening_is_unreachable_and_bad_urls_are_invalid() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let transport = HttpTransport::new(None);
    let err = transport
        .call(&url, "echo", Bytes::new(), Duration::from_secs(2))
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Unreachable { .. }), "{err:?}");

    let err = transport
        .call("not a url", "echo", Bytes::new(), Duration::from_secs(2))
        .await
        .unwrap_err();
    assert!(
        matches!(err, TransportError::InvalidTarget { .. }),
        "{err:?}"
    );

    // https needs a TLS client config; without one the peer cannot be reached.
    let err = transport
        .call(
            "https://127.0.0.1:1",
            "echo",
            Bytes::new(),
            Duration::from_secs(2),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Unreachable { .. }), "{err:?}");
}

/// Serves `router` over TLS with a fresh self-signed certificate for `localhost`; returns the
/// peer URL and the certificate to trust.
async fn serve_tls(router: Router) -> (String, rustls::pki_types::CertificateDer<'static>) {
    use rustls::pki_types::PrivateKeyDer;
    use rustls::pki_types::PrivatePkcs8KeyDer;
    use tower::ServiceExt;

    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert = certified.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let router = router.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service =
                    hyper::service::service_fn(move |request| router.clone().oneshot(request));
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (format!("https://localhost:{port}"), cert)
}

#[tokio::test]
async fn https_peers_are_called_over_tls() {
    let (url, cert) = serve_tls(test_router()).await;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let transport = HttpTransport::new(Some(Arc::new(config)));
    let answer = transport
        .call(
            &url,
            "echo",
            Bytes::from_static(b"secret"),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(Bytes::from_static(b"secret"), answer);

    // A client that does not trust the server's certificate never gets an answer.
    let untrusting = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    let err = HttpTransport::new(Some(Arc::new(untrusting)))
        .call(&url, "echo", Bytes::new(), Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Unreachable { .. }), "{err:?}");
}

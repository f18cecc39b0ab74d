//! Connection hygiene (C7, C8): 500 idle TLS connections and a few TCP connections that never
//! start TLS neither keep a new client from being served nor stay open forever; a client that
//! sends its request headers one byte every 2 s is disconnected by the header timeout; a
//! `Transfer-Encoding` other than plain `chunked` is answered 501 and nothing is stored.

use std::time::Duration;
use std::time::Instant;

use apiary_tests::Flavor;
use apiary_tests::HttpClient;
use apiary_tests::objects;
use apiary_tests::raw_connection::RawConnection;
use futures::StreamExt;
use http::StatusCode;

use crate::ANSWER_LIMIT;
use crate::Hostile;

/// How many idle TLS connections are opened to one replica (the count).
const IDLE_CONNECTIONS: usize = 500;

/// How many TCP connections that never start the TLS handshake are opened besides.
const UNSTARTED_CONNECTIONS: usize = 5;

/// How many connections are being opened at a time.
const OPENING_CONCURRENCY: usize = 50;

/// Kubernetes' request-header read timeout (`ReadHeaderTimeout`, `server/secure_serving.go`).
const HEADER_TIMEOUT: Duration = Duration::from_secs(32);

/// Kubernetes' idle keep-alive timeout (`IdleTimeout`, `server/secure_serving.go`): the longest
/// any of the idle connections may stay open, whichever timeout the server applies to a
/// connection that never sent a request.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// What a loaded machine may add to a timeout before the close is seen.
const SLACK: Duration = Duration::from_secs(13);

/// The pause between two bytes of the slow client's request.
const TRICKLE_PAUSE: Duration = Duration::from_secs(2);

/// The request head the slow client trickles: never finished within the time it gets.
fn slow_request() -> Vec<u8> {
    let mut head = b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".to_vec();
    head.extend(std::iter::repeat_n(b'a', 100));
    head
}

/// A create whose body is sent chunked under `Transfer-Encoding: gzip, chunked` (but not
/// gzipped): Go refuses the encoding before it reads the body.
fn gzip_chunked_create(name: &str) -> Vec<u8> {
    let body = objects::configmap(name, &[("v", "1")]).to_string();
    format!(
        "POST {} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        objects::configmaps_path(),
        body.len()
    )
    .into_bytes()
}

#[tokio::test]
async fn idle_slow_and_oddly_encoded_connections_are_bounded() {
    let hostile = Hostile::start(Flavor::Platform).await;
    let endpoint = hostile
        .cluster
        .endpoint(1)
        .await
        .expect("node-1's endpoint");

    let idle: Vec<RawConnection> = futures::stream::iter(0..IDLE_CONNECTIONS)
        .map(|_| RawConnection::tls(&endpoint))
        .buffer_unordered(OPENING_CONCURRENCY)
        .map(|opened| opened.expect("a TLS connection to node-1"))
        .collect()
        .await;
    let mut unstarted = Vec::with_capacity(UNSTARTED_CONNECTIONS);
    for _ in 0..UNSTARTED_CONNECTIONS {
        unstarted.push(
            RawConnection::tcp(&endpoint)
                .await
                .expect("a TCP connection to node-1"),
        );
    }
    let opened = Instant::now();

    let slow = async {
        let mut connection = RawConnection::tls(&endpoint)
            .await
            .expect("a TLS connection to node-1");
        connection
            .trickle(&slow_request(), TRICKLE_PAUSE, HEADER_TIMEOUT + SLACK)
            .await
    };
    let served = async {
        // A new client (its own connection) is served while the others sit idle.
        let client = HttpClient::new(&endpoint.server, Some(endpoint.tls.clone()))
            .with_timeout(ANSWER_LIMIT);
        let ready = client.get("/readyz").await.expect("node-1 answers");
        assert_eq!(ready.status, StatusCode::OK, "{}", ready.text());
        let created = client
            .post(
                &objects::configmaps_path(),
                &objects::configmap("served", &[("v", "1")]),
            )
            .await
            .expect("node-1 answers");
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());

        let mut raw = RawConnection::tls(&endpoint)
            .await
            .expect("a TLS connection to node-1");
        let answer = raw
            .exchange(&gzip_chunked_create("gzip-chunked"), ANSWER_LIMIT)
            .await
            .expect("the request is sent");
        assert_eq!(answer.status(), Some(501), "{}", answer.text());
        assert!(
            answer
                .text()
                .to_lowercase()
                .contains("unsupported transfer encoding"),
            "{}",
            answer.text()
        );
        hostile
            .assert_absent(&objects::configmap_path("gzip-chunked"))
            .await;
    };
    let (slow_closed, ()) = futures::join!(slow, served);
    eprintln!("the slow client was disconnected after {slow_closed:?}");
    assert!(
        slow_closed.is_some(),
        "a client trickling its headers was held for {:?}",
        HEADER_TIMEOUT + SLACK
    );

    let left = (IDLE_TIMEOUT + SLACK).saturating_sub(opened.elapsed());
    let closes = futures::future::join_all(
        idle.into_iter()
            .chain(unstarted)
            .map(|mut connection| async move { connection.read_until_closed(left).await.closed }),
    )
    .await;
    let still_open = closes.iter().filter(|closed| !**closed).count();
    eprintln!(
        "idle connections closed by {:?} after they opened",
        opened.elapsed()
    );
    assert_eq!(
        still_open,
        0,
        "of {} idle connections, {still_open} were still open {:?} after they opened",
        closes.len(),
        IDLE_TIMEOUT + SLACK
    );

    hostile.assert_unharmed().await;
}

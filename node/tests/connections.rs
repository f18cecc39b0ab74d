//! The connection budgets of the HTTPS listener ([`HttpLimits`]) against hostile clients, over
//! real TLS on loopback: `serve_https` in process with shortened limits and a small router,
//! driven by raw HTTP/1.1 bytes, raw HTTP/2 frames or hyper's HTTP/2 client.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed unwrap is a failed test"
)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use apiary_node::config::ApiTlsFiles;
use apiary_node::dev::DevPki;
use apiary_node::https::HttpLimits;
use apiary_node::https::serve_https;
use apiary_node::tls;
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::routing::get;
use axum::routing::post;
use bytes::Bytes;
use http::StatusCode;
use http_body_util::BodyExt;
use http_body_util::Empty;
use hyper_util::rt::TokioExecutor;
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::pki_types::ServerName;
use tokio::io::AsyncRead;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_util::sync::CancellationToken;

/// How long any budget of these tests may take to act, once it is due (liveness bound).
const ACT_WITHIN: Duration = Duration::from_secs(10);

/// The size of each chunk of `/stream`.
const STREAM_CHUNK: usize = 64 * 1024;

const HTTP1: &[u8] = b"http/1.1";
const HTTP2: &[u8] = b"h2";

/// Counters the router keeps.
#[derive(Default)]
struct Seen {
    /// `/stream` bodies not yet dropped.
    open_streams: AtomicUsize,
    /// Requests `/echo` received.
    echoes: AtomicUsize,
}

/// Counts one `/stream` body while it lives.
struct OpenStream(Arc<Seen>);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::SeqCst);
    }
}

fn router(seen: Arc<Seen>) -> Router {
    Router::new()
        .route("/hello", get(|| async { "hello" }))
        .route(
            "/echo",
            post(|State(seen): State<Arc<Seen>>, body: Body| async move {
                seen.echoes.fetch_add(1, Ordering::SeqCst);
                match axum::body::to_bytes(body, 1 << 22).await {
                    Ok(bytes) => (StatusCode::OK, bytes),
                    Err(error) => (StatusCode::BAD_REQUEST, Bytes::from(error.to_string())),
                }
            }),
        )
        .route(
            "/stream",
            get(|State(seen): State<Arc<Seen>>| async move {
                seen.open_streams.fetch_add(1, Ordering::SeqCst);
                let open = OpenStream(seen);
                // Endless: only a client that reads ends it, or the server dropping it.
                let chunks = futures::stream::unfold(open, |open| async move {
                    Some((
                        Ok::<_, Infallible>(Bytes::from(vec![b'x'; STREAM_CHUNK])),
                        open,
                    ))
                });
                Body::from_stream(chunks)
            }),
        )
        .with_state(seen)
}

struct Server {
    addr: SocketAddr,
    roots: Arc<RootCertStore>,
    seen: Arc<Seen>,
    stop: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Server {
    async fn start(limits: HttpLimits) -> Self {
        tls::install_crypto_provider();
        let dir = tempfile::tempdir().unwrap();
        let pki = DevPki::load_or_generate(dir.path(), 1).unwrap();
        let server_tls = tls::api_server_config(
            &ApiTlsFiles {
                cert: pki.serving[0].cert_path.clone(),
                key: pki.serving[0].key_path.clone(),
                client_ca: None,
            },
            &[],
        )
        .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Seen::default());
        let stop = CancellationToken::new();
        tokio::spawn(serve_https(
            listener,
            server_tls,
            router(seen.clone()),
            limits,
            stop.clone(),
        ));
        Self {
            addr,
            roots: tls::load_roots(&pki.ca.cert_path).unwrap(),
            seen,
            stop,
            _dir: dir,
        }
    }

    /// A TLS connection offering only `alpn`.
    async fn connect(&self, alpn: &[u8]) -> TlsStream<TcpStream> {
        let mut config = ClientConfig::builder()
            .with_root_certificates(self.roots.clone())
            .with_no_client_auth();
        config.alpn_protocols = vec![alpn.to_vec()];
        let tcp = TcpStream::connect(self.addr).await.unwrap();
        TlsConnector::from(Arc::new(config))
            .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
            .await
            .unwrap()
    }

    fn open_streams(&self) -> usize {
        self.seen.open_streams.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Reads until the server closes the connection (end of stream or an error), within `limit`;
/// how long that took.
async fn closed_within(stream: &mut (impl AsyncRead + Unpin), limit: Duration) -> Duration {
    let started = Instant::now();
    let mut sink = vec![0; 64 * 1024];
    let read_all = async {
        while let Ok(n) = stream.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::time::timeout(limit, read_all)
        .await
        .expect("the server did not close the connection");
    started.elapsed()
}

/// Whether the connection is still open (no end of stream, no error, no data) after `wait`.
async fn still_open_after(stream: &mut (impl AsyncRead + Unpin), wait: Duration) -> bool {
    let mut byte = [0];
    tokio::time::timeout(wait, stream.read(&mut byte))
        .await
        .is_err()
}

/// An HTTP/1.1 response: status code, head and body (by `Content-Length`).
struct Response {
    status: u16,
    head: String,
    body: Vec<u8>,
}

async fn read_response(stream: &mut (impl AsyncRead + Unpin)) -> Response {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0];
        assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "{head:?}");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let status = head[9..12].parse().unwrap();
    let length = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_owned)
        })
        .map_or(0, |l| l.trim().parse().unwrap());
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.unwrap();
    Response { status, head, body }
}

async fn exchange(stream: &mut TlsStream<TcpStream>, request: &[u8]) -> Response {
    stream.write_all(request).await.unwrap();
    tokio::time::timeout(ACT_WITHIN, read_response(stream))
        .await
        .expect("no response")
}

const HELLO: &[u8] = b"GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// Sends the start of a request, then one more header byte every 200 ms, until the server
/// closes the connection; how long that took.
async fn trickle_until_closed(stream: TlsStream<TcpStream>) -> Duration {
    let (mut reader, mut writer) = tokio::io::split(stream);
    let trickle = tokio::spawn(async move {
        let mut written = writer.write_all(b"GET /hello HTTP/1.1\r\nX-Slow: ").await;
        while written.is_ok() {
            tokio::time::sleep(Duration::from_millis(200)).await;
            written = writer.write_all(b"a").await;
        }
    });
    let elapsed = closed_within(&mut reader, ACT_WITHIN).await;
    trickle.abort();
    elapsed
}

#[tokio::test]
async fn headers_sent_slowly_are_cut_off_at_the_header_timeout() {
    let server = Server::start(HttpLimits {
        header_read_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(120),
        ..HttpLimits::default()
    })
    .await;
    // A new connection: the header timeout runs from the handshake.
    trickle_until_closed(server.connect(HTTP1).await).await;

    // A kept-alive connection: from the first byte of the next request, not the idle timeout.
    let mut stream = server.connect(HTTP1).await;
    let response = exchange(&mut stream, HELLO).await;
    assert_eq!((response.status, &response.body[..]), (200, &b"hello"[..]));
    trickle_until_closed(stream).await;

    // The server still serves.
    let mut stream = server.connect(HTTP1).await;
    assert_eq!(exchange(&mut stream, HELLO).await.status, 200);
}

#[tokio::test]
async fn a_handshake_never_finished_is_dropped_at_the_handshake_timeout() {
    let server = Server::start(HttpLimits {
        handshake_timeout: Duration::from_secs(1),
        ..HttpLimits::default()
    })
    .await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    closed_within(&mut tcp, ACT_WITHIN).await;
}

#[tokio::test]
async fn an_idle_http1_connection_is_closed_at_the_idle_timeout_not_the_header_timeout() {
    let server = Server::start(HttpLimits {
        header_read_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(4),
        ..HttpLimits::default()
    })
    .await;
    let mut stream = server.connect(HTTP1).await;
    assert_eq!(exchange(&mut stream, HELLO).await.status, 200);
    assert!(
        still_open_after(&mut stream, Duration::from_secs(2)).await,
        "closed at the header timeout"
    );
    // Requests reset the idle timer.
    assert_eq!(exchange(&mut stream, HELLO).await.status, 200);
    assert!(still_open_after(&mut stream, Duration::from_secs(2)).await);
    closed_within(&mut stream, ACT_WITHIN).await;
}

#[tokio::test]
async fn an_idle_http2_connection_is_closed_at_the_idle_timeout() {
    let server = Server::start(HttpLimits {
        header_read_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(4),
        ..HttpLimits::default()
    })
    .await;
    let stream = server.connect(HTTP2).await;
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    let connection = tokio::spawn(connection);
    let request = http::Request::get("https://127.0.0.1/hello")
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"hello");

    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!connection.is_finished(), "closed at the header timeout");
    tokio::time::timeout(ACT_WITHIN, connection)
        .await
        .expect("the idle HTTP/2 connection stayed open")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_body_announced_and_never_sent_is_answered_at_the_body_timeout() {
    let server = Server::start(HttpLimits {
        body_read_timeout: Duration::from_secs(1),
        ..HttpLimits::default()
    })
    .await;
    let mut stream = server.connect(HTTP1).await;
    let response = exchange(
        &mut stream,
        b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n0123456789",
    )
    .await;
    assert_eq!(response.status, 400);
    let message = String::from_utf8_lossy(&response.body);
    assert!(
        message.contains("the request body did not arrive within 1s"),
        "{message}"
    );
    // The rest of the body can no longer be told from the next request: the connection ends.
    closed_within(&mut stream, ACT_WITHIN).await;

    // A body that arrives in time is read.
    let mut stream = server.connect(HTTP1).await;
    let response = exchange(
        &mut stream,
        b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello",
    )
    .await;
    assert_eq!((response.status, &response.body[..]), (200, &b"hello"[..]));
}

/// A request whose header block is `size` bytes (without the blank line ending it).
fn request_with_header_block(size: usize, complete: bool) -> Vec<u8> {
    let start = b"GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ";
    let mut request = start.to_vec();
    request.resize(size, b'a');
    if complete {
        request.extend_from_slice(b"\r\n\r\n");
    }
    request
}

#[tokio::test]
async fn a_header_block_over_the_limit_is_answered_431() {
    let server = Server::start(HttpLimits {
        max_header_bytes: 16 * 1024,
        ..HttpLimits::default()
    })
    .await;
    let mut stream = server.connect(HTTP1).await;
    let response = exchange(
        &mut stream,
        &request_with_header_block(16 * 1024 + 1, false),
    )
    .await;
    assert_eq!(response.status, 431, "{}", response.head);
    closed_within(&mut stream, ACT_WITHIN).await;

    let mut stream = server.connect(HTTP1).await;
    let response = exchange(&mut stream, &request_with_header_block(15 * 1024, true)).await;
    assert_eq!(response.status, 200);
}

#[tokio::test]
async fn the_default_header_limit_is_one_mebibyte() {
    let server = Server::start(HttpLimits::default()).await;
    // More than hyper's own default buffer (about 400 KiB), less than 1 MiB: served.
    let mut stream = server.connect(HTTP1).await;
    let response = exchange(&mut stream, &request_with_header_block(1000 * 1024, true)).await;
    assert_eq!(response.status, 200);

    let mut stream = server.connect(HTTP1).await;
    let response = exchange(
        &mut stream,
        &request_with_header_block((1 << 20) + 1, false),
    )
    .await;
    assert_eq!(response.status, 431, "{}", response.head);
}

#[tokio::test]
async fn the_connection_cap_pauses_accepting_until_a_connection_closes() {
    let server = Server::start(HttpLimits {
        max_connections: 2,
        ..HttpLimits::default()
    })
    .await;
    let mut first = server.connect(HTTP1).await;
    let mut second = server.connect(HTTP1).await;
    assert_eq!(exchange(&mut first, HELLO).await.status, 200);
    assert_eq!(exchange(&mut second, HELLO).await.status, 200);

    // The third waits in the backlog: its handshake does not finish while two are open.
    let third = {
        let roots = server.roots.clone();
        let addr = server.addr;
        tokio::spawn(async move {
            let config = ClientConfig::builder()
                .with_root_certificates(roots)
                .with_no_client_auth();
            let tcp = TcpStream::connect(addr).await.unwrap();
            TlsConnector::from(Arc::new(config))
                .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
                .await
                .unwrap()
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!third.is_finished(), "a third connection was accepted");

    drop(first);
    let mut third = tokio::time::timeout(ACT_WITHIN, third)
        .await
        .expect("not accepted after a connection closed")
        .unwrap();
    assert_eq!(exchange(&mut third, HELLO).await.status, 200);
    assert_eq!(exchange(&mut second, HELLO).await.status, 200);
}

#[tokio::test]
async fn an_http1_client_that_stops_reading_is_dropped_at_the_write_stall_timeout() {
    // One connection at a time: the next one is served only if the stalled one was let go.
    let server = Server::start(HttpLimits {
        write_stall_timeout: Duration::from_secs(1),
        max_connections: 1,
        ..HttpLimits::default()
    })
    .await;
    let mut stalled = server.connect(HTTP1).await;
    stalled
        .write_all(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    wait_for(|| server.open_streams() == 1, "the stream to start").await;
    // Never read: the socket buffers fill, writes block, and the response is dropped.
    wait_for(
        || server.open_streams() == 0,
        "the stalled stream to be dropped",
    )
    .await;

    let mut next = server.connect(HTTP1).await;
    assert_eq!(exchange(&mut next, HELLO).await.status, 200);
    drop(stalled);
}

/// Waits until `done` holds, within [`ACT_WITHIN`].
async fn wait_for(done: impl Fn() -> bool, what: &str) {
    let deadline = Instant::now() + ACT_WITHIN;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// Raw HTTP/2: frames as the client writes them, and as the server's are read.

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA: u8 = 0;
const HEADERS: u8 = 1;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const GOAWAY: u8 = 7;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const CANCEL: u32 = 0x8;
const ENHANCE_YOUR_CALM: u32 = 0xb;

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let length = u32::try_from(payload.len()).unwrap().to_be_bytes();
    let mut frame = length[1..].to_vec();
    frame.extend_from_slice(&[kind, flags]);
    frame.extend_from_slice(&stream.to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// A GET of `path`, HPACK-encoded with the static table and literals only.
fn get_headers(path: &str) -> Vec<u8> {
    // :method GET, :scheme https (indexed); :path, :authority (literal, indexed name).
    let mut block = vec![0x82, 0x87];
    for (name_index, value) in [(4u8, path), (1, "127.0.0.1")] {
        block.push(name_index);
        block.push(u8::try_from(value.len()).unwrap());
        block.extend_from_slice(value.as_bytes());
    }
    block
}

struct Frame {
    kind: u8,
    payload: Vec<u8>,
}

async fn read_frame(stream: &mut (impl AsyncRead + Unpin)) -> std::io::Result<Frame> {
    let mut header = [0; 9];
    stream.read_exact(&mut header).await?;
    let length = u32::from_be_bytes([0, header[0], header[1], header[2]]);
    let mut payload = vec![0; usize::try_from(length).unwrap()];
    stream.read_exact(&mut payload).await?;
    Ok(Frame {
        kind: header[3],
        payload,
    })
}

/// The server's first SETTINGS frame, as (identifier, value) pairs.
async fn server_settings(stream: &mut TlsStream<TcpStream>) -> Vec<(u16, u32)> {
    stream.write_all(PREFACE).await.unwrap();
    stream.write_all(&frame(SETTINGS, 0, 0, &[])).await.unwrap();
    let settings = read_frame(stream).await.unwrap();
    assert_eq!(settings.kind, SETTINGS);
    settings
        .payload
        .chunks_exact(6)
        .map(|s| {
            (
                u16::from_be_bytes([s[0], s[1]]),
                u32::from_be_bytes([s[2], s[3], s[4], s[5]]),
            )
        })
        .collect()
}

#[tokio::test]
async fn http2_settings_carry_the_stream_cap_and_kubernetes_sizes() {
    let server = Server::start(HttpLimits::default()).await;
    let mut stream = server.connect(HTTP2).await;
    let settings = server_settings(&mut stream).await;
    let setting = |id: u16| settings.iter().find(|(i, _)| *i == id).map(|(_, v)| *v);
    assert_eq!(
        setting(0x3),
        Some(1_000),
        "MAX_CONCURRENT_STREAMS: {settings:?}"
    );
    assert_eq!(setting(0x4), Some(256 * 1024), "INITIAL_WINDOW_SIZE");
    assert_eq!(setting(0x5), Some(256 * 1024), "MAX_FRAME_SIZE");
    assert_eq!(setting(0x6), Some(1 << 20), "MAX_HEADER_LIST_SIZE");
}

#[tokio::test]
async fn http2_rapid_reset_closes_the_connection() {
    let server = Server::start(HttpLimits::default()).await;
    let mut stream = server.connect(HTTP2).await;
    server_settings(&mut stream).await;
    let mut burst = Vec::new();
    for i in 0..100u32 {
        let id = 2 * i + 1;
        burst.extend(frame(
            HEADERS,
            END_HEADERS | END_STREAM,
            id,
            &get_headers("/hello"),
        ));
        burst.extend(frame(RST_STREAM, 0, id, &CANCEL.to_be_bytes()));
    }
    stream.write_all(&burst).await.unwrap();
    let goaway = tokio::time::timeout(ACT_WITHIN, async {
        loop {
            let frame = read_frame(&mut stream).await.unwrap();
            if frame.kind == GOAWAY {
                return frame;
            }
        }
    })
    .await
    .expect("no GOAWAY");
    let code = u32::from_be_bytes(goaway.payload[4..8].try_into().unwrap());
    assert_eq!(code, ENHANCE_YOUR_CALM);

    let mut next = server.connect(HTTP1).await;
    assert_eq!(exchange(&mut next, HELLO).await.status, 200);
}

#[tokio::test]
async fn an_http2_stream_whose_window_is_never_reopened_is_dropped_at_the_write_stall_timeout() {
    let server = Server::start(HttpLimits {
        write_stall_timeout: Duration::from_secs(1),
        max_connections: 1,
        ..HttpLimits::default()
    })
    .await;
    let mut stalled = server.connect(HTTP2).await;
    stalled.write_all(PREFACE).await.unwrap();
    stalled
        .write_all(&frame(SETTINGS, 0, 0, &[]))
        .await
        .unwrap();
    stalled
        .write_all(&frame(
            HEADERS,
            END_HEADERS | END_STREAM,
            1,
            &get_headers("/stream"),
        ))
        .await
        .unwrap();
    // The server fills the stream's 64 KiB window, which the client never reopens (no
    // WINDOW_UPDATE); the socket itself keeps room, so only the stream is stalled.
    let mut data = 0;
    while data < 65_535 {
        let frame = read_frame(&mut stalled).await.unwrap();
        if frame.kind == DATA {
            data += frame.payload.len();
        }
    }
    assert_eq!(server.open_streams(), 1);
    wait_for(
        || server.open_streams() == 0,
        "the stalled stream to be dropped",
    )
    .await;
    closed_within(&mut stalled, ACT_WITHIN).await;

    let mut next = server.connect(HTTP1).await;
    assert_eq!(exchange(&mut next, HELLO).await.status, 200);
}

// Transfer codings: Go's answer, before the router sees the request.

#[tokio::test]
async fn transfer_codings_other_than_chunked_are_answered_501() {
    let server = Server::start(HttpLimits::default()).await;
    for codings in [
        "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
    ] {
        let mut stream = server.connect(HTTP1).await;
        let request = format!("POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n{codings}\r\n0\r\n\r\n");
        let response = exchange(&mut stream, request.as_bytes()).await;
        assert_eq!(response.status, 501, "{codings}");
        assert!(
            response
                .head
                .starts_with("HTTP/1.1 501 Not Implemented\r\n")
        );
        let head = response.head.to_ascii_lowercase();
        assert!(
            head.contains("content-type: text/plain; charset=utf-8\r\n"),
            "{head}"
        );
        assert!(head.contains("connection: close\r\n"), "{head}");
        assert_eq!(response.body, b"Unsupported transfer encoding");
        closed_within(&mut stream, ACT_WITHIN).await;
    }
    assert_eq!(
        server.seen.echoes.load(Ordering::SeqCst),
        0,
        "the router saw it"
    );

    // Plain chunked is read.
    let mut stream = server.connect(HTTP1).await;
    let response = exchange(
        &mut stream,
        b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    )
    .await;
    assert_eq!((response.status, &response.body[..]), (200, &b"hello"[..]));
}

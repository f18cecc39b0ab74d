//! The budgets of one HTTPS listener ([`HttpLimits`]): how long a client may take to send its
//! request, how long an idle connection stays open, how large a header block may be, how many
//! connections and HTTP/2 streams it may hold, and how long a write may stall. Defaults are
//! kube-apiserver's (`k8s.io/apiserver/pkg/server/secure_serving.go`,
//! `options/recommended.go`) where it has a value; tests shorten them.

use std::time::Duration;

use hyper_util::rt::TokioExecutor;
use hyper_util::rt::TokioTimer;
use hyper_util::server::conn::auto;

/// The whole request header block must arrive within this long (measured from the TLS
/// handshake on a new connection, from the first byte of the next request on a kept-alive
/// one): kube-apiserver's `ReadHeaderTimeout` (32 s, "just shy of requestTimeoutUpperBound").
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);

/// A connection with no request in progress is closed after this long: kube-apiserver's
/// `IdleTimeout` (90 s, "matches http.DefaultTransport keep-alive timeout"), for HTTP/1.1 and
/// HTTP/2 alike.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The largest request header block, in bytes: kube-apiserver's `MaxHeaderBytes` (1 MiB).
/// HTTP/1.1 answers a larger one 431 and closes; HTTP/2 advertises it as
/// `SETTINGS_MAX_HEADER_LIST_SIZE`. hyper also answers 431 to an HTTP/1.1 request with more
/// than 100 header fields (its default count; Go counts only bytes).
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// HTTP/2 streams one connection may have open at once (`SETTINGS_MAX_CONCURRENT_STREAMS`):
/// `HTTP2MaxStreamsPerConnection` of Kubernetes' recommended options (1,000, for clients that
/// multiplex many long-running requests over one connection).
pub const MAX_CONCURRENT_STREAMS: u32 = 1_000;

/// A client that opens a TCP connection and never finishes the TLS handshake is dropped after
/// this long. kube-apiserver's Go server allows its shortest read timeout (the header timeout,
/// 32 s); a handshake takes milliseconds, so 10 s is ample and frees a slot sooner.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A request body must have arrived completely this long after its headers, or reading it
/// fails (the handler answers 400). Kubernetes ends every non-long-running request after its
/// default `--request-timeout` of 60 s, a body that never arrives included; at this budget the
/// largest body accepted (3 MiB) still arrives over a 52 KiB/s link. Watches and other
/// long-running requests have no body and are not affected.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// A connection whose writes make no progress for this long is dropped: the client stopped
/// reading (a full TCP window on HTTP/1.1, an HTTP/2 stream or connection window it never
/// reopens), and what the response still holds is released. Kubernetes' 60 s request timeout
/// again: longer than any stall of a healthy client, short enough that a client that never
/// reads cannot pin a response or a watch.
pub const WRITE_STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Open connections per listener. At the cap the listener stops accepting until one closes
/// (new connections wait in the kernel's accept backlog, as behind Go's
/// `netutil.LimitListener`); the accepted ones are not disturbed. kube-apiserver has no such
/// cap (it bounds requests in flight instead); 8,192 is far above what a replica sees (client
/// libraries multiplex a process's requests over one HTTP/2 connection, so it is about one
/// per kubelet, controller or user) and bounds the memory and file descriptors connections
/// can take.
pub const MAX_CONNECTIONS: usize = 8_192;

/// Largest HTTP/2 frame payload a client may send and the initial flow-control window of a
/// stream: Kubernetes' `resourceBody99Percentile` (256 KiB), which it uses for both ("big
/// enough to accommodate most API POST requests in a single frame").
pub const HTTP2_FRAME_AND_STREAM_WINDOW: u32 = 256 * 1024;

/// The connection-level HTTP/2 flow-control window: request body bytes a connection may have
/// in flight across its streams before the handlers read them. Go's and hyper's default
/// (1 MiB) rather than Kubernetes' 256 KiB per stream times the stream cap (250 MiB per
/// connection), so a connection cannot make a replica buffer more than 1 MiB of unread bodies.
pub const HTTP2_CONNECTION_WINDOW: u32 = 1 << 20;

/// Streams a client may open and reset before the server accepted them, after which the
/// connection is closed with `ENHANCE_YOUR_CALM` (the HTTP/2 rapid-reset attack,
/// CVE-2023-44487): the h2 crate's default (20).
pub const HTTP2_MAX_PENDING_ACCEPT_RESETS: usize = 20;

/// Streams the server may reset because the client broke the protocol on them, after which
/// the connection is closed (CVE-2025-8671, "MadeYouReset"): hyper's default (1,024).
pub const HTTP2_MAX_LOCAL_ERROR_RESETS: usize = 1_024;

/// An HTTP/2 connection is pinged after this long without a frame from the client, and closed
/// if the answer takes longer than [`HTTP2_PING_TIMEOUT`]: a client that vanished without a
/// FIN (a dead node, a cut link) does not hold its watches until they time out. The values of
/// client-go's own HTTP/2 health check (`ReadIdleTimeout` 30 s, `PingTimeout` 15 s,
/// `k8s.io/apimachinery/pkg/util/net/http.go`).
pub const HTTP2_PING_INTERVAL: Duration = Duration::from_secs(30);

/// See [`HTTP2_PING_INTERVAL`].
pub const HTTP2_PING_TIMEOUT: Duration = Duration::from_secs(15);

/// TCP keep-alive probes start after this long without traffic, so a dead peer's HTTP/1.1
/// connection is found: kube-apiserver's `defaultKeepAlivePeriod` (3 minutes).
pub const TCP_KEEPALIVE: Duration = Duration::from_secs(180);

/// hyper's smallest HTTP/1.1 buffer (it panics below it); a smaller `max_header_bytes` is
/// raised to it.
const HYPER_MIN_BUFFER: usize = 8 * 1024;

/// The connection budgets of one listener. [`Default`] gives the production values (the
/// constants of this module); tests shorten them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// See [`HANDSHAKE_TIMEOUT`].
    pub handshake_timeout: Duration,
    /// See [`HEADER_READ_TIMEOUT`].
    pub header_read_timeout: Duration,
    /// See [`IDLE_TIMEOUT`].
    pub idle_timeout: Duration,
    /// See [`BODY_READ_TIMEOUT`].
    pub body_read_timeout: Duration,
    /// See [`WRITE_STALL_TIMEOUT`].
    pub write_stall_timeout: Duration,
    /// See [`MAX_HEADER_BYTES`] (at least 8 KiB, hyper's smallest buffer).
    pub max_header_bytes: usize,
    /// See [`MAX_CONNECTIONS`].
    pub max_connections: usize,
    /// See [`MAX_CONCURRENT_STREAMS`].
    pub max_concurrent_streams: u32,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            handshake_timeout: HANDSHAKE_TIMEOUT,
            header_read_timeout: HEADER_READ_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            body_read_timeout: BODY_READ_TIMEOUT,
            write_stall_timeout: WRITE_STALL_TIMEOUT,
            max_header_bytes: MAX_HEADER_BYTES,
            max_connections: MAX_CONNECTIONS,
            max_concurrent_streams: MAX_CONCURRENT_STREAMS,
        }
    }
}

impl HttpLimits {
    /// The HTTP/1.1 and HTTP/2 connection builder for these limits. Header, idle, body and
    /// write timeouts are not hyper's: the connection's watchdog enforces them (hyper's own
    /// header timer also runs while a kept-alive connection is idle, which would cut the idle
    /// timeout to the header timeout).
    pub(super) fn builder(&self) -> auto::Builder<TokioExecutor> {
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder
            .http1()
            .header_read_timeout(None)
            .max_buf_size(self.max_header_bytes.max(HYPER_MIN_BUFFER));
        let header_list = u32::try_from(self.max_header_bytes).unwrap_or(u32::MAX);
        builder
            .http2()
            .timer(TokioTimer::new())
            .max_concurrent_streams(self.max_concurrent_streams)
            .max_header_list_size(header_list)
            .max_frame_size(HTTP2_FRAME_AND_STREAM_WINDOW)
            .initial_stream_window_size(HTTP2_FRAME_AND_STREAM_WINDOW)
            .initial_connection_window_size(HTTP2_CONNECTION_WINDOW)
            .max_pending_accept_reset_streams(HTTP2_MAX_PENDING_ACCEPT_RESETS)
            .max_local_error_reset_streams(HTTP2_MAX_LOCAL_ERROR_RESETS)
            .keep_alive_interval(HTTP2_PING_INTERVAL)
            .keep_alive_timeout(HTTP2_PING_TIMEOUT);
        builder
    }
}

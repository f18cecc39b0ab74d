//! One HTTP/1 request over a simulated TCP connection, bounded by a deadline: the single way the
//! simulation's transports and clients talk to a host.
//!
//! Every call opens a fresh connection. That costs a handshake per call, but a call that hits a
//! partition or a crashed host then leaves nothing half-open behind, and no connection state
//! survives from one phase of a scenario into the next.

use std::time::Duration;

use bytes::Bytes;
use http::Method;
use http::Request;
use http::StatusCode;
use http_body_util::BodyExt;
use http_body_util::Full;

use super::dial::Dialed;
use super::dial::dial;
use super::dial::http_error;

/// Why a call failed. Only [`CallError::Status`] means the server answered; every other variant
/// is a transport failure, after which the request may or may not have been processed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The URL is not `http://host:port[/...]`.
    #[error("invalid url {url}")]
    InvalidUrl {
        /// The URL given.
        url: String,
    },
    /// The TCP connection could not be opened.
    #[error("connecting to {authority} failed")]
    Connect {
        /// The `host:port` dialled.
        authority: String,
        /// The socket error.
        #[source]
        source: std::io::Error,
    },
    /// The HTTP exchange failed after connecting.
    #[error("http exchange with {authority} failed")]
    Http {
        /// The `host:port` dialled.
        authority: String,
        /// The hyper error.
        #[source]
        source: hyper::Error,
    },
    /// The request could not be built (a header or path the `http` crate rejects).
    #[error("building the request failed")]
    Request(#[source] http::Error),
    /// The deadline passed before the answer arrived.
    #[error("no answer within {deadline:?}")]
    DeadlineExceeded {
        /// The deadline that passed.
        deadline: Duration,
    },
    /// The server answered with a non-success status.
    #[error("server answered {status}: {}", String::from_utf8_lossy(body))]
    Status {
        /// The status code.
        status: StatusCode,
        /// The seconds of the answer's `Retry-After` header, if it had one: the server invites
        /// a retry.
        retry_after: Option<u64>,
        /// The answer's body.
        body: Bytes,
    },
}

/// The seconds of a `Retry-After` header in `headers`, if there is one in that form.
pub(super) fn retry_after(headers: &http::HeaderMap) -> Option<u64> {
    headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// POSTs the protobuf `body` to `base_url` + `path` and returns the answer's body, as
/// [`send`] does.
pub async fn post(
    base_url: &str,
    path: &str,
    body: Bytes,
    deadline: Duration,
) -> Result<Bytes, CallError> {
    send(
        Method::POST,
        base_url,
        path,
        "application/x-protobuf",
        body,
        deadline,
    )
    .await
}

/// Sends one request to `base_url` + `path` and returns the answer's body; any status outside
/// 2xx is [`CallError::Status`]. The whole exchange (connect, send, read) is bounded by
/// `deadline`.
pub async fn send(
    method: Method,
    base_url: &str,
    path: &str,
    content_type: &str,
    body: Bytes,
    deadline: Duration,
) -> Result<Bytes, CallError> {
    let exchange = Exchange {
        method,
        base_url,
        path,
        content_type,
        body,
        deadline,
    };
    match tokio::time::timeout(deadline, exchange.run()).await {
        Ok(answer) => answer,
        Err(_) => Err(CallError::DeadlineExceeded { deadline }),
    }
}

/// One request, before it is sent.
struct Exchange<'a> {
    method: Method,
    base_url: &'a str,
    path: &'a str,
    content_type: &'a str,
    body: Bytes,
    deadline: Duration,
}

impl Exchange<'_> {
    async fn run(self) -> Result<Bytes, CallError> {
        let Self {
            method,
            base_url,
            path,
            content_type,
            body,
            deadline,
        } = self;
        let Dialed {
            authority,
            mut sender,
            connection,
        } = dial(base_url).await?;
        let http_error = http_error(&authority);
        // The connection task carries the same deadline: a request lost in a partition would
        // otherwise keep its simulated socket (and ephemeral port) open forever.
        tokio::spawn(async move {
            match tokio::time::timeout(deadline, connection).await {
                Ok(Ok(())) | Err(_) => {}
                Ok(Err(error)) => {
                    tracing::debug!(%error, "sim http connection ended with an error")
                }
            }
        });

        let request = Request::builder()
            .method(method)
            .uri(path)
            .header(http::header::HOST, authority.as_str())
            .header(http::header::CONTENT_TYPE, content_type)
            .body(Full::new(body))
            .map_err(CallError::Request)?;
        let response = sender.send_request(request).await.map_err(http_error)?;
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(http_error)?
            .to_bytes();
        if status.is_success() {
            Ok(body)
        } else {
            Err(CallError::Status {
                status,
                retry_after,
                body,
            })
        }
    }
}

//! A streaming HTTP/1 GET over a simulated TCP connection, read line by line: how a watcher
//! reads a watch's chunked stream of JSON events.
//!
//! Only opening the stream (connect, send, status line) is bounded by one deadline; after that
//! the reader bounds each wait for a line itself, since a healthy watch may be quiet for long
//! and a partitioned one is silent forever. Dropping the [`LineStream`] aborts the connection
//! task, so a stream abandoned in a partition leaves no socket behind.

use std::time::Duration;

use bytes::Buf;
use bytes::Bytes;
use bytes::BytesMut;
use http::Method;
use http::Request;
use http_body_util::BodyExt;
use http_body_util::Empty;
use hyper::body::Incoming;
use tokio::task::JoinHandle;

use super::dial::Dialed;
use super::dial::dial;
use super::dial::http_error;
use super::http_call::retry_after;
use crate::net::CallError;

/// Why reading the next line failed.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// Nothing arrived within the idle timeout.
    #[error("nothing arrived within {idle:?}")]
    Idle {
        /// The idle timeout that passed.
        idle: Duration,
    },
    /// The connection broke.
    #[error("the stream broke")]
    Broken(#[source] hyper::Error),
}

/// An open response body, split into lines.
#[derive(Debug)]
pub struct LineStream {
    body: Incoming,
    /// Bytes received after the last complete line.
    pending: BytesMut,
    connection: JoinHandle<()>,
}

impl Drop for LineStream {
    fn drop(&mut self) {
        self.connection.abort();
    }
}

impl LineStream {
    /// The next line without its `\n`; `Ok(None)` when the server ended the stream (a
    /// trailing line without `\n` is returned first). Waits at most `idle` for more bytes.
    pub async fn next_line(&mut self, idle: Duration) -> Result<Option<Bytes>, LineError> {
        loop {
            if let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
                let mut line = self.pending.split_to(end + 1);
                line.truncate(end);
                return Ok(Some(line.freeze()));
            }
            let frame = match tokio::time::timeout(idle, self.body.frame()).await {
                Err(_) => return Err(LineError::Idle { idle }),
                Ok(None) => {
                    if self.pending.is_empty() {
                        return Ok(None);
                    }
                    return Ok(Some(self.pending.split().freeze()));
                }
                Ok(Some(frame)) => frame.map_err(LineError::Broken)?,
            };
            if let Ok(mut data) = frame.into_data() {
                while data.has_remaining() {
                    let chunk = data.chunk();
                    self.pending.extend_from_slice(chunk);
                    let read = chunk.len();
                    data.advance(read);
                }
            }
        }
    }
}

/// GETs `base_url` + `path` and, on a 2xx answer, returns its body as a [`LineStream`]; any
/// other status is [`CallError::Status`] with the whole body. `deadline` bounds everything up
/// to the status line (and the body of an error answer).
pub async fn get_stream(
    base_url: &str,
    path: &str,
    deadline: Duration,
) -> Result<LineStream, CallError> {
    match tokio::time::timeout(deadline, open(base_url, path)).await {
        Ok(opened) => opened,
        Err(_) => Err(CallError::DeadlineExceeded { deadline }),
    }
}

async fn open(base_url: &str, path: &str) -> Result<LineStream, CallError> {
    let Dialed {
        authority,
        mut sender,
        connection,
    } = dial(base_url).await?;
    let http_error = http_error(&authority);
    // Lives as long as the stream: `LineStream` aborts it when dropped. An error answer's
    // body is read within the caller's deadline, and the stream is dropped right after.
    let connection = tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(%error, "sim watch connection ended with an error");
        }
    });
    let request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(http::header::HOST, authority.as_str())
        .header(http::header::ACCEPT, "application/json")
        .body(Empty::<Bytes>::new())
        .map_err(CallError::Request)?;
    let response = match sender.send_request(request).await {
        Ok(response) => response,
        Err(source) => {
            connection.abort();
            return Err(http_error(source));
        }
    };
    let status = response.status();
    if !status.is_success() {
        let retry_after = retry_after(response.headers());
        let body = response.into_body().collect().await;
        connection.abort();
        let body = body.map_err(http_error)?.to_bytes();
        return Err(CallError::Status {
            status,
            retry_after,
            body,
        });
    }
    Ok(LineStream {
        body: response.into_body(),
        pending: BytesMut::new(),
        connection,
    })
}

//! The bodies between hyper and the router. [`RequestBody`] fails once the body-read timeout
//! has passed without the whole body (a client that announced a body and stopped sending it
//! gets an answer instead of holding the request). [`ResponseBody`] hands the connection at
//! most [`MAX_FRAME`] bytes at a time and tells the connection's activity when it waits for
//! the connection to take them (so a client that stops reading is noticed), and keeps its
//! request open until the response is done.

use std::pin::Pin;
use std::task::Context;
use std::task::Poll;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use hyper::body::Body as HttpBody;
use hyper::body::Frame;
use hyper::body::Incoming;
use hyper::body::SizeHint;
use tokio::time::Instant;
use tokio::time::Sleep;

use super::activity::RequestGuard;

/// The most bytes of a response handed to the connection at once. A larger frame (a list
/// encoded whole) is split, so the response stays with its body, and its stall noticed, while
/// a client that stopped reading has not taken it, rather than in the HTTP/2 send buffer.
const MAX_FRAME: usize = 64 * 1024;

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub(super) enum RequestBodyError {
    /// The connection failed (or the client reset the stream) mid-body.
    #[error(transparent)]
    Connection(#[from] hyper::Error),
    /// The body did not arrive within the body-read timeout.
    #[error("the request body did not arrive within {0:?}")]
    TimedOut(Duration),
}

/// A request body with a deadline for the whole of it.
#[derive(Debug)]
pub(super) struct RequestBody {
    inner: Incoming,
    timeout: Duration,
    /// `None`: the timeout is too large to have one.
    deadline: Option<Instant>,
    /// Runs once the body had to be waited for.
    timer: Option<Pin<Box<Sleep>>>,
}

impl RequestBody {
    /// `inner`, which must have arrived completely within `timeout` from now.
    pub(super) fn new(inner: Incoming, timeout: Duration) -> Self {
        Self {
            inner,
            timeout,
            deadline: Instant::now().checked_add(timeout),
            timer: None,
        }
    }
}

impl HttpBody for RequestBody {
    type Data = Bytes;
    type Error = RequestBodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, RequestBodyError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(RequestBodyError::from)));
        }
        let Some(deadline) = this.deadline else {
            return Poll::Pending;
        };
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(RequestBodyError::TimedOut(this.timeout)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body on its way to the client (see the module documentation).
#[derive(Debug)]
pub(super) struct ResponseBody {
    inner: Body,
    /// The part of the inner body's last frame not handed over yet.
    rest: Bytes,
    request: RequestGuard,
}

impl ResponseBody {
    /// `inner`, the response to the request `request` keeps open.
    pub(super) fn new(inner: Body, request: RequestGuard) -> Self {
        Self {
            inner,
            rest: Bytes::new(),
            request,
        }
    }

    /// The next at most [`MAX_FRAME`] bytes of `rest`.
    fn take_rest(&mut self) -> Bytes {
        let len = self.rest.len().min(MAX_FRAME);
        self.rest.split_to(len)
    }
}

impl HttpBody for ResponseBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        this.request.frame_taken();
        let frame = if this.rest.is_empty() {
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => {
                        this.rest = data;
                        Frame::data(this.take_rest())
                    }
                    Err(trailers) => trailers,
                },
                other => return other,
            }
        } else {
            Frame::data(this.take_rest())
        };
        if !this.is_end_stream() {
            this.request.frame_handed_over();
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower().saturating_add(rest));
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(rest));
        }
        hint
    }
}

//! The socket of one connection as hyper sees it ([`WatchedIo`]): reports the bytes that
//! arrive to the connection's [`Activity`] (the header timeout counts from the first of a
//! request) and fails a write, flush or shutdown that has been blocked for the write stall
//! timeout, because the client stopped reading and its TCP window stayed closed.

use std::io;
use std::io::IoSlice;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Context;
use std::task::Poll;
use std::time::Duration;

use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::io::ReadBuf;
use tokio::time::Sleep;

use super::activity::Activity;

/// A write that stayed blocked for the write stall timeout.
#[derive(Debug, thiserror::Error)]
#[error("the client read nothing for {0:?}")]
pub(super) struct WriteStalled(Duration);

/// A connection's transport, watched (see the module documentation).
#[derive(Debug)]
pub(super) struct WatchedIo<T> {
    inner: T,
    activity: Arc<Activity>,
    stall_timeout: Duration,
    /// Runs while the current write is blocked.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<T> WatchedIo<T> {
    /// Watches `inner`.
    pub(super) fn new(inner: T, activity: Arc<Activity>, stall_timeout: Duration) -> Self {
        Self {
            inner,
            activity,
            stall_timeout,
            stalled: None,
        }
    }

    /// Passes on `poll`'s answer; a `Pending` one starts (or keeps) the stall timer, and once
    /// the timer has run out the operation fails instead.
    fn watch_write<R>(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let timeout = self.stall_timeout;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                WriteStalled(timeout),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WatchedIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.bytes_read();
        }
        poll
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WatchedIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.watch_write(cx, poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.watch_write(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_flush(cx);
        this.watch_write(cx, poll)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.watch_write(cx, poll)
    }
}

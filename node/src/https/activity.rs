//! What one connection is doing, and when it is due to be closed: its open requests, when it
//! last became idle, the first byte of its next request, and the response bodies that handed
//! the connection a frame it has not yet taken from them. [`Activity::expired`] resolves when
//! one of the connection's budgets ([`HttpLimits`]) runs out.
//!
//! The rules follow Go's `net/http` (kube-apiserver's server): an HTTP/1.1 connection has the
//! header timeout from the TLS handshake to its first request, the idle timeout between
//! requests and the header timeout again from the first byte of the next one; an HTTP/2
//! connection has the idle timeout whenever no stream is open (its pings and settings do not
//! keep it open). A response whose next frame the connection has not taken for the write
//! stall timeout ends the connection (Go's `WriteByteTimeout`): on HTTP/2 the only sign that
//! the client stopped reading one stream, since its socket keeps moving.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::PoisonError;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::limits::HttpLimits;

/// Why a connection's watchdog fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expiry {
    /// No request for the idle timeout: close it gracefully.
    Idle,
    /// A request's headers did not arrive in time.
    HeaderTimeout,
    /// A response made no progress for the write stall timeout.
    WriteStall,
}

/// The shared record of one connection, updated by its requests, its response bodies and its
/// socket, and read by its watchdog.
#[derive(Debug)]
pub(super) struct Activity {
    limits: HttpLimits,
    state: Mutex<State>,
    /// Wakes the watchdog when a deadline may have moved earlier.
    changed: Notify,
}

#[derive(Debug)]
struct State {
    /// The client speaks HTTP/2 (no header timeout between requests).
    http2: bool,
    /// Requests whose response has not finished.
    open: usize,
    /// A request was received on this connection.
    served: bool,
    /// When `open` last dropped to zero (or the handshake finished).
    idle_since: Instant,
    /// The first byte read while idle (the next request is arriving).
    first_byte: Option<Instant>,
    /// Response bodies waiting for the connection to take the frame they produced, by id.
    waiting: HashMap<u64, Instant>,
    next_id: u64,
    /// The deadline the watchdog sleeps until.
    scheduled: Option<Instant>,
}

impl State {
    /// The earliest budget to run out, and which.
    fn deadline(&self, limits: &HttpLimits) -> Option<(Instant, Expiry)> {
        let stall = self
            .waiting
            .values()
            .min()
            .and_then(|since| since.checked_add(limits.write_stall_timeout))
            .map(|at| (at, Expiry::WriteStall));
        let quiet = (self.open == 0).then(|| {
            let header_since = match (self.http2, self.served) {
                (true, _) => None,
                (false, false) => Some(self.idle_since),
                (false, true) => self.first_byte,
            };
            match header_since {
                Some(since) => since
                    .checked_add(limits.header_read_timeout)
                    .map(|at| (at, Expiry::HeaderTimeout)),
                None => self
                    .idle_since
                    .checked_add(limits.idle_timeout)
                    .map(|at| (at, Expiry::Idle)),
            }
        });
        [stall, quiet.flatten()]
            .into_iter()
            .flatten()
            .min_by_key(|(at, _)| *at)
    }
}

impl Activity {
    /// A connection whose TLS handshake just finished; `http2` when ALPN chose it.
    pub(super) fn new(limits: HttpLimits, http2: bool) -> Arc<Self> {
        Arc::new(Self {
            limits,
            state: Mutex::new(State {
                http2,
                open: 0,
                served: false,
                idle_since: Instant::now(),
                first_byte: None,
                waiting: HashMap::new(),
                next_id: 0,
                scheduled: None,
            }),
            changed: Notify::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state stays consistent across a panic (every update is a single assignment).
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes the watchdog if `at` comes before the deadline it sleeps until.
    fn wake_if_earlier(&self, state: &State, at: Option<Instant>) {
        if let Some(at) = at
            && state.scheduled.is_none_or(|scheduled| at < scheduled)
        {
            self.changed.notify_one();
        }
    }

    /// Wakes the watchdog if the state's deadline moved before the one it sleeps until.
    fn reschedule(&self, state: &State) {
        self.wake_if_earlier(state, state.deadline(&self.limits).map(|(at, _)| at));
    }

    /// A request arrived (its headers are complete). The returned guard keeps it open until
    /// it is dropped with the response body.
    pub(super) fn request_started(self: &Arc<Self>, http2: bool) -> RequestGuard {
        let mut state = self.state();
        state.open += 1;
        state.served = true;
        state.http2 |= http2;
        state.first_byte = None;
        let id = state.next_id;
        state.next_id = state.next_id.wrapping_add(1);
        RequestGuard {
            activity: self.clone(),
            id,
        }
    }

    /// Bytes arrived from the client.
    pub(super) fn bytes_read(&self) {
        let mut state = self.state();
        if state.open == 0 && state.first_byte.is_none() {
            state.first_byte = Some(Instant::now());
            self.reschedule(&state);
        }
    }

    /// Resolves when a budget runs out, saying which.
    pub(super) async fn expired(&self) -> Expiry {
        loop {
            let next = {
                let mut state = self.state();
                let next = state.deadline(&self.limits);
                state.scheduled = next.map(|(at, _)| at);
                next
            };
            match next {
                Some((at, expiry)) if at <= Instant::now() => return expiry,
                Some((at, _)) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {}
                        () = self.changed.notified() => {}
                    }
                }
                None => self.changed.notified().await,
            }
        }
    }
}

/// One open request of a connection; dropped when its response has finished (or was
/// abandoned).
#[derive(Debug)]
pub(super) struct RequestGuard {
    activity: Arc<Activity>,
    id: u64,
}

impl RequestGuard {
    /// The response handed the connection a frame and waits for it to ask for the next.
    pub(super) fn frame_handed_over(&self) {
        let activity = &self.activity;
        let mut state = activity.state();
        let now = Instant::now();
        state.waiting.insert(self.id, now);
        // Only this stall can be new; the others started earlier.
        activity.wake_if_earlier(&state, now.checked_add(activity.limits.write_stall_timeout));
    }

    /// The connection asked the response for its next frame.
    pub(super) fn frame_taken(&self) {
        self.activity.state().waiting.remove(&self.id);
    }
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let mut state = self.activity.state();
        state.waiting.remove(&self.id);
        state.open = state.open.saturating_sub(1);
        if state.open == 0 {
            state.idle_since = Instant::now();
            state.first_byte = None;
            self.activity.reschedule(&state);
        }
    }
}

//! One priority level's seats and queues: a request takes `width` seats when they are free
//! and nobody waits; otherwise it joins the shortest queue of the hand its flow is dealt
//! (shuffle sharding), and freed seats go to the queues in turn, so flows share the level
//! fairly. A full queue, a level that rejects instead of queuing, or a wait past the timeout
//! refuses the request. One short mutex per level; the queues' lengths bound the waiting.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::PoisonError;
use std::time::Duration;

use chrono::DateTime;
use chrono::Utc;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::config::Queuing;
use super::shuffle::deal;

/// Why a request got no seat (the `reason` label of Kubernetes' rejection metric).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// Its queue was full.
    QueueFull,
    /// The level rejects instead of queuing, and had no free seat.
    ConcurrencyLimit,
    /// It waited in its queue past the timeout.
    TimeOut,
}

impl Rejection {
    /// The metric label.
    pub fn reason(self) -> &'static str {
        match self {
            Self::QueueFull => "queue-full",
            Self::ConcurrencyLimit => "concurrency-limit",
            Self::TimeOut => "time-out",
        }
    }
}

/// What a dump shows of a request, waiting or executing.
#[derive(Debug, Clone)]
pub struct RequestDigest {
    /// The schema that classified it.
    pub schema: String,
    /// Its flow.
    pub flow: String,
    /// Its seats.
    pub width: usize,
    /// When it arrived.
    pub arrived: DateTime<Utc>,
    /// When it started executing (waiting requests: `None`).
    pub started: Option<DateTime<Utc>>,
}

struct Waiter {
    id: u64,
    request: RequestDigest,
    dispatch: oneshot::Sender<()>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Waiter>,
    executing: usize,
    seats: usize,
}

/// Counters and gauges of a level, as the dumps and metrics show them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Requests waiting.
    pub waiting: usize,
    /// Requests executing.
    pub executing: usize,
    /// Seats in use.
    pub seats: usize,
    /// Requests dispatched since start.
    pub dispatched: u64,
    /// Requests refused since start.
    pub rejected: u64,
    /// Requests refused after waiting too long.
    pub timed_out: u64,
    /// Requests whose client went away while they waited.
    pub cancelled: u64,
}

struct State {
    limit: usize,
    queues: Vec<Queue>,
    queuing: Option<Queuing>,
    next_queue: usize,
    next_id: u64,
    executing: Vec<(u64, usize, RequestDigest)>,
    totals: Totals,
    peak_demand: usize,
}

/// A level's seats and queues.
pub struct QueueSet {
    state: Mutex<State>,
    exempt: bool,
}

/// Seats held; dropping it frees them and dispatches waiting requests.
pub struct Seats {
    set: Arc<QueueSet>,
    id: u64,
    queue: Option<usize>,
    width: usize,
}

impl QueueSet {
    /// A level of `limit` seats that queues as `queuing` says (`None`: rejects), or no limit
    /// at all when `exempt`.
    pub fn new(limit: usize, queuing: Option<Queuing>, exempt: bool) -> Arc<Self> {
        let queue_count = queuing.map_or(0, |q| q.queues);
        Arc::new(Self {
            state: Mutex::new(State {
                limit,
                queues: (0..queue_count).map(|_| Queue::default()).collect(),
                queuing,
                next_queue: 0,
                next_id: 0,
                executing: Vec::new(),
                totals: Totals::default(),
                peak_demand: 0,
            }),
            exempt,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the level is exempt.
    pub fn exempt(&self) -> bool {
        self.exempt
    }

    /// Whether the level queues the same way as `queuing` (a change of queues needs a new set).
    pub fn queues_like(&self, queuing: Option<Queuing>) -> bool {
        self.lock().queuing == queuing
    }

    /// Sets the seats of the level (after a configuration change or rebalancing) and
    /// dispatches what now fits.
    pub fn set_limit(&self, limit: usize) {
        let mut state = self.lock();
        state.limit = limit;
        dispatch(&mut state);
    }

    /// The most seats wanted (executing plus waiting) since the last call.
    pub fn take_peak_demand(&self) -> usize {
        let mut state = self.lock();
        let now = state.totals.seats + waiting_seats(&state);
        std::mem::replace(&mut state.peak_demand, now)
    }

    /// The level's counters.
    pub fn totals(&self) -> Totals {
        self.lock().totals
    }

    /// Per queue: (waiting requests, executing requests, seats in use).
    pub fn queue_digests(&self) -> Vec<(usize, usize, usize)> {
        let state = self.lock();
        let queues = state.queues.iter();
        queues
            .map(|q| (q.waiting.len(), q.executing, q.seats))
            .collect()
    }

    /// Every request: (queue, index in queue (-1: executing), digest).
    pub fn request_digests(&self) -> Vec<(Option<usize>, Option<usize>, RequestDigest)> {
        let state = self.lock();
        let mut all = Vec::new();
        for (qi, queue) in state.queues.iter().enumerate() {
            for (ri, waiter) in queue.waiting.iter().enumerate() {
                all.push((Some(qi), Some(ri), waiter.request.clone()));
            }
        }
        for (_, _, request) in &state.executing {
            all.push((None, None, request.clone()));
        }
        all
    }

    /// Takes `width` seats for a request of `flow_hash`, waiting at most `timeout` in a
    /// queue. `now` stamps the request for the dumps.
    pub async fn acquire(
        self: &Arc<Self>,
        request: RequestDigest,
        flow_hash: u64,
        timeout: Duration,
        now: impl Fn() -> DateTime<Utc>,
    ) -> Result<(Seats, Duration), Rejection> {
        let arrived = Instant::now();
        let (id, queue, width, receiver) = {
            let mut state = self.lock();
            let width = request.width.clamp(1, state.limit.max(1));
            let id = state.next_id;
            state.next_id += 1;
            let idle = state.queues.iter().all(|q| q.waiting.is_empty());
            if self.exempt || (idle && state.totals.seats + width <= state.limit) {
                let started = RequestDigest {
                    width,
                    started: Some(now()),
                    ..request
                };
                start(&mut state, id, None, started);
                return Ok((self.seats(id, None, width), Duration::ZERO));
            }
            let Some(queuing) = state.queuing else {
                state.totals.rejected += 1;
                return Err(Rejection::ConcurrencyLimit);
            };
            let hand = deal(flow_hash, queuing.queues, queuing.hand_size);
            let queue = hand
                .into_iter()
                .min_by_key(|&i| {
                    let q = &state.queues[i];
                    q.waiting.iter().map(|w| w.request.width).sum::<usize>() + q.seats
                })
                .unwrap_or(0);
            if state.queues[queue].waiting.len() >= queuing.queue_length_limit {
                state.totals.rejected += 1;
                return Err(Rejection::QueueFull);
            }
            let (sender, receiver) = oneshot::channel();
            state.queues[queue].waiting.push_back(Waiter {
                id,
                request: RequestDigest { width, ..request },
                dispatch: sender,
            });
            state.totals.waiting += 1;
            let demand = state.totals.seats + waiting_seats(&state);
            state.peak_demand = state.peak_demand.max(demand);
            dispatch(&mut state);
            (id, queue, width, receiver)
        };
        let waiting = Waiting {
            set: self,
            id,
            queue,
        };
        let dispatched = tokio::time::timeout(timeout, receiver).await;
        std::mem::forget(waiting);
        match dispatched {
            Ok(Ok(())) => Ok((self.seats(id, Some(queue), width), arrived.elapsed())),
            _ => {
                let mut state = self.lock();
                if remove_waiter(&mut state, queue, id) {
                    state.totals.rejected += 1;
                    state.totals.timed_out += 1;
                    return Err(Rejection::TimeOut);
                }
                // Dispatched just as the wait ended: the seats are ours.
                drop(state);
                Ok((self.seats(id, Some(queue), width), arrived.elapsed()))
            }
        }
    }

    fn seats(self: &Arc<Self>, id: u64, queue: Option<usize>, width: usize) -> Seats {
        Seats {
            set: self.clone(),
            id,
            queue,
            width,
        }
    }
}

fn waiting_seats(state: &State) -> usize {
    let queues = state.queues.iter();
    queues
        .flat_map(|q| q.waiting.iter().map(|w| w.request.width))
        .sum()
}

fn start(state: &mut State, id: u64, queue: Option<usize>, request: RequestDigest) {
    state.totals.seats += request.width;
    state.totals.executing += 1;
    state.totals.dispatched += 1;
    if let Some(q) = queue {
        state.queues[q].executing += 1;
        state.queues[q].seats += request.width;
    }
    state.executing.push((id, request.width, request));
    let demand = state.totals.seats + waiting_seats(state);
    state.peak_demand = state.peak_demand.max(demand);
}

fn remove_waiter(state: &mut State, queue: usize, id: u64) -> bool {
    let waiting = &mut state.queues[queue].waiting;
    match waiting.iter().position(|w| w.id == id) {
        Some(at) => {
            waiting.remove(at);
            state.totals.waiting -= 1;
            true
        }
        None => false,
    }
}

/// Hands free seats to the queues' heads in turn, as long as the head fits.
fn dispatch(state: &mut State) {
    let count = state.queues.len();
    let mut idle_rounds = 0;
    while count > 0 && idle_rounds < count {
        let at = state.next_queue % count;
        state.next_queue = (at + 1) % count;
        let fits = state.queues[at]
            .waiting
            .front()
            .is_some_and(|w| state.totals.seats + w.request.width <= state.limit);
        if !fits {
            idle_rounds += 1;
            continue;
        }
        idle_rounds = 0;
        let Some(waiter) = state.queues[at].waiting.pop_front() else {
            continue;
        };
        state.totals.waiting -= 1;
        let request = waiter.request.clone();
        start(state, waiter.id, Some(at), request);
        if waiter.dispatch.send(()).is_err() {
            release(state, waiter.id, Some(at), waiter.request.width);
        }
    }
}

fn release(state: &mut State, id: u64, queue: Option<usize>, width: usize) {
    state.totals.seats -= width;
    state.totals.executing -= 1;
    if let Some(q) = queue {
        state.queues[q].executing -= 1;
        state.queues[q].seats -= width;
    }
    state.executing.retain(|(e, _, _)| *e != id);
}

impl Drop for Seats {
    fn drop(&mut self) {
        let mut state = self.set.lock();
        release(&mut state, self.id, self.queue, self.width);
        dispatch(&mut state);
    }
}

/// A request in a queue; if its client goes away, dropping this takes it out.
struct Waiting<'a> {
    set: &'a QueueSet,
    id: u64,
    queue: usize,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut state = self.set.lock();
        if remove_waiter(&mut state, self.queue, self.id) {
            state.totals.cancelled += 1;
        } else if let Some(&(_, width, _)) = state.executing.iter().find(|e| e.0 == self.id) {
            release(&mut state, self.id, Some(self.queue), width);
            dispatch(&mut state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(flow: &str) -> RequestDigest {
        RequestDigest {
            schema: "s".into(),
            flow: flow.into(),
            width: 1,
            arrived: Utc::now(),
            started: None,
        }
    }

    const QUEUING: Queuing = Queuing {
        queues: 1,
        hand_size: 1,
        queue_length_limit: 1,
    };

    // R-RES-239
    #[tokio::test]
    async fn full_queues_reject_and_freed_seats_dispatch_in_order() {
        let set = QueueSet::new(1, Some(QUEUING), false);
        let long = Duration::from_secs(60);
        let (first, _) = set.acquire(request("a"), 1, long, Utc::now).await.unwrap();
        let queued = tokio::spawn({
            let set = set.clone();
            async move {
                set.acquire(request("a"), 1, long, Utc::now)
                    .await
                    .map(|_| ())
            }
        });
        while set.totals().waiting == 0 {
            tokio::task::yield_now().await;
        }
        let third = set.acquire(request("a"), 1, long, Utc::now).await;
        assert_eq!(third.err(), Some(Rejection::QueueFull));
        drop(first);
        assert_eq!(queued.await.unwrap(), Ok(()));
        let totals = set.totals();
        assert_eq!(
            (totals.dispatched, totals.rejected, totals.seats),
            (2, 1, 0)
        );
    }

    #[tokio::test]
    async fn waits_end_at_the_timeout_and_reject_levels_do_not_queue() {
        let set = QueueSet::new(1, Some(QUEUING), false);
        let short = Duration::from_millis(20);
        let (_held, _) = set.acquire(request("a"), 1, short, Utc::now).await.unwrap();
        let waited = set.acquire(request("a"), 1, short, Utc::now).await;
        assert_eq!(waited.err(), Some(Rejection::TimeOut));
        assert_eq!(set.totals().waiting, 0);
        let reject = QueueSet::new(1, None, false);
        let _held = reject
            .acquire(request("a"), 1, Duration::from_secs(1), Utc::now)
            .await
            .unwrap();
        let refused = reject
            .acquire(request("b"), 1, Duration::from_secs(1), Utc::now)
            .await;
        assert_eq!(refused.err(), Some(Rejection::ConcurrencyLimit));
    }

    #[tokio::test]
    async fn wide_requests_take_several_seats_and_exempt_levels_never_wait() {
        let set = QueueSet::new(4, Some(QUEUING), false);
        let wide = RequestDigest {
            width: 3,
            ..request("a")
        };
        let long = Duration::from_secs(60);
        let (_wide, _) = set.acquire(wide, 1, long, Utc::now).await.unwrap();
        assert_eq!(set.totals().seats, 3);
        let exempt = QueueSet::new(0, None, true);
        let held: Vec<_> = futures::future::join_all(
            (0..5).map(|_| exempt.acquire(request("x"), 1, long, Utc::now)),
        )
        .await;
        assert!(held.iter().all(Result::is_ok));
        assert_eq!(exempt.totals().executing, 5);
    }
}

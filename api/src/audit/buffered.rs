//! The batching buffer of the webhook's `batch` mode (kube-apiserver's buffered backend): a
//! bounded queue the request path only ever tries to push to (a full queue drops the event and
//! counts it), and a task on the API runtime that sends batches of up to a maximum size, or
//! whatever arrived within the maximum wait, at a throttled rate.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio::time::Instant;

use super::Event;

/// Batching limits (`--audit-webhook-batch-*`), with kube-apiserver's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchSettings {
    /// Events the queue holds before new ones are dropped (`--audit-webhook-batch-buffer-size`).
    pub buffer_size: usize,
    /// The most events in one batch (`--audit-webhook-batch-max-size`).
    pub max_size: usize,
    /// How long a batch waits to fill (`--audit-webhook-batch-max-wait`).
    pub max_wait: Duration,
    /// Batches per second and burst (`--audit-webhook-batch-throttle-qps`, `-burst`), when
    /// throttled (`--audit-webhook-batch-throttle-enable`).
    pub throttle: Option<(f64, u32)>,
}

impl Default for BatchSettings {
    fn default() -> Self {
        Self {
            buffer_size: 10_000,
            max_size: 400,
            max_wait: Duration::from_secs(30),
            throttle: Some((10.0, 15)),
        }
    }
}

/// Sends one batch.
pub(crate) type SendBatch = Arc<dyn Fn(Vec<Event>) -> BoxFuture<'static, ()> + Send + Sync>;

/// The request side of the buffer.
pub(crate) struct Buffer {
    queue: mpsc::Sender<Event>,
    dropped: AtomicU64,
}

impl Buffer {
    /// A buffer whose batches go to `send`, from a task spawned on the current runtime.
    pub(crate) fn start(settings: BatchSettings, send: SendBatch) -> Self {
        let (queue, events) = mpsc::channel(settings.buffer_size.max(1));
        tokio::spawn(run(settings, events, send));
        Self {
            queue,
            dropped: AtomicU64::new(0),
        }
    }

    /// Queues `event`, or drops and counts it when the queue is full.
    pub(crate) fn push(&self, event: Event) {
        if let Err(TrySendError::Full(event) | TrySendError::Closed(event)) =
            self.queue.try_send(event)
        {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::error!(
                audit_id = %event.audit_id,
                dropped,
                "audit webhook buffer is full; event dropped"
            );
        }
    }

    /// How many events were dropped because the queue was full.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

async fn run(settings: BatchSettings, mut events: mpsc::Receiver<Event>, send: SendBatch) {
    let mut throttle = settings
        .throttle
        .map(|(qps, burst)| Bucket::new(qps, burst));
    while let Some(first) = events.recv().await {
        let mut batch = vec![first];
        let deadline = Instant::now() + settings.max_wait;
        while batch.len() < settings.max_size {
            tokio::select! {
                event = events.recv() => match event {
                    Some(event) => batch.push(event),
                    None => break,
                },
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
        if let Some(bucket) = throttle.as_mut() {
            bucket.take().await;
        }
        send(batch).await;
    }
}

/// A token bucket: `qps` tokens a second, at most `burst` saved up.
struct Bucket {
    qps: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    fn new(qps: f64, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            qps: qps.max(f64::MIN_POSITIVE),
            burst,
            tokens: burst,
            last: Instant::now(),
        }
    }

    async fn take(&mut self) {
        let now = Instant::now();
        self.tokens =
            (self.tokens + now.duration_since(self.last).as_secs_f64() * self.qps).min(self.burst);
        self.last = now;
        if self.tokens < 1.0 {
            let wait = Duration::from_secs_f64((1.0 - self.tokens) / self.qps);
            tokio::time::sleep(wait).await;
            self.tokens = 1.0;
            self.last = Instant::now();
        }
        self.tokens -= 1.0;
    }
}

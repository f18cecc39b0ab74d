//! The webhook backend (`--audit-webhook-config-file`): events posted as an `EventList` to
//! the server a kubeconfig names, over a [`WebhookTransport`] the node provides (TLS with the
//! kubeconfig's CA and client certificate, with timeouts). `batch` mode queues events and
//! never blocks a request ([`super::buffered`]); `blocking` posts each event in the request;
//! `blocking-strict` also fails the request when its RequestReceived event cannot be posted.
//! Posts retry with a growing backoff and are fitted to the truncation limits first.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use super::Backend;
use super::BatchSettings;
use super::Event;
use super::buffered::Buffer;
use super::event::EventList;
use super::truncate::truncate;
use crate::flavor::Flavor;

pub use super::truncate::TruncateSettings;

/// Posts made for one batch before it is given up (kube's webhook backoff steps).
const ATTEMPTS: u32 = 5;

/// How the webhook is fed (`--audit-webhook-mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WebhookMode {
    /// Buffered and sent in batches; a request never waits.
    #[default]
    Batch,
    /// Each event posted in the request; failures are logged.
    Blocking,
    /// As blocking, and a failed RequestReceived post fails the request.
    BlockingStrict,
}

/// A `--audit-webhook-mode` that names no mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown audit webhook mode {0:?} (expected \"batch\", \"blocking\" or \"blocking-strict\")"
)]
pub struct UnknownWebhookMode(pub String);

impl FromStr for WebhookMode {
    type Err = UnknownWebhookMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "batch" => Ok(Self::Batch),
            "blocking" => Ok(Self::Blocking),
            "blocking-strict" => Ok(Self::BlockingStrict),
            other => Err(UnknownWebhookMode(other.to_owned())),
        }
    }
}

/// How an `EventList` reaches the webhook server.
///
/// ### Correctness requirements
/// - Bound every post with a timeout; a hung server must end in an error, never a hang.
/// - Answer `Ok` only for a 2xx response.
#[async_trait::async_trait]
pub trait WebhookTransport: Send + Sync + 'static {
    /// Posts one JSON `EventList`; the error describes what failed.
    async fn post(&self, body: Vec<u8>) -> Result<(), String>;
}

/// Everything about the webhook backend but its transport.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WebhookSettings {
    /// How events are fed.
    pub mode: WebhookMode,
    /// Batching limits (batch mode).
    pub batch: BatchSettings,
    /// Size limits (`--audit-webhook-truncate-enabled`); none when off.
    pub truncate: Option<TruncateSettings>,
    /// The wait before the first retry of a failed post (`--audit-webhook-initial-backoff`).
    pub initial_backoff: Duration,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            mode: WebhookMode::Batch,
            batch: BatchSettings::default(),
            truncate: None,
            initial_backoff: Duration::from_secs(10),
        }
    }
}

/// The webhook backend.
pub struct WebhookBackend {
    mode: WebhookMode,
    sender: Arc<Sender>,
    buffer: Option<Buffer>,
}

struct Sender {
    transport: Arc<dyn WebhookTransport>,
    flavor: Flavor,
    settings: WebhookSettings,
}

impl WebhookBackend {
    /// A backend posting through `transport`; in batch mode its sending task is spawned on
    /// the current (the API's) runtime.
    pub fn new(
        transport: Arc<dyn WebhookTransport>,
        settings: WebhookSettings,
        flavor: Flavor,
    ) -> Self {
        let sender = Arc::new(Sender {
            transport,
            flavor,
            settings,
        });
        let buffer = (settings.mode == WebhookMode::Batch).then(|| {
            let sender = sender.clone();
            Buffer::start(
                settings.batch,
                Arc::new(move |events| {
                    let sender = sender.clone();
                    Box::pin(async move {
                        sender.send(events).await;
                    })
                }),
            )
        });
        Self {
            mode: settings.mode,
            sender,
            buffer,
        }
    }

    /// How many events batch mode dropped because its buffer was full.
    pub fn dropped(&self) -> u64 {
        self.buffer.as_ref().map_or(0, Buffer::dropped)
    }
}

#[async_trait::async_trait]
impl Backend for WebhookBackend {
    async fn process(&self, event: &Event) -> bool {
        if let Some(buffer) = &self.buffer {
            buffer.push(event.clone());
            return true;
        }
        let sent = self.sender.send(vec![event.clone()]).await;
        sent || self.mode != WebhookMode::BlockingStrict
    }
}

impl Sender {
    /// Posts `events`, truncated and split if configured; `false` if any post failed.
    async fn send(&self, events: Vec<Event>) -> bool {
        let posts = match self.settings.truncate {
            Some(limits) => truncate(events, limits, &super::truncated_annotation(self.flavor)),
            None => vec![events],
        };
        let mut sent = true;
        for post in posts {
            sent &= self.post(&post).await;
        }
        sent
    }

    async fn post(&self, events: &[Event]) -> bool {
        let list = EventList {
            kind: "EventList",
            api_version: super::api_version(self.flavor),
            metadata: Default::default(),
            items: events,
        };
        let Ok(body) = serde_json::to_vec(&list) else {
            return false;
        };
        let mut backoff = self.settings.initial_backoff;
        for attempt in 1..=ATTEMPTS {
            match self.transport.post(body.clone()).await {
                Ok(()) => return true,
                Err(error) => {
                    tracing::error!(%error, attempt, events = events.len(), "audit webhook post failed");
                }
            }
            if attempt < ATTEMPTS {
                tokio::time::sleep(backoff).await;
                backoff = backoff.mul_f64(1.5);
            }
        }
        false
    }
}

//! The audit log (kube-apiserver's `k8s.io/apiserver/pkg/audit` and its backends): a
//! [`Policy`] picks each request's [`Level`], the request filter ([`filter`]) records one
//! [`Event`] per stage, and every configured [`Backend`] takes them: the log file with
//! rotation ([`LogBackend`]), or a webhook fed in batches ([`WebhookBackend`]).
//!
//! Without a policy or without a backend nothing is recorded and a request only gets its
//! `Audit-Id` header. Later steps of the pipeline add annotations to the current request's
//! event with [`annotate`] (deprecation, admission) and name an impersonated user with
//! [`impersonated`].
//!
//! # Layout
//! - [`policy`]: the Policy and its first-match evaluation.
//! - [`event`]: the Event as it is written.
//! - `record`: the current request's event and its stages (a task-local).
//! - `filter`: the middleware: ids, stages, watches, panics.
//! - `source`: source IPs and user agent of a request.
//! - [`log`] and `rotate`: the log backend and its size- and age-based rotation.
//! - [`webhook`], `buffered` and `truncate`: the webhook backend, its batches and their limits.

mod buffered;
pub mod event;
pub(crate) mod filter;
pub mod log;
pub mod policy;
mod record;
mod rotate;
mod source;
mod truncate;
pub mod webhook;

use std::sync::Arc;

pub use buffered::BatchSettings;
pub use event::Event;
pub use event::Level;
pub use event::Stage;
pub use log::LogBackend;
pub use log::LogFormat;
pub use log::UnknownLogFormat;
pub use policy::Policy;
pub use policy::PolicyError;
pub use record::annotate;
pub(crate) use record::authorization;
pub use record::impersonated;
pub(crate) use record::received;
pub(crate) use record::request_body;
pub(crate) use record::unauthenticated;
pub use rotate::Rotation;
pub use source::PeerAddress;
pub use webhook::TruncateSettings;
pub use webhook::UnknownWebhookMode;
pub use webhook::WebhookBackend;
pub use webhook::WebhookMode;
pub use webhook::WebhookSettings;
pub use webhook::WebhookTransport;

use crate::flavor::Flavor;

/// Where events go.
///
/// ### Correctness requirements
/// - Never block the request for long: a backend that talks to the network buffers.
/// - Answer `false` only when the event was lost in a way the request should fail for
///   (a write error of the log, a failed post of a `blocking-strict` webhook).
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// Takes one event; `false` when it could not be stored.
    async fn process(&self, event: &Event) -> bool;
}

/// What is audited (`ApiConfig::audit`): nothing by default.
#[derive(Clone, Default)]
pub struct AuditConfig {
    /// The policy (`--audit-policy-file`); without one nothing is audited.
    pub policy: Option<Arc<Policy>>,
    /// The backends; without one nothing is audited.
    pub backends: Vec<Arc<dyn Backend>>,
}

impl AuditConfig {
    /// Whether any request can be recorded.
    pub fn enabled(&self) -> bool {
        self.policy.is_some() && !self.backends.is_empty()
    }
}

/// `audit.<group domain>/v1`.
pub fn api_version(flavor: Flavor) -> &'static str {
    match flavor {
        Flavor::Platform => "audit.platform.io/v1",
        Flavor::Kubernetes => "audit.k8s.io/v1",
    }
}

/// The annotation an event gets when the webhook dropped its objects to fit
/// (`audit.<domain>/truncated`).
pub fn truncated_annotation(flavor: Flavor) -> String {
    format!("audit.{}/truncated", flavor.group_domain())
}

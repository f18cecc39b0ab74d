//! Admission webhooks (`MutatingAdmissionWebhook`, `ValidatingAdmissionWebhook`): the
//! webhooks of the stored MutatingWebhookConfigurations and ValidatingWebhookConfigurations,
//! followed on each replica, called with an AdmissionReview for every write they match.
//!
//! - [`Configurations`]: one kind's webhooks, read once per stored version, in order.
//! - [`Webhook`]: one webhook, compiled (rules, selectors, `matchConditions`, policies).
//! - [`Dispatcher`]: which webhooks a write goes to, and the request each is sent.
//! - [`Caller`]: one call through the [`crate::webhook::WebhookTransport`], bounded.
//! - [`MutatingWebhooks`], [`ValidatingWebhooks`]: the two plugins.
//! - [`Reinvocation`]: what the mutating webhooks remember between the two passes.

mod call;
mod configurations;
mod dispatcher;
mod hook;
mod mutating;
mod reinvocation;
mod review;
mod validating;

pub use self::call::Caller;
pub use self::configurations::Configurations;
pub use self::dispatcher::Dispatcher;
pub use self::hook::SideEffects;
pub use self::hook::Webhook;
pub use self::mutating::MutatingWebhooks;
pub use self::reinvocation::Reinvocation;
pub use self::validating::ValidatingWebhooks;

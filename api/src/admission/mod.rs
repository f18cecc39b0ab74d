//! Admission: the stage every write passes after authorization (DESIGN.md §2): mutating
//! plugins change the object after the strategy's defaults, validating plugins judge it after
//! the strategy's validation, in Kubernetes' plugin order.
//!
//! - [`Attributes`]: what a plugin knows of the write (operation, resource, user, objects).
//! - [`Plugin`]: one admission plugin, mutating, validating or both.
//! - [`Admission`]: the enabled plugins in order, run by the generic store
//!   (`registry/store/admit.rs`).
//! - [`build`]: the chain of the enabled plugins this server has (`plugins/`, one file per
//!   plugin).
//! - [`matching`]: the rules and label selectors that say which writes a webhook or policy
//!   covers; [`admission_request`]: the AdmissionRequest of a write (webhook bodies, the CEL
//!   `request` variable); [`Namespaces`]: the replica's namespaces for selectors.
//! - [`webhook`]: the mutating and validating admission webhooks.
//! - [`policy`]: Validating- and MutatingAdmissionPolicy and their bindings, compiled and
//!   dispatched.
//! - [`PluginSelection`]: `--enable-admission-plugins` / `--disable-admission-plugins` over
//!   Kubernetes' ordered plugin list and its default set.
//! - [`AdmissionConfig`]: `--admission-control-config-file`, each plugin's configuration.
//! - [`resource_quota`]: the ResourceQuota plugin and the quota evaluators the
//!   `resourcequota` controller shares.

mod attributes;
mod chain;
mod config;
pub mod matching;
mod namespaces;
mod plugin;
mod plugins;
pub mod policy;
mod request;
mod selection;
pub mod webhook;

pub use self::attributes::Attributes;
pub use self::attributes::ObjectKind;
pub use self::attributes::Operation;
pub use self::chain::Admission;
pub use self::config::AdmissionConfig;
pub use self::config::AdmissionConfigError;
pub use self::namespaces::Namespaces;
pub use self::plugin::Notes;
pub use self::plugin::Plugin;
pub use self::plugins::NAMESPACE_LIFECYCLE;
pub use self::plugins::PluginContext;
pub use self::plugins::PodSecurityConfig;
pub use self::plugins::build;
pub use self::plugins::resource_quota;
pub use self::request::admission_request;
pub use self::selection::ORDERED_PLUGINS;
pub use self::selection::PluginSelection;
pub use self::selection::SelectionError;

//! Custom resources (issue 21): the kinds CustomResourceDefinitions declare, served by the
//! same generic [`Store`](super::Store) as the built-in kinds. Every replica keeps a table of
//! their stores current with the definitions it has applied ([`CustomResources`], fed by a
//! watch of the definitions), so a new kind is served, listed in discovery and gone again
//! without a restart, on every replica alike.
//!
//! - `compiled`: what a version compiles to, once per generation of its definition.
//! - `conversion`: how objects move between a definition's versions (`None`, `Webhook`).
//! - `definition`: one definition's served versions, as resource types and stores.
//! - `strategy`: the per-kind steps of a custom resource (status, generation, schema).
//! - `table`: the table itself and the cache its watch feeds.
//! - `version_order`: Kubernetes' version priority (`v2` before `v1` before `v1beta1`).

mod compiled;
mod conversion;
mod definition;
mod strategy;
mod table;
mod version_order;

pub use conversion::WebhookCalls;
pub use table::CustomResources;
pub use version_order::compare_versions;

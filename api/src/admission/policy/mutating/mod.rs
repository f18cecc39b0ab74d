//! MutatingAdmissionPolicy (Kubernetes' `plugin/policy/mutating`): policies and their
//! bindings, compiled once per generation and kept current by reflectors like the
//! validating ones (the parent module's cache, matching, params and activation), change the
//! object of every write they cover with CEL.
//!
//! - [`MutatingDispatcher`]: the plugin's work on one write (matching, params, mutations,
//!   failure policy, reinvocation).
//! - `mutations`: a policy's mutations, compiled.
//! - `apply_configuration` and `json_patch`: one mutation's result applied to the object.
//! - [`Reinvocation`]: what the plugin remembers between the mutating passes of a write.

mod apply_configuration;
mod dispatcher;
mod json_patch;
mod mutations;
mod reinvocation;
#[cfg(test)]
mod tests;

pub use self::dispatcher::MutatingDispatcher;
pub use self::reinvocation::Reinvocation;

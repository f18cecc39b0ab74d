//! Admission policies (Kubernetes' `plugin/policy`): ValidatingAdmissionPolicies judge every
//! write with CEL, MutatingAdmissionPolicies ([`mutating`]) change its object; both kinds,
//! with their bindings, are compiled once per generation and kept current by reflectors.
//!
//! - [`Dispatcher`]: the validating plugin's work on one write (params, actions).
//! - `cache`: the policies (of one kind, `definition` with its body: `validations`, or
//!   `mutating`'s mutations) and bindings of the replica, compiled (`binding`).
//! - `invocations`: the policies, bindings and params a write is dispatched to
//!   (`match_resources`); `params`: the param objects, a reflector per param resource
//!   (`objects`).
//! - `inputs`, `activation` and `validator`: one policy's expressions evaluated for one
//!   write.
//! - [`ResourceTable`]: the served resource types, by kind (`paramKind`) or resource.
//! - [`type_check`]: a policy's expressions typed by the schemas of the kinds it matches, for
//!   its status (the status controller in the node crate writes it).

mod activation;
mod binding;
mod cache;
mod definition;
mod dispatcher;
mod inputs;
mod invocations;
mod match_resources;
pub mod mutating;
mod objects;
mod params;
mod resources;
pub mod type_check;
#[cfg(test)]
mod type_check_test;
mod validations;
mod validator;

pub use self::dispatcher::Dispatcher;
pub use self::resources::Equivalents;
pub use self::resources::ResourceTable;

//! ValidatingAdmissionPolicy (Kubernetes' `plugin/policy/validating`): policies and their
//! bindings, compiled once per generation and kept current by reflectors, judge every write
//! with CEL.
//!
//! - [`Dispatcher`]: the plugin's work on one write (matching, params, actions).
//! - `cache`: the policies and bindings of the replica, compiled (`definition`, `binding`).
//! - `params`: the param objects, a reflector per param resource (`objects`).
//! - `activation` and `validator`: one policy's expressions evaluated for one write.
//! - [`ResourceTable`]: the served resource types, by kind (`paramKind`) or resource.

mod activation;
mod binding;
mod cache;
mod definition;
mod dispatcher;
mod match_resources;
mod objects;
mod params;
mod resources;
mod validator;

pub use self::dispatcher::Dispatcher;
pub use self::resources::Equivalents;
pub use self::resources::ResourceTable;

//! Everything HTTP about resources: request info, the registry and its generic store, the
//! authentication and authorization stages, discovery and health. No raft types in here: the
//! store is reached through [`storage::Storage`].
//!
//! # Layout
//! - [`router()`]: the whole HTTP API, configured by [`ApiConfig`].
//! - [`request`]: path -> [`request::RequestInfo`], query parameters, read consistency.
//! - [`registry`]: resource types, strategies, the generic store, built-in kinds, and the
//!   stored form of objects (the read hot path).
//! - [`auth`]: authentication and authorization chains.
//! - `watch`: watch streams over HTTP.
//! - [`patch`]: JSON Patch, JSON merge patch and strategic merge patch documents.
//! - [`discovery`], `openapi`, [`health`], [`bootstrap`].
//! - [`RandomSource`]: the randomness handed in (uids, generated names, token ids).
//! - [`limits`]: the nesting budget every value built from request input keeps.
//! - [`error`]: typed errors and their single translation to `Status`.
//! - [`flavor`]: the only place product-named identifiers are spelled.

pub mod auth;
pub mod bootstrap;
mod config;
pub mod discovery;
pub mod error;
pub mod flavor;
mod handlers;
pub mod health;
pub mod limits;
mod openapi;
pub mod patch;
mod random;
pub mod registry;
pub mod request;
mod router;
pub mod schema;
pub mod storage;
pub mod validation;
mod watch;

#[cfg(test)]
mod router_tests;

pub use config::ApiConfig;
pub use config::Clock;
pub use config::DEFAULT_MAX_OBJECT_BYTES;
pub use config::SystemClock;
pub use config::TokenSignError;
pub use config::TokenSigner;
pub use config::TokenVerifyError;
pub use config::WatchSettings;
pub use flavor::Flavor;
pub use handlers::RsaTokenSigner;
pub use health::Readiness;
pub use random::RandomSource;
pub use router::router;

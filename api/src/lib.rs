//! Everything HTTP about resources: request info, the registry and its generic store, the
//! authentication and authorization stages, discovery and health. No raft types in here: the
//! store is reached through [`storage::Storage`].
//!
//! # Layout
//! - [`admission`]: the admission stage of writes (plugin chain, its order and flags).
//! - [`router()`]: the whole HTTP API, configured by [`ApiConfig`].
//! - [`request`]: path -> [`request::RequestInfo`], query parameters, read consistency.
//! - [`registry`]: resource types, strategies, the generic store (one file per step),
//!   built-in kinds, the stored form of objects (the read hot path), and the domain logic of
//!   the subresources and reviews that the generic store does not serve.
//! - `handlers`: HTTP glue: decode a request, call the registry, render the answer.
//! - [`auth`]: authentication and authorization chains.
//! - [`cel`]: the one CEL engine (compile once, evaluate with JSON values).
//! - [`codec`]: the wire formats of bodies.
//! - [`audit`]: the audit policy, events and their log and webhook backends.
//! - `watch`: watch streams over HTTP.
//! - [`patch`]: JSON Patch, JSON merge patch and strategic merge patch documents.
//! - [`discovery`], `openapi`, [`health`], [`bootstrap`].
//! - [`labels`]: label requirements and selectors, and their matching.
//! - [`serviceaccount`]: service account tokens: the signer seam, the RS256 signer, the
//!   claims issued and checked.
//! - [`limits`]: the budgets of request bodies, of the nesting of every value built from
//!   request input, and of response warnings.
//! - [`RandomSource`]: the randomness handed in (uids, generated names, token ids).
//! - [`error`]: typed errors and their single translation to `Status`.
//! - [`flavor`]: the only place product-named identifiers are spelled.
//! - `compression`: gzip of large responses (`APIResponseCompression`).
//! - [`features`]: the feature gates (`--feature-gates`) and their typed lookup.
//! - [`metrics`]: the metrics registry, request metrics and `/metrics`.
//! - [`group`]: resources and kinds qualified by their API group.
//! - [`deprecation`]: the deprecated built-in versions, their `Warning` and the value the
//!   metric and the audit annotations read.
//! - [`flowcontrol`]: API Priority and Fairness (classification, queuing, 429s).

pub mod admin;
pub mod admission;
pub mod audit;
pub mod auth;
pub mod bootstrap;
pub mod cel;
pub mod codec;
mod compression;
mod config;
pub mod deprecation;
pub mod discovery;
pub mod error;
pub mod features;
pub mod flavor;
pub mod flowcontrol;
pub mod group;
mod handlers;
pub mod health;
pub mod labels;
pub mod limits;
pub mod metrics;
mod openapi;
pub mod patch;
mod random;
pub mod reflector;
pub mod registry;
pub mod request;
mod router;
pub mod schema;
pub mod serviceaccount;
pub mod storage;
pub mod validation;
mod watch;
pub mod webhook;

pub use config::ApiConfig;
pub use config::Clock;
pub use config::DEFAULT_MAX_OBJECT_BYTES;
pub use config::SystemClock;
pub use config::WatchSettings;
pub use features::Feature;
pub use features::FeatureGates;
pub use flavor::Flavor;
pub use health::Readiness;
pub use random::RandomSource;
pub use router::router;
pub use serviceaccount::IssuerDiscovery;
pub use serviceaccount::KeyParseError;
pub use serviceaccount::RsaTokenSigner;
pub use serviceaccount::TokenLimits;
pub use serviceaccount::TokenSignError;
pub use serviceaccount::TokenSigner;
pub use serviceaccount::VerifyingKey;

//! The cluster's operating API on the API port: membership, status and snapshots, as
//! non-resource URLs under [`PREFIX`]. The router authenticates, throttles, authorizes (a
//! non-resource request: RBAC's `nonResourceURLs` with the lowercase HTTP method as its verb;
//! `system:masters` may do everything) and audits these requests like every other, then hands
//! them to the node's [`ClusterAdmin`], which knows the replica.

use axum::response::Response;
use bytes::Bytes;
use http::Method;

use crate::auth::UserInfo;
use crate::error::ApiError;
use crate::request::QueryParams;

/// Where the operating API is served.
pub const PREFIX: &str = "/apiary/v1/";

/// One request to the operating API, authenticated and authorized.
#[derive(Debug)]
pub struct AdminRequest<'a> {
    /// The HTTP method.
    pub method: Method,
    /// The path below [`PREFIX`], without a trailing slash (`members`, `members/4/promote`).
    pub path: &'a str,
    /// The decoded query parameters.
    pub query: &'a QueryParams,
    /// The request body (at most the API's body limit).
    pub body: Bytes,
    /// Who asks.
    pub user: &'a UserInfo,
}

/// Serves the operating API.
///
/// ### Correctness requirements
/// - An unknown path answers [`ApiError::UnknownResource`] (404), a known path with a method it
///   does not take [`ApiError::MethodNotAllowed`] (405).
/// - A change refused before it was proposed is a 4xx (or a 503 when no leader can take it);
///   a change proposed whose outcome is unknown is [`ApiError::Timeout`] (504), never retried
///   here.
#[async_trait::async_trait]
pub trait ClusterAdmin: Send + Sync + 'static {
    /// Answers `request`; errors become `Status` answers.
    async fn serve(&self, request: AdminRequest<'_>) -> Result<Response, ApiError>;
}

//! The authentication stage: a chain of authenticators (spec 001 "Authentication",
//! R-ACC-004, R-ACC-083), then anonymous access for requests no method had credentials of
//! (R-ACC-084, R-ACC-085).

use std::sync::Arc;

use super::Anonymous;
use super::AuthContext;
use super::SYSTEM_AUTHENTICATED;
use super::UserInfo;
use crate::error::ApiError;

/// What one authenticator concluded about a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthnOutcome {
    /// The request carries this authenticator's credentials and they are valid.
    Authenticated(UserInfo),
    /// The request carries no credentials of this authenticator's kind.
    NoCredentials,
    /// The request carries credentials of this kind that are not valid (logged, never sent).
    Rejected(String),
}

/// One authentication method.
///
/// ### Correctness requirements
/// - Answer [`AuthnOutcome::NoCredentials`] when the request has nothing this method reads,
///   so the chain can try the next method.
/// - Never answer `Authenticated` for credentials that were not verified.
/// - Pass user attributes on unchanged (R-ACC-007); the chain adds `system:authenticated`.
#[async_trait::async_trait]
pub trait Authenticator: Send + Sync + 'static {
    /// Authenticates the request whose head is `request`, in `context`.
    async fn authenticate(
        &self,
        request: &http::request::Parts,
        context: &AuthContext<'_>,
    ) -> AuthnOutcome;
}

/// Authenticators tried in order; the first success determines the user. A request none of
/// them has credentials of is anonymous where [`Anonymous`] allows it.
#[derive(Clone, Default)]
pub struct AuthenticatorChain {
    authenticators: Vec<Arc<dyn Authenticator>>,
    anonymous: Option<Anonymous>,
}

impl AuthenticatorChain {
    /// A chain of `authenticators`, tried in this order, without anonymous access.
    pub fn new(authenticators: Vec<Arc<dyn Authenticator>>) -> Self {
        Self {
            authenticators,
            anonymous: None,
        }
    }

    /// The same chain with `anonymous` access (`None`: none).
    pub fn with_anonymous(self, anonymous: Option<Anonymous>) -> Self {
        Self { anonymous, ..self }
    }

    /// The user of `request`, with `system:authenticated` added (R-ACC-006); without
    /// credentials, the anonymous user where anonymous access applies; 401 Unauthorized
    /// otherwise, and always when some authenticator rejected the request's credentials (an
    /// invalid token or certificate never falls back to anonymous).
    pub async fn authenticate(
        &self,
        request: &http::request::Parts,
        context: &AuthContext<'_>,
    ) -> Result<UserInfo, ApiError> {
        let mut rejected = false;
        for a in &self.authenticators {
            match a.authenticate(request, context).await {
                AuthnOutcome::Authenticated(mut user) => {
                    if !user.in_group(SYSTEM_AUTHENTICATED) {
                        user.groups.push(SYSTEM_AUTHENTICATED.to_owned());
                    }
                    return Ok(user);
                }
                AuthnOutcome::Rejected(reason) => {
                    tracing::debug!(%reason, "credentials rejected");
                    rejected = true;
                }
                AuthnOutcome::NoCredentials => {}
            }
        }
        match &self.anonymous {
            Some(anonymous) if !rejected && anonymous.applies(request.uri.path()) => {
                Ok(Anonymous::user())
            }
            _ => Err(ApiError::Unauthorized),
        }
    }
}

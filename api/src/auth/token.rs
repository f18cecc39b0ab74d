//! Bearer tokens (spec 001 "Methods"): the [`TokenAuthenticator`]s that each recognise one kind
//! of token (static file, service account, bootstrap, OIDC, webhook), the [`TokenChain`] that
//! asks them in order, and [`BearerToken`], the request authenticator that reads
//! `Authorization: Bearer <token>` and hands it to the chain. TokenReview asks the same chain,
//! so a token gets the same answer as a credential and under review.

use std::sync::Arc;

use super::AuthContext;
use super::Authenticator;
use super::AuthnOutcome;
use super::UserInfo;

/// The user a token authenticates, and the audiences it was found valid for (empty for a
/// token that has none, such as a static token: it is valid for every audience).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenUser {
    /// Who the token belongs to.
    pub user: UserInfo,
    /// The audiences of the token that the API (or the review) accepts.
    pub audiences: Vec<String>,
}

/// What one token authenticator concluded about a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenOutcome {
    /// The token is one of this authenticator's, and valid.
    Authenticated(TokenUser),
    /// The token is not of this authenticator's kind; the chain asks the next one.
    NotMine,
    /// The token is of this kind (or may be) and not valid, for this reason. The reason may
    /// reach a TokenReview's `status.error`, so it names no secret.
    Rejected(String),
}

/// One kind of bearer token.
///
/// ### Correctness requirements
/// - Answer [`TokenOutcome::NotMine`] for a token this kind cannot be (wrong shape, another
///   issuer), so the chain can try the next kind.
/// - Never answer `Authenticated` for a token that was not verified, nor for one whose
///   audiences do not meet `context.audiences` (an audience-less token meets any).
/// - Never put the token, or part of it, into a reason, a log line or an error.
#[async_trait::async_trait]
pub trait TokenAuthenticator: Send + Sync + 'static {
    /// Authenticates `token` in `context`.
    async fn authenticate_token(&self, token: &str, context: &AuthContext<'_>) -> TokenOutcome;
}

/// Token authenticators asked in order; the first that authenticates a token decides it.
#[derive(Clone, Default)]
pub struct TokenChain {
    authenticators: Vec<Arc<dyn TokenAuthenticator>>,
}

impl TokenChain {
    /// A chain of `authenticators`, asked in this order.
    pub fn new(authenticators: Vec<Arc<dyn TokenAuthenticator>>) -> Self {
        Self { authenticators }
    }

    /// The user `token` authenticates, or why it does not: the reasons of every authenticator
    /// that rejected it (none when no authenticator recognised it).
    pub async fn authenticate(
        &self,
        token: &str,
        context: &AuthContext<'_>,
    ) -> Result<TokenUser, Vec<String>> {
        let mut reasons = Vec::new();
        for authenticator in &self.authenticators {
            match authenticator.authenticate_token(token, context).await {
                TokenOutcome::Authenticated(user) => return Ok(user),
                TokenOutcome::Rejected(reason) => reasons.push(reason),
                TokenOutcome::NotMine => {}
            }
        }
        Err(reasons)
    }
}

/// Authenticates requests that carry `Authorization: Bearer <token>` with a [`TokenChain`]. A
/// bearer token that no authenticator accepts is a rejection (401), never a request without
/// credentials: it does not fall through to anonymous access.
#[derive(Clone)]
pub struct BearerToken {
    tokens: TokenChain,
}

impl BearerToken {
    /// Reads bearer tokens and asks `tokens` about them.
    pub fn new(tokens: TokenChain) -> Self {
        Self { tokens }
    }

    /// The bearer token of `request`, as Kubernetes reads it: the scheme case-insensitive,
    /// surrounding whitespace ignored; `None` without one (another scheme, an empty token).
    pub fn of(request: &http::request::Parts) -> Option<&str> {
        let value = request
            .headers
            .get(http::header::AUTHORIZATION)?
            .to_str()
            .ok()?
            .trim();
        let (scheme, rest) = value.split_once(' ')?;
        let token = rest.split(' ').next().unwrap_or_default();
        (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
    }
}

#[async_trait::async_trait]
impl Authenticator for BearerToken {
    async fn authenticate(
        &self,
        request: &http::request::Parts,
        context: &AuthContext<'_>,
    ) -> AuthnOutcome {
        let Some(token) = Self::of(request) else {
            return AuthnOutcome::NoCredentials;
        };
        match self.tokens.authenticate(token, context).await {
            Ok(found) => AuthnOutcome::Authenticated(found.user),
            Err(reasons) if reasons.is_empty() => {
                AuthnOutcome::Rejected("no token authenticator recognised the token".to_owned())
            }
            Err(reasons) => AuthnOutcome::Rejected(reasons.join("; ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(authorization: &str) -> http::request::Parts {
        let request = http::Request::builder()
            .header(http::header::AUTHORIZATION, authorization)
            .body(())
            .expect("request");
        request.into_parts().0
    }

    // R-ACC-096: a bearer token is read from `Authorization: Bearer <token>` as Kubernetes reads it.
    #[test]
    fn bearer_tokens_are_read_as_kubernetes_reads_them() {
        assert_eq!(BearerToken::of(&parts("Bearer abc")), Some("abc"));
        assert_eq!(BearerToken::of(&parts("bearer abc")), Some("abc"));
        assert_eq!(BearerToken::of(&parts("  Bearer abc  ")), Some("abc"));
        assert_eq!(BearerToken::of(&parts("Bearer abc def")), Some("abc"));
        assert_eq!(BearerToken::of(&parts("Bearer ")), None);
        assert_eq!(BearerToken::of(&parts("Basic YWxpY2U6cHc=")), None);
        assert_eq!(BearerToken::of(&parts("Bearer")), None);
    }
}

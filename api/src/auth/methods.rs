//! The authentication methods the API is configured with, in the order they are tried: the
//! request authenticators (client certificates, ...), then bearer tokens through one
//! [`TokenChain`].

use std::sync::Arc;

use super::Authenticator;
use super::AuthenticatorChain;
use super::BearerToken;
use super::InProcessAuthenticator;
use super::TokenAuthenticator;
use super::TokenChain;
use super::X509Authenticator;

/// How requests are authenticated.
#[derive(Clone)]
pub struct AuthenticationMethods {
    /// Authenticators of the request itself, tried first, in order.
    pub request: Vec<Arc<dyn Authenticator>>,
    /// Bearer token authenticators, asked in order after the request authenticators (and by
    /// TokenReview).
    pub tokens: Vec<Arc<dyn TokenAuthenticator>>,
    /// The audiences a token must be meant for to authenticate a request (`--api-audiences`).
    pub api_audiences: Vec<String>,
}

impl Default for AuthenticationMethods {
    /// Client certificates only.
    fn default() -> Self {
        Self {
            request: vec![Arc::new(X509Authenticator)],
            tokens: Vec::new(),
            api_audiences: Vec::new(),
        }
    }
}

impl AuthenticationMethods {
    /// The chain that authenticates requests (the in-process callers' first, then the
    /// configured methods), and the token chain within it (which TokenReview asks too).
    pub fn chains(&self) -> (AuthenticatorChain, TokenChain) {
        let tokens = TokenChain::new(self.tokens.clone());
        let mut request: Vec<Arc<dyn Authenticator>> = vec![Arc::new(InProcessAuthenticator)];
        request.extend(self.request.iter().cloned());
        if !tokens.is_empty() {
            request.push(Arc::new(BearerToken::new(tokens.clone())));
        }
        (AuthenticatorChain::new(request), tokens)
    }
}

//! The authentication methods the API is configured with, in the order they are tried: the
//! request authenticators (client certificates, ...), then bearer tokens through one
//! [`TokenChain`].

use std::sync::Arc;

use super::Authenticator;
use super::AuthenticatorChain;
use super::BearerToken;
use super::RequestHeaderAuthenticator;
use super::TokenAuthenticator;
use super::TokenChain;
use super::X509Authenticator;

/// How requests are authenticated.
#[derive(Clone)]
pub struct AuthenticationMethods {
    /// The authenticating proxy (`--requestheader-*`), tried before everything else; the
    /// pipeline removes its headers from every request once authentication is done.
    pub request_header: Option<Arc<RequestHeaderAuthenticator>>,
    /// Authenticators of the request itself, tried in order (after the proxy).
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
            request_header: None,
            request: vec![Arc::new(X509Authenticator::default())],
            tokens: Vec::new(),
            api_audiences: Vec::new(),
        }
    }
}

impl AuthenticationMethods {
    /// The chain that authenticates requests, and the token chain within it (which TokenReview
    /// asks too).
    pub fn chains(&self) -> (AuthenticatorChain, TokenChain) {
        let tokens = TokenChain::new(self.tokens.clone());
        let proxy = self
            .request_header
            .iter()
            .map(|p| p.clone() as Arc<dyn Authenticator>);
        let mut request: Vec<_> = proxy.chain(self.request.iter().cloned()).collect();
        if !tokens.is_empty() {
            request.push(Arc::new(BearerToken::new(tokens.clone())));
        }
        (AuthenticatorChain::new(request), tokens)
    }
}

//! The authentication methods the API is configured with, in the order they are tried: the
//! request authenticators (client certificates, ...), then bearer tokens through one
//! [`TokenChain`], then anonymous access for requests without credentials.

use std::sync::Arc;

use super::Anonymous;
use super::Authenticator;
use super::AuthenticatorChain;
use super::BearerToken;
use super::InProcessAuthenticator;
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
    /// The authentication webhook, asked after every other token authenticator (a call to a
    /// remote service comes last, as in kube-apiserver).
    pub webhook: Option<Arc<dyn TokenAuthenticator>>,
    /// The audiences a token must be meant for to authenticate a request (`--api-audiences`).
    pub api_audiences: Vec<String>,
    /// Where requests without credentials are `system:anonymous` (`--anonymous-auth`, on by
    /// default as in kube-apiserver); `None`: they get 401.
    pub anonymous: Option<Anonymous>,
}

impl Default for AuthenticationMethods {
    /// Client certificates, and anonymous access on every path.
    fn default() -> Self {
        Self {
            request_header: None,
            request: vec![Arc::new(X509Authenticator::default())],
            tokens: Vec::new(),
            webhook: None,
            api_audiences: Vec::new(),
            anonymous: Some(Anonymous::default()),
        }
    }
}

impl AuthenticationMethods {
    /// The chain that authenticates requests (the in-process callers' first, then the
    /// configured methods), and the token chain within it (which TokenReview asks too).
    pub fn chains(&self) -> (AuthenticatorChain, TokenChain) {
        let tokens = TokenChain::new(self.tokens.iter().chain(&self.webhook).cloned().collect());
        let proxy = self
            .request_header
            .iter()
            .map(|p| p.clone() as Arc<dyn Authenticator>);
        let mut request: Vec<Arc<dyn Authenticator>> = vec![Arc::new(InProcessAuthenticator)];
        request.extend(proxy.chain(self.request.iter().cloned()));
        // Even without token methods: a bearer token nobody accepts is a 401, never anonymous.
        request.push(Arc::new(BearerToken::new(tokens.clone())));
        let chain = AuthenticatorChain::new(request).with_anonymous(self.anonymous.clone());
        (chain, tokens)
    }
}

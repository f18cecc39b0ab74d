//! JSON Web Token authentication (spec 001 "OpenID Connect flags", "Authentication
//! configuration"): the pure parts. The configuration file as written ([`config`]), its rules
//! and the compiled authenticators they yield ([`validate`], `mappings`), the mapping of claims to the user
//! ([`claims`]), the verifying [`JwtAuthenticator`] and [`JwtAuthenticators`], the set a
//! reload swaps at once. Fetching keys (HTTPS) is the node's ([`KeySource`]).

mod authenticator;
pub mod claims;
pub mod config;
mod mappings;
pub mod validate;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::RwLock;

pub use authenticator::JwtAuthenticator;
pub use authenticator::KeySource;
pub use authenticator::SUPPORTED_ALGORITHMS;
pub use config::AuthenticationConfiguration;
pub use validate::AnonymousSettings;
pub use validate::JwtSettings;

use super::AuthContext;
use super::TokenAuthenticator;
use super::TokenOutcome;

/// The JWT authenticators of the configuration in force, asked in order; a reload replaces
/// them all at once, requests in flight finish with the set they started with.
#[derive(Clone, Default)]
pub struct JwtAuthenticators {
    current: Arc<RwLock<Arc<Vec<JwtAuthenticator>>>>,
}

impl JwtAuthenticators {
    /// A set holding `authenticators`.
    pub fn new(authenticators: Vec<JwtAuthenticator>) -> Self {
        Self {
            current: Arc::new(RwLock::new(Arc::new(authenticators))),
        }
    }

    /// Puts `authenticators` in force instead of the current ones.
    pub fn replace(&self, authenticators: Vec<JwtAuthenticator>) {
        let mut current = self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *current = Arc::new(authenticators);
    }

    fn snapshot(&self) -> Arc<Vec<JwtAuthenticator>> {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

#[async_trait::async_trait]
impl TokenAuthenticator for JwtAuthenticators {
    async fn authenticate_token(&self, token: &str, context: &AuthContext<'_>) -> TokenOutcome {
        for authenticator in self.snapshot().iter() {
            match authenticator.authenticate_token(token, context).await {
                TokenOutcome::NotMine => {}
                decided => return decided,
            }
        }
        TokenOutcome::NotMine
    }
}

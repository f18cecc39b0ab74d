//! Service account tokens (Kubernetes' `pkg/serviceaccount`): the signer seam the node
//! hands in ([`TokenSigner`], with the RS256 [`RsaTokenSigner`]), the claims a TokenRequest
//! issues, the keys that verify tokens ([`VerifyingKey`]) and the issuer discovery documents
//! ([`IssuerDiscovery`]). The node loads or makes the keys (IO); everything here is pure.

mod claims;
mod discovery;
mod keys;
mod rsa;

use serde_json::Value;

pub(crate) use self::claims::Binding;
pub(crate) use self::claims::DEFAULT_EXPIRATION_SECONDS;
pub(crate) use self::claims::EXTENDED_EXPIRATION_SECONDS;
pub(crate) use self::claims::Grant;
pub(crate) use self::claims::ObjectRef;
pub(crate) use self::claims::WARN_ONLY_EXPIRATION_SECONDS;
pub(crate) use self::claims::claims;
pub(crate) use self::claims::validate_expiration;
pub use self::discovery::IssuerDiscovery;
pub use self::keys::KeyParseError;
pub use self::keys::VerifyingKey;
pub use self::rsa::RsaTokenSigner;

/// How long the tokens a TokenRequest issues may live (`--service-account-max-token-expiration`,
/// `--service-account-extend-token-expiration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenLimits {
    /// The longest lifetime issued; longer requests get this one.
    pub max_expiration_seconds: Option<i64>,
    /// Whether a pod-bound token asking for the node agent's default lifetime, for the API's
    /// audiences, gets a year with a `warnafter` claim instead.
    pub extend_expiration: bool,
}

impl Default for TokenLimits {
    /// No maximum; extension on (Kubernetes' defaults).
    fn default() -> Self {
        Self {
            max_expiration_seconds: None,
            extend_expiration: true,
        }
    }
}

/// Signs the service account tokens that `serviceaccounts/<name>/token` issues
/// (Kubernetes' `--service-account-signing-key-file`, `--service-account-issuer`,
/// `--api-audiences`). The node loads or makes the key and hands the signer in, so the API
/// does no IO.
pub trait TokenSigner: Send + Sync + 'static {
    /// The `iss` claim of every token.
    fn issuer(&self) -> &str;
    /// The audiences of a token whose request names none: the API server's own.
    fn default_audiences(&self) -> &[String];
    /// How long issued tokens may live.
    fn limits(&self) -> TokenLimits {
        TokenLimits::default()
    }
    /// `claims` as a signed JWT in compact form.
    fn sign(&self, claims: &Value) -> Result<String, TokenSignError>;
}

/// A token could not be signed (a key the signing library refuses).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the service account token cannot be signed: {0}")]
pub struct TokenSignError(pub String);

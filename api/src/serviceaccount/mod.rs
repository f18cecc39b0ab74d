//! Service account tokens (Kubernetes' `pkg/serviceaccount`): the signer seam the node
//! hands in ([`TokenSigner`], with the RS256 [`RsaTokenSigner`]), the claims a TokenRequest
//! issues and the checks a TokenReview makes of them. The node loads or makes the key (IO);
//! everything here is pure.

mod claims;
mod rsa;

use serde_json::Value;

pub(crate) use self::claims::DEFAULT_EXPIRATION_SECONDS;
pub(crate) use self::claims::Grant;
pub(crate) use self::claims::Verified;
pub(crate) use self::claims::claims;
pub(crate) use self::claims::validate_expiration;
pub(crate) use self::claims::verify;
pub use self::rsa::RsaTokenSigner;

/// Signs the service account tokens that `serviceaccounts/<name>/token` issues
/// (Kubernetes' `--service-account-signing-key-file`, `--service-account-issuer`,
/// `--api-audiences`). The node loads or makes the key and hands the signer in, so the API
/// does no IO.
pub trait TokenSigner: Send + Sync + 'static {
    /// The `iss` claim of every token.
    fn issuer(&self) -> &str;
    /// The audiences of a token whose request names none: the API server's own.
    fn default_audiences(&self) -> &[String];
    /// `claims` as a signed JWT in compact form.
    fn sign(&self, claims: &Value) -> Result<String, TokenSignError>;
    /// The claims of `token` when this signer signed it and it names this issuer; its times
    /// and audiences are left to the caller (the API reads time from its own clock).
    fn verify(&self, token: &str) -> Result<Value, TokenVerifyError>;
}

/// A token is not one of this signer's valid tokens (the reason is safe to show its bearer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TokenVerifyError(pub String);

/// A token could not be signed (a key the signing library refuses).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the service account token cannot be signed: {0}")]
pub struct TokenSignError(pub String);

//! The service account token signer the node uses: RS256 over an RSA private key in PEM
//! (`--service-account-signing-key-file`, PKCS#1 or PKCS#8), through `jsonwebtoken`.

use jsonwebtoken::Algorithm;
use jsonwebtoken::EncodingKey;
use jsonwebtoken::Header;
use serde_json::Value;

use crate::config::TokenSignError;
use crate::config::TokenSigner;

/// Signs tokens with an RSA key (RS256), naming `issuer` and, by default, `audiences`.
pub struct RsaTokenSigner {
    key: EncodingKey,
    issuer: String,
    audiences: Vec<String>,
}

impl RsaTokenSigner {
    /// A signer of the RSA private key `pem`; an error when it is not one.
    pub fn from_pem(
        pem: &[u8],
        issuer: impl Into<String>,
        audiences: Vec<String>,
    ) -> Result<Self, TokenSignError> {
        let key = EncodingKey::from_rsa_pem(pem).map_err(|e| TokenSignError(e.to_string()))?;
        Ok(Self {
            key,
            issuer: issuer.into(),
            audiences,
        })
    }
}

impl TokenSigner for RsaTokenSigner {
    fn issuer(&self) -> &str {
        &self.issuer
    }

    fn default_audiences(&self) -> &[String] {
        &self.audiences
    }

    fn sign(&self, claims: &Value) -> Result<String, TokenSignError> {
        jsonwebtoken::encode(&Header::new(Algorithm::RS256), claims, &self.key)
            .map_err(|e| TokenSignError(e.to_string()))
    }
}

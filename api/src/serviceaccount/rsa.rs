//! The service account token signer the node uses: RS256 over an RSA private key in PEM
//! (`--service-account-signing-key-file`, PKCS#1 or PKCS#8), through `jsonwebtoken`; each
//! token names the key's id (`kid`) as Kubernetes' signer does.

use jsonwebtoken::Algorithm;
use jsonwebtoken::EncodingKey;
use jsonwebtoken::Header;
use serde_json::Value;

use super::TokenLimits;
use super::TokenSignError;
use super::TokenSigner;
use super::VerifyingKey;

/// Signs tokens with an RSA key (RS256), naming `issuer` and, by default, `audiences`.
pub struct RsaTokenSigner {
    key: EncodingKey,
    public: VerifyingKey,
    issuer: String,
    audiences: Vec<String>,
    limits: TokenLimits,
}

impl RsaTokenSigner {
    /// A signer of the RSA private key `pem`; an error when it is not one.
    pub fn from_pem(
        pem: &[u8],
        issuer: impl Into<String>,
        audiences: Vec<String>,
    ) -> Result<Self, TokenSignError> {
        let key = EncodingKey::from_rsa_pem(pem).map_err(|e| TokenSignError(e.to_string()))?;
        let public = VerifyingKey::all_from_pem(pem)
            .map_err(|e| TokenSignError(e.to_string()))?
            .into_iter()
            .next()
            .ok_or_else(|| TokenSignError("no key".to_owned()))?;
        Ok(Self {
            key,
            public,
            issuer: issuer.into(),
            audiences,
            limits: TokenLimits::default(),
        })
    }

    /// The same signer issuing tokens within `limits`.
    pub fn with_limits(self, limits: TokenLimits) -> Self {
        Self { limits, ..self }
    }

    /// The key that verifies this signer's tokens.
    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.public
    }
}

impl TokenSigner for RsaTokenSigner {
    fn issuer(&self) -> &str {
        &self.issuer
    }

    fn default_audiences(&self) -> &[String] {
        &self.audiences
    }

    fn limits(&self) -> TokenLimits {
        self.limits
    }

    fn sign(&self, claims: &Value) -> Result<String, TokenSignError> {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some(self.public.kid().to_owned());
        jsonwebtoken::encode(&header, claims, &self.key).map_err(|e| TokenSignError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::Validation;
    use rsa::RsaPrivateKey;
    use rsa::pkcs1::EncodeRsaPrivateKey;
    use rsa::pkcs8::EncodePrivateKey;
    use rsa::pkcs8::LineEnding;
    use serde_json::json;

    use super::*;

    // R-ACC-122: tokens are RS256 JWTs naming the signing key's id, from a PKCS#8 or a
    // PKCS#1 key, and verify with that key only.
    #[test]
    fn a_signer_signs_verifiable_jwts_naming_its_key() {
        let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("key");
        let pkcs8 = key.to_pkcs8_pem(LineEnding::LF).expect("pem");
        let pkcs1 = key.to_pkcs1_pem(LineEnding::LF).expect("pem");
        let a = RsaTokenSigner::from_pem(pkcs8.as_bytes(), "a", vec![]).expect("signer");
        let a1 = RsaTokenSigner::from_pem(pkcs1.as_bytes(), "a", vec![]).expect("signer");
        assert_eq!(a.verifying_key().kid(), a1.verifying_key().kid());
        let claims = json!({"iss": "a", "sub": "s", "exp": 1});
        let token = a.sign(&claims).expect("signed");
        let header = jsonwebtoken::decode_header(&token).expect("header");
        assert_eq!(header.alg, Algorithm::RS256);
        assert_eq!(header.kid.as_deref(), Some(a.verifying_key().kid()));
        let mut validation = Validation::new(Algorithm::RS256);
        validation.validate_exp = false;
        validation.required_spec_claims.clear();
        let decoded =
            jsonwebtoken::decode::<Value>(&token, a1.verifying_key().decoding(), &validation);
        assert_eq!(decoded.expect("verified").claims, claims);
        let other = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("key");
        let other_pem = other.to_pkcs8_pem(LineEnding::LF).expect("pem");
        let c = RsaTokenSigner::from_pem(other_pem.as_bytes(), "a", vec![]).expect("signer");
        let wrong =
            jsonwebtoken::decode::<Value>(&token, c.verifying_key().decoding(), &validation);
        assert!(wrong.is_err(), "another key");
    }
}

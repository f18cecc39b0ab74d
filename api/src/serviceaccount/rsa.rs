//! The service account token signer the node uses: RS256 over an RSA private key in PEM
//! (`--service-account-signing-key-file`, PKCS#1 or PKCS#8), through `jsonwebtoken`; it
//! verifies its own tokens with the key's public half (TokenReview).

use jsonwebtoken::Algorithm;
use jsonwebtoken::DecodingKey;
use jsonwebtoken::EncodingKey;
use jsonwebtoken::Header;
use jsonwebtoken::Validation;
use rsa::RsaPrivateKey;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::traits::PublicKeyParts;
use serde_json::Value;

use super::TokenSignError;
use super::TokenSigner;
use super::TokenVerifyError;

/// Signs tokens with an RSA key (RS256), naming `issuer` and, by default, `audiences`.
pub struct RsaTokenSigner {
    key: EncodingKey,
    public: DecodingKey,
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
        let text = std::str::from_utf8(pem).map_err(|e| TokenSignError(e.to_string()))?;
        let private = RsaPrivateKey::from_pkcs8_pem(text)
            .or_else(|_| RsaPrivateKey::from_pkcs1_pem(text))
            .map_err(|e| TokenSignError(e.to_string()))?;
        let public = DecodingKey::from_rsa_raw_components(
            &private.n().to_bytes_be(),
            &private.e().to_bytes_be(),
        );
        Ok(Self {
            key,
            public,
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

    fn verify(&self, token: &str) -> Result<Value, TokenVerifyError> {
        let mut validation = Validation::new(Algorithm::RS256);
        // Times and audiences are the caller's to check, against the API's clock.
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        validation.set_issuer(&[&self.issuer]);
        jsonwebtoken::decode::<Value>(token, &self.public, &validation)
            .map(|data| data.claims)
            .map_err(|e| TokenVerifyError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use rsa::pkcs1::EncodeRsaPrivateKey;
    use rsa::pkcs8::EncodePrivateKey;
    use rsa::pkcs8::LineEnding;
    use serde_json::json;

    use super::*;

    // R-ACC-122: a signer verifies its own tokens, from a PKCS#8 or a PKCS#1 key, and refuses
    // another key's, another issuer's and garbage.
    #[test]
    fn a_signer_verifies_its_own_tokens_only() {
        let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("key");
        let pkcs8 = key.to_pkcs8_pem(LineEnding::LF).expect("pem");
        let pkcs1 = key.to_pkcs1_pem(LineEnding::LF).expect("pem");
        let a = RsaTokenSigner::from_pem(pkcs8.as_bytes(), "a", vec![]).expect("signer");
        let a1 = RsaTokenSigner::from_pem(pkcs1.as_bytes(), "a", vec![]).expect("signer");
        let b = RsaTokenSigner::from_pem(pkcs8.as_bytes(), "b", vec![]).expect("signer");
        let claims = json!({"iss": "a", "sub": "s", "exp": 1});
        let token = a.sign(&claims).expect("signed");
        assert_eq!(a.verify(&token), Ok(claims.clone()));
        assert_eq!(a1.verify(&token), Ok(claims));
        assert!(b.verify(&token).is_err(), "another issuer");
        let other = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("key");
        let other_pem = other.to_pkcs8_pem(LineEnding::LF).expect("pem");
        let c = RsaTokenSigner::from_pem(other_pem.as_bytes(), "a", vec![]).expect("signer");
        assert!(c.verify(&token).is_err(), "another key");
        assert!(a.verify("garbage").is_err());
    }
}

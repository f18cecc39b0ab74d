//! The public keys that verify service account tokens (`--service-account-key-file`, PEM
//! public or private keys, RSA or ECDSA P-256/P-384, as Kubernetes' `keyutil` reads them), with
//! the key id Kubernetes derives from a key and the JSON Web Key it publishes for it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::Algorithm;
use jsonwebtoken::DecodingKey;
use rsa::RsaPrivateKey;
use rsa::RsaPublicKey;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::pkcs8::DecodePublicKey;
use rsa::pkcs8::EncodePublicKey;
use rsa::traits::PublicKeyParts;
use serde_json::Value;
use serde_json::json;
use sha2::Digest;
use sha2::Sha256;

/// One key that verifies tokens.
#[derive(Clone)]
pub struct VerifyingKey {
    kid: String,
    algorithms: &'static [Algorithm],
    decoding: DecodingKey,
    jwk: Value,
}

impl std::fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyingKey")
            .field("kid", &self.kid)
            .finish()
    }
}

/// A PEM input holds no key this server can verify with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KeyParseError(pub String);

const RSA_ALGORITHMS: &[Algorithm] = &[Algorithm::RS256, Algorithm::RS384, Algorithm::RS512];
const P256_ALGORITHMS: &[Algorithm] = &[Algorithm::ES256];
const P384_ALGORITHMS: &[Algorithm] = &[Algorithm::ES384];

impl VerifyingKey {
    /// Every public key in `pem`: public keys (PKIX, PKCS#1) and the public halves of
    /// private keys (PKCS#8, PKCS#1, SEC 1); blocks of other types are skipped. An error when
    /// `pem` is not PEM, a key block cannot be read, or there is no key at all.
    pub fn all_from_pem(pem: &[u8]) -> Result<Vec<Self>, KeyParseError> {
        let blocks = pem::parse_many(pem).map_err(|e| KeyParseError(e.to_string()))?;
        let mut keys = Vec::new();
        for block in &blocks {
            let der = block.contents();
            let key = match block.tag() {
                "PUBLIC KEY" => Some(public_key(der)?),
                "RSA PUBLIC KEY" => Some(Self::rsa(
                    RsaPublicKey::from_pkcs1_der(der).map_err(|e| unreadable(block.tag(), e))?,
                )?),
                "PRIVATE KEY" => Some(private_key(der)?),
                "RSA PRIVATE KEY" => Some(Self::rsa(
                    RsaPrivateKey::from_pkcs1_der(der)
                        .map_err(|e| unreadable(block.tag(), e))?
                        .to_public_key(),
                )?),
                "EC PRIVATE KEY" => Some(ec_private_key(der)?),
                _ => None,
            };
            keys.extend(key);
        }
        if keys.is_empty() {
            return Err(KeyParseError(
                "data does not contain any valid RSA or ECDSA public keys".to_owned(),
            ));
        }
        Ok(keys)
    }

    /// The key id Kubernetes gives a key: the unpadded URL-safe base64 of the SHA-256 of its
    /// PKIX (DER) form.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The key as a JSON Web Key (`/openid/v1/jwks`).
    pub fn jwk(&self) -> &Value {
        &self.jwk
    }

    /// The algorithm this key signs with by default (RS256 for RSA, ES256/ES384 by curve).
    pub fn algorithm(&self) -> Algorithm {
        self.algorithms[0]
    }

    /// Whether a token signed with `algorithm` can be this key's.
    pub(crate) fn accepts(&self, algorithm: Algorithm) -> bool {
        self.algorithms.contains(&algorithm)
    }

    /// The key as `jsonwebtoken` verifies with it.
    pub(crate) fn decoding(&self) -> &DecodingKey {
        &self.decoding
    }

    fn rsa(key: RsaPublicKey) -> Result<Self, KeyParseError> {
        let der = key
            .to_public_key_der()
            .map_err(|e| KeyParseError(e.to_string()))?;
        let kid = kid_of(der.as_bytes());
        let (n, e) = (key.n().to_bytes_be(), key.e().to_bytes_be());
        Ok(Self {
            jwk: json!({
                "use": "sig", "kty": "RSA", "kid": kid, "alg": "RS256",
                "n": URL_SAFE_NO_PAD.encode(&n), "e": URL_SAFE_NO_PAD.encode(&e),
            }),
            kid,
            algorithms: RSA_ALGORITHMS,
            decoding: DecodingKey::from_rsa_raw_components(&n, &e),
        })
    }

    fn ec(
        pkix: &[u8],
        point: &[u8],
        curve: &str,
        algorithms: &'static [Algorithm],
    ) -> Result<Self, KeyParseError> {
        let kid = kid_of(pkix);
        // An uncompressed SEC 1 point: 0x04, then x and y of equal length.
        let coordinates = point.get(1..).unwrap_or_default();
        let (x, y) = coordinates.split_at(coordinates.len() / 2);
        let (x, y) = (URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y));
        let decoding =
            DecodingKey::from_ec_components(&x, &y).map_err(|e| KeyParseError(e.to_string()))?;
        Ok(Self {
            jwk: json!({
                "use": "sig", "kty": "EC", "kid": kid, "crv": curve,
                "alg": algorithm_name(algorithms[0]), "x": x, "y": y,
            }),
            kid,
            algorithms,
            decoding,
        })
    }

    fn p256(key: p256::PublicKey) -> Result<Self, KeyParseError> {
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        let der = key
            .to_public_key_der()
            .map_err(|e| KeyParseError(e.to_string()))?;
        let point = key.to_encoded_point(false);
        Self::ec(der.as_bytes(), point.as_bytes(), "P-256", P256_ALGORITHMS)
    }

    fn p384(key: p384::PublicKey) -> Result<Self, KeyParseError> {
        use p384::elliptic_curve::sec1::ToEncodedPoint;
        let der = key
            .to_public_key_der()
            .map_err(|e| KeyParseError(e.to_string()))?;
        let point = key.to_encoded_point(false);
        Self::ec(der.as_bytes(), point.as_bytes(), "P-384", P384_ALGORITHMS)
    }
}

/// The JOSE name of `algorithm`.
pub(crate) fn algorithm_name(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::ES256 => "ES256",
        Algorithm::ES384 => "ES384",
        Algorithm::RS384 => "RS384",
        Algorithm::RS512 => "RS512",
        _ => "RS256",
    }
}

fn kid_of(pkix: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(pkix))
}

fn unreadable(tag: &str, error: impl std::fmt::Display) -> KeyParseError {
    KeyParseError(format!("a {tag} block cannot be read: {error}"))
}

fn public_key(der: &[u8]) -> Result<VerifyingKey, KeyParseError> {
    if let Ok(key) = RsaPublicKey::from_public_key_der(der) {
        return VerifyingKey::rsa(key);
    }
    if let Ok(key) = p256::PublicKey::from_public_key_der(der) {
        return VerifyingKey::p256(key);
    }
    p384::PublicKey::from_public_key_der(der)
        .map_err(|e| unreadable("PUBLIC KEY", e))
        .and_then(VerifyingKey::p384)
}

fn private_key(der: &[u8]) -> Result<VerifyingKey, KeyParseError> {
    if let Ok(key) = RsaPrivateKey::from_pkcs8_der(der) {
        return VerifyingKey::rsa(key.to_public_key());
    }
    if let Ok(key) = p256::SecretKey::from_pkcs8_der(der) {
        return VerifyingKey::p256(key.public_key());
    }
    p384::SecretKey::from_pkcs8_der(der)
        .map_err(|e| unreadable("PRIVATE KEY", e))
        .and_then(|key| VerifyingKey::p384(key.public_key()))
}

fn ec_private_key(der: &[u8]) -> Result<VerifyingKey, KeyParseError> {
    if let Ok(key) = p256::SecretKey::from_sec1_der(der) {
        return VerifyingKey::p256(key.public_key());
    }
    p384::SecretKey::from_sec1_der(der)
        .map_err(|e| unreadable("EC PRIVATE KEY", e))
        .and_then(|key| VerifyingKey::p384(key.public_key()))
}

#[cfg(test)]
mod tests {
    use rsa::pkcs1::EncodeRsaPrivateKey;
    use rsa::pkcs1::EncodeRsaPublicKey;
    use rsa::pkcs8::EncodePrivateKey;
    use rsa::pkcs8::LineEnding;

    use super::*;

    // R-ACC-121: a key file may hold PEM public or private keys, RSA or ECDSA, several at once;
    // every form of one key has the same key id.
    #[test]
    fn keys_are_read_from_public_and_private_pem() {
        let rsa = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("key");
        let forms = [
            rsa.to_pkcs8_pem(LineEnding::LF).expect("pem").to_string(),
            rsa.to_pkcs1_pem(LineEnding::LF).expect("pem").to_string(),
            rsa.to_public_key()
                .to_public_key_pem(LineEnding::LF)
                .expect("pem"),
            rsa.to_public_key()
                .to_pkcs1_pem(LineEnding::LF)
                .expect("pem"),
        ];
        let kids: Vec<String> = forms
            .iter()
            .map(|pem| {
                let keys = VerifyingKey::all_from_pem(pem.as_bytes()).expect("read");
                assert_eq!(keys.len(), 1);
                keys[0].kid().to_owned()
            })
            .collect();
        assert!(kids.iter().all(|k| *k == kids[0]), "{kids:?}");
        let ec = p256::SecretKey::random(&mut rsa::rand_core::OsRng);
        let ec_pem = ec.to_pkcs8_pem(LineEnding::LF).expect("pem").to_string();
        let sec1 = ec.to_sec1_pem(LineEnding::LF).expect("pem").to_string();
        let both = format!("{}{ec_pem}", forms[2]);
        let keys = VerifyingKey::all_from_pem(both.as_bytes()).expect("read");
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[1].jwk()["kty"], "EC");
        assert_eq!(keys[1].jwk()["crv"], "P-256");
        assert_eq!(keys[1].algorithm(), Algorithm::ES256);
        let from_sec1 = VerifyingKey::all_from_pem(sec1.as_bytes()).expect("read");
        assert_eq!(from_sec1[0].kid(), keys[1].kid());
        assert_eq!(keys[0].jwk()["alg"], "RS256");
        assert_eq!(keys[0].jwk()["e"], "AQAB");
        assert!(VerifyingKey::all_from_pem(b"not a key").is_err());
    }
}

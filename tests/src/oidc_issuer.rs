//! A local OpenID Connect issuer for the authentication tests: an HTTPS server on loopback
//! with its own CA ([`LoopbackPki`]) serving the discovery document and the key set, and
//! minting ID tokens signed with RS256 or ES256. Keys rotate on demand: a new key becomes
//! the signing key and is published beside the old ones.

use std::convert::Infallible;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::Request;
use http::Response;
use http::StatusCode;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use jsonwebtoken::Algorithm;
use jsonwebtoken::EncodingKey;
use jsonwebtoken::Header;
use rsa::RsaPrivateKey;
use rsa::pkcs8::EncodePrivateKey;
use rsa::traits::PublicKeyParts;
use rustls::ServerConfig;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use serde_json::Value;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::error::HarnessError;
use crate::error::Result;
use crate::loopback_pki::LoopbackPki;

/// The signing algorithms the issuer mints with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SigningAlg {
    /// RSA PKCS#1 v1.5 with SHA-256.
    Rs256,
    /// ECDSA P-256 with SHA-256.
    Es256,
}

/// One signing key: its id, algorithm, private half and published JWK.
struct SigningKey {
    kid: String,
    alg: Algorithm,
    private: EncodingKey,
    jwk: Value,
}

impl SigningKey {
    fn generate(kid: &str, alg: SigningAlg) -> Result<Self> {
        match alg {
            SigningAlg::Rs256 => {
                let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048)
                    .map_err(|e| setup(format!("RSA key: {e}")))?;
                let pem = key
                    .to_pkcs8_pem(rsa::pkcs8::LineEnding::LF)
                    .map_err(|e| setup(format!("RSA PEM: {e}")))?;
                let private = EncodingKey::from_rsa_pem(pem.as_bytes())
                    .map_err(|e| setup(format!("RSA key: {e}")))?;
                let jwk = json!({
                    "kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid,
                    "n": URL_SAFE_NO_PAD.encode(key.n().to_bytes_be()),
                    "e": URL_SAFE_NO_PAD.encode(key.e().to_bytes_be()),
                });
                Ok(Self {
                    kid: kid.to_owned(),
                    alg: Algorithm::RS256,
                    private,
                    jwk,
                })
            }
            SigningAlg::Es256 => {
                let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
                    .map_err(|e| setup(format!("EC key: {e}")))?;
                let private = EncodingKey::from_ec_pem(pair.serialize_pem().as_bytes())
                    .map_err(|e| setup(format!("EC key: {e}")))?;
                let raw = pair.public_key_raw();
                let jwk = json!({
                    "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
                    "x": URL_SAFE_NO_PAD.encode(&raw[1..33]),
                    "y": URL_SAFE_NO_PAD.encode(&raw[33..65]),
                });
                Ok(Self {
                    kid: kid.to_owned(),
                    alg: Algorithm::ES256,
                    private,
                    jwk,
                })
            }
        }
    }

    fn sign(&self, claims: &Value) -> Result<String> {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.private)
            .map_err(|e| setup(format!("signing: {e}")))
    }
}

fn setup(message: String) -> HarnessError {
    HarnessError::Certificates { reason: message }
}

/// The published keys (the last one signs).
#[derive(Default)]
struct Keys {
    keys: Vec<SigningKey>,
}

/// A running issuer; it stops when dropped.
pub struct OidcIssuer {
    url: String,
    ca_file: PathBuf,
    keys: Arc<Mutex<Keys>>,
    server: JoinHandle<()>,
}

impl OidcIssuer {
    /// Starts an issuer on a free loopback port whose CA and certificate are written into
    /// `dir`; its first key signs with `alg`.
    pub async fn start(dir: &Path, alg: SigningAlg) -> Result<Self> {
        let pki = LoopbackPki::generate(dir)?;
        let read = |path: &Path| {
            std::fs::read(path).map_err(|source| HarnessError::Io {
                path: path.to_owned(),
                source,
            })
        };
        let certs = CertificateDer::pem_slice_iter(&read(&pki.cert_file)?)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| setup(format!("issuer certificate: {e}")))?;
        let key = PrivateKeyDer::from_pem_slice(&read(&pki.key_file)?)
            .map_err(|e| setup(format!("issuer key: {e}")))?;
        let tls = ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| setup(format!("issuer TLS: {e}")))?;
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| setup(format!("issuer listener: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| setup(format!("issuer listener: {e}")))?
            .port();
        let url = format!("https://127.0.0.1:{port}");
        let keys = Arc::new(Mutex::new(Keys {
            keys: vec![SigningKey::generate("key-1", alg)?],
        }));
        let server = tokio::spawn(serve(
            listener,
            TlsAcceptor::from(Arc::new(tls)),
            url.clone(),
            keys.clone(),
        ));
        Ok(Self {
            url,
            ca_file: pki.ca_file,
            keys,
            server,
        })
    }

    /// The issuer URL (`iss`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The PEM CA that verifies the issuer's certificate.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }

    /// `claims` signed with the current key.
    pub fn mint(&self, claims: &Value) -> Result<String> {
        let keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        keys.keys
            .last()
            .ok_or_else(|| setup("the issuer has no key".to_owned()))?
            .sign(claims)
    }

    /// `claims` signed with a key that is not published but carries the current key's id (a
    /// forged token).
    pub fn mint_forged(&self, claims: &Value, alg: SigningAlg) -> Result<String> {
        let kid = {
            let keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
            keys.keys.last().map(|k| k.kid.clone()).unwrap_or_default()
        };
        SigningKey::generate(&kid, alg)?.sign(claims)
    }

    /// Makes a new key (`key-<n>`, signing with `alg`) the signing key; the old ones stay
    /// published.
    pub fn rotate(&self, alg: SigningAlg) -> Result<()> {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        let kid = format!("key-{}", keys.keys.len() + 1);
        keys.keys.push(SigningKey::generate(&kid, alg)?);
        Ok(())
    }
}

impl Drop for OidcIssuer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Accepts connections until aborted.
async fn serve(listener: TcpListener, tls: TlsAcceptor, url: String, keys: Arc<Mutex<Keys>>) {
    while let Ok((tcp, _)) = listener.accept().await {
        let tls = tls.clone();
        let url = url.clone();
        let keys = keys.clone();
        tokio::spawn(async move {
            let Ok(stream) = tls.accept(tcp).await else {
                return;
            };
            let service = service_fn(move |request: Request<Incoming>| {
                let answer = answer(request.uri().path(), &url, &keys);
                async move { Ok::<_, Infallible>(answer) }
            });
            let _closed = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The answer to `GET path`: the discovery document, the key set or 404.
fn answer(path: &str, url: &str, keys: &Mutex<Keys>) -> Response<Full<Bytes>> {
    let body = match path {
        "/.well-known/openid-configuration" => json!({
            "issuer": url,
            "jwks_uri": format!("{url}/keys"),
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
        }),
        "/keys" => {
            let keys = keys.lock().unwrap_or_else(|e| e.into_inner());
            json!({"keys": keys.keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()})
        }
        _ => {
            let mut response = Response::new(Full::new(Bytes::new()));
            *response.status_mut() = StatusCode::NOT_FOUND;
            return response;
        }
    };
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

//! The signing keys of one JWT issuer, fetched over HTTPS: the discovery document (whose
//! `issuer` must be the configured URL), then its `jwks_uri`. Keys are fetched on first use,
//! again when a token names an unknown key (at most once a second) and when they are older
//! than an hour; every fetch is bounded in size and time. The endpoints are verified with
//! the issuer's `certificateAuthority` (`--oidc-ca-file`) or the host's roots.

use std::sync::Arc;
use std::time::Duration;

use apiary_api::auth::jwt::KeySource;
use apiary_api::auth::jwt::validate::IssuerSettings;
use axum::body::Body;
use http::Uri;
use hyper_util::rt::TokioIo;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::jwk::JwkSet;
use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::ServerName;
use rustls::pki_types::pem::PemObject;
use serde::Deserialize;
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio::time::Instant;
use tokio_rustls::TlsConnector;

/// The largest discovery document or key set read.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// The longest one fetch (connect, TLS, request, body) may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// How old keys may get before they are fetched again.
const MAX_KEY_AGE: Duration = Duration::from_secs(60 * 60);
/// The least time between two fetches asked for by unknown keys.
const MIN_REFRESH_GAP: Duration = Duration::from_secs(1);

/// The parts of a discovery document read.
#[derive(Deserialize)]
struct Discovery {
    #[serde(default)]
    issuer: String,
    #[serde(default)]
    jwks_uri: String,
}

/// The keys last fetched, and when.
#[derive(Default)]
struct Cached {
    keys: Option<Arc<JwkSet>>,
    fetched: Option<Instant>,
}

/// One issuer's keys ([`KeySource`]).
pub struct IssuerKeys {
    issuer: String,
    discovery: String,
    tls: TlsConnector,
    cached: Mutex<Cached>,
}

impl IssuerKeys {
    /// The keys of `issuer`, trusted through its CA bundle or the host's roots; fails when
    /// the bundle holds no certificate or the host has no roots.
    pub fn new(issuer: &IssuerSettings) -> Result<Self, String> {
        let mut roots = RootCertStore::empty();
        match &issuer.certificate_authority {
            Some(pem) => {
                let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("certificate authority: {e}"))?;
                for cert in certs {
                    roots
                        .add(cert)
                        .map_err(|e| format!("certificate authority: {e}"))?;
                }
            }
            None => {
                let native = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(native.certs);
            }
        }
        if roots.is_empty() {
            return Err("no certificate authority to verify the issuer with".to_owned());
        }
        let tls = ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Self {
            issuer: issuer.url.clone(),
            discovery: issuer.discovery_document_url(),
            tls: TlsConnector::from(Arc::new(tls)),
            cached: Mutex::new(Cached::default()),
        })
    }

    /// Fetches the discovery document and then the key set.
    async fn fetch(&self) -> Result<JwkSet, String> {
        let body = self.get(&self.discovery).await?;
        let discovery: Discovery = serde_json::from_slice(&body)
            .map_err(|e| format!("oidc: decode discovery document: {e}"))?;
        if discovery.issuer != self.issuer {
            return Err(format!(
                "oidc: issuer did not match the issuer returned by provider, expected {:?} got {:?}",
                self.issuer, discovery.issuer
            ));
        }
        let body = self.get(&discovery.jwks_uri).await?;
        let set: serde_json::Value =
            serde_json::from_slice(&body).map_err(|e| format!("oidc: decode keys: {e}"))?;
        let keys = set
            .get("keys")
            .and_then(serde_json::Value::as_array)
            .ok_or("oidc: the key set has no keys")?
            .iter()
            .filter_map(|key| serde_json::from_value::<Jwk>(key.clone()).ok())
            .collect();
        Ok(JwkSet { keys })
    }

    /// The body of `GET url` (https), bounded in size and time.
    async fn get(&self, url: &str) -> Result<Vec<u8>, String> {
        tokio::time::timeout(FETCH_TIMEOUT, self.get_once(url))
            .await
            .map_err(|_| format!("oidc: get {url}: no answer within {FETCH_TIMEOUT:?}"))?
    }

    async fn get_once(&self, url: &str) -> Result<Vec<u8>, String> {
        let failed = |e: String| format!("oidc: get {url}: {e}");
        let uri: Uri = url.parse().map_err(|e| failed(format!("{e}")))?;
        if uri.scheme_str() != Some("https") {
            return Err(failed("not an https URL".to_owned()));
        }
        let host = uri.host().ok_or_else(|| failed("no host".to_owned()))?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = uri.port_u16().unwrap_or(443);
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| failed(format!("connect: {e}")))?;
        let name = ServerName::try_from(host.clone()).map_err(|e| failed(e.to_string()))?;
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|e| failed(format!("TLS: {e}")))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| failed(e.to_string()))?;
        tokio::spawn(connection);
        let authority = uri
            .authority()
            .map_or_else(|| host.clone(), |a| a.to_string());
        let request = http::Request::get(uri.clone())
            .header(http::header::HOST, authority)
            .header(http::header::ACCEPT, "application/json")
            .body(Body::empty())
            .map_err(|e| failed(e.to_string()))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| failed(e.to_string()))?;
        if !response.status().is_success() {
            return Err(failed(format!("answered {}", response.status())));
        }
        let body = axum::body::to_bytes(Body::new(response.into_body()), MAX_DOCUMENT_BYTES)
            .await
            .map_err(|e| failed(format!("body: {e}")))?;
        Ok(body.to_vec())
    }
}

#[async_trait::async_trait]
impl KeySource for IssuerKeys {
    async fn keys(&self, refresh: bool) -> Result<Arc<JwkSet>, String> {
        let mut cached = self.cached.lock().await;
        let now = Instant::now();
        let age = cached.fetched.map(|at| now.duration_since(at));
        let fresh = age.is_some_and(|age| age < MAX_KEY_AGE);
        let recent = age.is_some_and(|age| age < MIN_REFRESH_GAP);
        if let Some(keys) = &cached.keys
            && fresh
            && (!refresh || recent)
        {
            return Ok(keys.clone());
        }
        if cached.keys.is_none() && recent {
            return Err("oidc: the issuer's keys are not available yet".to_owned());
        }
        cached.fetched = Some(now);
        match self.fetch().await {
            Ok(keys) => {
                let keys = Arc::new(keys);
                cached.keys = Some(keys.clone());
                Ok(keys)
            }
            Err(error) => {
                tracing::warn!(issuer = %self.issuer, %error, "fetching the issuer's keys failed");
                cached.keys.clone().ok_or(error)
            }
        }
    }
}

//! The webhook client of the audit and authentication webhooks (`--audit-webhook-config-file`,
//! `--authentication-token-webhook-config-file`): the kubeconfig naming the server, its CA and
//! the client certificate or token, and [`TlsWebhook`], which posts JSON over TLS (HTTP/1.1, one
//! connection per post); as the audit [`WebhookTransport`] it posts each `EventList`, bounded
//! by a timeout.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use apiary_api::audit::WebhookTransport;
use axum::body::Body;
use base64::Engine;
use http::Uri;
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::ServerName;
use rustls::pki_types::pem::PemObject;
use serde::Deserialize;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// The longest one post may take (kube-apiserver's webhook client timeout).
pub const POST_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Kubeconfig {
    #[serde(default)]
    clusters: Vec<Named<Cluster>>,
    #[serde(default)]
    users: Vec<Named<User>>,
    #[serde(default)]
    contexts: Vec<Named<Context>>,
    #[serde(default)]
    current_context: String,
}

#[derive(Debug, Deserialize)]
struct Named<T> {
    #[serde(default)]
    name: String,
    #[serde(alias = "cluster", alias = "user", alias = "context")]
    item: T,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Cluster {
    server: String,
    #[serde(default)]
    certificate_authority: Option<PathBuf>,
    #[serde(default)]
    certificate_authority_data: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct User {
    #[serde(default)]
    client_certificate: Option<PathBuf>,
    #[serde(default)]
    client_certificate_data: Option<String>,
    #[serde(default)]
    client_key: Option<PathBuf>,
    #[serde(default)]
    client_key_data: Option<String>,
    #[serde(default)]
    token: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Context {
    #[serde(default)]
    cluster: String,
    #[serde(default)]
    user: String,
}

/// Posts to the webhook server over TLS.
pub struct TlsWebhook {
    uri: Uri,
    host: String,
    port: u16,
    tls: TlsConnector,
    token: Option<String>,
}

/// The most bytes of a webhook's answer that are read.
const MAX_ANSWER_BYTES: usize = 1 << 20;

impl TlsWebhook {
    /// The client the kubeconfig at `path` describes (its current context, else its first
    /// cluster and user); relative certificate paths are read next to it.
    pub fn from_kubeconfig(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let config: Kubeconfig = serde_saphyr::from_str(&text).map_err(|e| e.to_string())?;
        let base = path.parent().unwrap_or(Path::new("."));
        let context = config
            .contexts
            .iter()
            .find(|c| c.name == config.current_context)
            .map(|c| &c.item);
        let pick = |wanted: Option<&String>, names: Vec<&str>| {
            wanted
                .and_then(|w| names.iter().position(|n| n == w))
                .unwrap_or(0)
        };
        let cluster_names = config.clusters.iter().map(|c| c.name.as_str()).collect();
        let cluster = config
            .clusters
            .get(pick(context.map(|c| &c.cluster), cluster_names))
            .map(|c| &c.item)
            .ok_or("the kubeconfig names no cluster")?;
        let user_names = config.users.iter().map(|u| u.name.as_str()).collect();
        let user = config
            .users
            .get(pick(context.map(|c| &c.user), user_names))
            .map(|u| &u.item);
        let uri: Uri = cluster
            .server
            .parse()
            .map_err(|e| format!("server {:?}: {e}", cluster.server))?;
        if uri.scheme_str() != Some("https") {
            return Err(format!("server {:?} is not an https URL", cluster.server));
        }
        let host = uri.host().ok_or("the server URL has no host")?.to_owned();
        let port = uri.port_u16().unwrap_or(443);
        let ca = pem(
            base,
            cluster.certificate_authority.as_ref(),
            cluster.certificate_authority_data.as_ref(),
        )?
        .ok_or("the cluster needs certificate-authority or certificate-authority-data")?;
        let mut roots = RootCertStore::empty();
        for cert in certs(&ca)? {
            roots.add(cert).map_err(|e| e.to_string())?;
        }
        let builder = ClientConfig::builder().with_root_certificates(roots);
        let cert: Option<Vec<u8>> = user
            .map(|u| {
                pem(
                    base,
                    u.client_certificate.as_ref(),
                    u.client_certificate_data.as_ref(),
                )
            })
            .transpose()?
            .flatten();
        let key: Option<Vec<u8>> = user
            .map(|u| pem(base, u.client_key.as_ref(), u.client_key_data.as_ref()))
            .transpose()?
            .flatten();
        let tls = match (cert, key) {
            (Some(cert), Some(key)) => {
                let key = PrivateKeyDer::from_pem_slice(&key).map_err(|e| e.to_string())?;
                builder
                    .with_client_auth_cert(certs(&cert)?, key)
                    .map_err(|e| e.to_string())?
            }
            (None, None) => builder.with_no_client_auth(),
            _ => return Err("the user needs both a client certificate and its key".into()),
        };
        Ok(Self {
            uri,
            host,
            port,
            tls: TlsConnector::from(Arc::new(tls)),
            token: user.and_then(|u| u.token.clone()),
        })
    }

    /// Posts `body` (JSON) once, without a time limit of its own: the answer's status and its
    /// body (at most [`MAX_ANSWER_BYTES`]). Errors name no part of the body.
    pub async fn exchange(&self, body: Vec<u8>) -> Result<(http::StatusCode, Vec<u8>), String> {
        let tcp = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let name = ServerName::try_from(self.host.clone()).map_err(|e| e.to_string())?;
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        let mut request = http::Request::post(self.uri.clone())
            .header(http::header::HOST, format!("{}:{}", self.host, self.port))
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json");
        if let Some(token) = &self.token {
            request = request.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request
            .body(Body::from(body))
            .map_err(|_| "the request could not be built".to_owned())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let answer = axum::body::to_bytes(Body::new(response.into_body()), MAX_ANSWER_BYTES)
            .await
            .map_err(|e| format!("reading the answer: {e}"))?;
        Ok((status, answer.to_vec()))
    }

    async fn post_once(&self, body: Vec<u8>) -> Result<(), String> {
        let (status, _) = self.exchange(body).await?;
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("the webhook answered {status}"))
        }
    }
}

#[async_trait::async_trait]
impl WebhookTransport for TlsWebhook {
    async fn post(&self, body: Vec<u8>) -> Result<(), String> {
        tokio::time::timeout(POST_TIMEOUT, self.post_once(body))
            .await
            .map_err(|_| format!("no answer within {POST_TIMEOUT:?}"))?
    }
}

/// PEM bytes from a file (relative to `base`) or from base64 data; `None` when neither.
fn pem(
    base: &Path,
    file: Option<&PathBuf>,
    data: Option<&String>,
) -> Result<Option<Vec<u8>>, String> {
    if let Some(data) = data {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| format!("bad base64 data: {e}"))?;
        return Ok(Some(bytes));
    }
    file.map(|f| std::fs::read(base.join(f)).map_err(|e| format!("{}: {e}", f.display())))
        .transpose()
}

fn certs(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if certs.is_empty() {
        return Err("no certificate in the PEM data".into());
    }
    Ok(certs)
}

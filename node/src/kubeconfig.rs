//! Kubeconfig files as a client of a server reads them: the chosen context's cluster (its
//! `server` URL and CA) and user (a client certificate and key, or a bearer token), turned into
//! an [`Endpoint`] that sends requests over TLS (HTTP/1.1, pooled keep-alive connections of
//! [`crate::tls_client`]). The
//! webhooks (audit, authentication, authorization; CRD conversion through
//! [`crate::webhook_transport`]) and the operator commands (`apiary member`,
//! `apiary status`, `apiary snapshot`) use it.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use base64::Engine;
use http::Method;
use http::Uri;
use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use serde::Deserialize;

use crate::tls_client;
use crate::tls_client::TlsClient;

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

/// A server and how to reach it as the kubeconfig's user.
pub struct Endpoint {
    /// The `server` URL.
    pub uri: Uri,
    /// The `Host` header: the URL's host and port.
    host: String,
    /// Connections verifying the server's certificate (for the URL's host, unless told
    /// otherwise).
    client: TlsClient,
    token: Option<String>,
}

impl Endpoint {
    /// The endpoint the kubeconfig at `path` describes for `context` (`None`: its current
    /// context, else its first cluster and user); relative certificate paths are read next to
    /// it. Errors name the problem, never a key or token.
    pub fn from_kubeconfig(path: &Path, context: Option<&str>) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let config: Kubeconfig = serde_saphyr::from_str(&text).map_err(|e| e.to_string())?;
        let base = path.parent().unwrap_or(Path::new("."));
        let wanted = context.unwrap_or(&config.current_context);
        let found = config
            .contexts
            .iter()
            .find(|c| c.name == wanted)
            .map(|c| &c.item);
        if let Some(name) = context
            && found.is_none()
        {
            return Err(format!("the kubeconfig has no context {name:?}"));
        }
        let context = found;
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
                let key = PrivateKeyDer::from_pem_slice(&key)
                    .map_err(|_| "the client key is not a PEM private key".to_owned())?;
                builder
                    .with_client_auth_cert(certs(&cert)?, key)
                    .map_err(|e| e.to_string())?
            }
            (None, None) => builder.with_no_client_auth(),
            _ => return Err("the user needs both a client certificate and its key".into()),
        };
        Ok(Self {
            client: tls_client::client(Arc::new(tls), &host)?,
            host: format!("{host}:{port}"),
            uri,
            token: user.and_then(|u| u.token.clone()),
        })
    }

    /// A webhook at `url` (https), whose certificate must name `server_name` and chain to
    /// `ca` (PEM; `None`: the host's roots); no client credentials.
    pub fn for_webhook(url: &str, server_name: &str, ca: Option<&[u8]>) -> Result<Self, String> {
        let uri: Uri = url.parse().map_err(|e| format!("{e}"))?;
        if uri.scheme_str() != Some("https") {
            return Err("not an https URL".to_owned());
        }
        let host = uri.host().ok_or("the URL has no host")?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = uri.port_u16().unwrap_or(443);
        let mut roots = RootCertStore::empty();
        match ca {
            Some(ca) => {
                for cert in certs(ca)? {
                    roots.add(cert).map_err(|e| e.to_string())?;
                }
            }
            None => {
                roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            }
        }
        let tls = ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Self {
            client: tls_client::client(Arc::new(tls), server_name)?,
            host: format!("{host}:{port}"),
            uri,
            token: None,
        })
    }

    /// Sends one request to `path_and_query` on the server (`None`: the `server` URL itself)
    /// over a pooled TLS connection, with JSON as the accepted answer and `content_type` for a
    /// body, and returns the answer with its body unread. Errors name no part of the body.
    pub async fn send(
        &self,
        method: Method,
        path_and_query: Option<&str>,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Result<http::Response<hyper::body::Incoming>, String> {
        let uri = match path_and_query {
            Some(path) => {
                let mut parts = self.uri.clone().into_parts();
                parts.path_and_query =
                    Some(path.parse().map_err(|_| format!("bad path {path:?}"))?);
                Uri::from_parts(parts).map_err(|e| e.to_string())?
            }
            None => self.uri.clone(),
        };
        let mut request = http::Request::builder()
            .method(method)
            .uri(uri)
            .header(http::header::HOST, &self.host)
            .header(http::header::ACCEPT, "application/json")
            .header(
                http::header::USER_AGENT,
                concat!("apiary/", env!("CARGO_PKG_VERSION")),
            );
        if let Some(content_type) = content_type {
            request = request.header(http::header::CONTENT_TYPE, content_type);
        }
        if let Some(token) = &self.token {
            request = request.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request
            .body(Body::from(body))
            .map_err(|_| "the request could not be built".to_owned())?;
        self.client
            .request(request)
            .await
            .map_err(|e| tls_client::describe(&e))
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

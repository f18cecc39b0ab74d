//! A real review webhook server for the webhook tests (TokenReview, SubjectAccessReview):
//! HTTPS on loopback with its own CA ([`LoopbackPki`]), answering each review it receives with
//! what its answer function makes of it, and keeping every review so tests can count calls and
//! check what was sent. [`ReviewWebhook::kubeconfig`] writes the kubeconfig that names it.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
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

/// What the server answers a review (the parsed body; `Null` when it is not JSON).
pub type AnswerFn = Arc<dyn Fn(&Value) -> Bytes + Send + Sync>;

/// A running review webhook server; stops when dropped.
pub struct ReviewWebhook {
    url: String,
    ca_file: PathBuf,
    received: Arc<Mutex<Vec<Value>>>,
    server: JoinHandle<()>,
}

impl ReviewWebhook {
    /// Starts a server on a free loopback port serving `path`, its certificates in `dir`,
    /// answering each review with `answer`.
    pub async fn start(dir: &Path, path: &str, answer: AnswerFn) -> Result<Self> {
        Self::start_naming(dir, path, &[], answer).await
    }

    /// As [`Self::start`], its certificate also valid for `names`.
    pub async fn start_naming(
        dir: &Path,
        path: &str,
        names: &[&str],
        answer: AnswerFn,
    ) -> Result<Self> {
        let (listener, tls, url, ca_file) = loopback_tls(dir, path, names).await?;
        let received = Arc::new(Mutex::new(Vec::new()));
        let server = tokio::spawn(serve(listener, tls, answer, received.clone()));
        Ok(Self {
            url,
            ca_file,
            received,
            server,
        })
    }

    /// Writes the kubeconfig naming this server (its URL and CA) to `path`.
    pub fn kubeconfig(&self, path: &Path) -> Result<()> {
        write_kubeconfig(path, &self.url, &self.ca_file)
    }

    /// The URL the server answers on (`https://127.0.0.1:<port>/<path>`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The PEM of the CA that verifies the server.
    pub fn ca_pem(&self) -> Result<String> {
        std::fs::read_to_string(&self.ca_file).map_err(|source| HarnessError::Io {
            path: self.ca_file.clone(),
            source,
        })
    }

    /// Every review received so far, in order.
    pub fn received(&self) -> Vec<Value> {
        self.received
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// A TLS listener on a free loopback port, with a CA and certificate (also valid for
/// `names`) made in `dir`: the
/// listener, its acceptor, the URL of `path` on it and the CA file that verifies it.
async fn loopback_tls(
    dir: &Path,
    path: &str,
    names: &[&str],
) -> Result<(TcpListener, TlsAcceptor, String, PathBuf)> {
    let pki = LoopbackPki::generate_naming(dir, names)?;
    let certificates = |reason: String| HarnessError::Certificates { reason };
    let chain = CertificateDer::pem_file_iter(&pki.cert_file)
        .and_then(Iterator::collect::<std::result::Result<Vec<_>, _>>)
        .map_err(|e| certificates(e.to_string()))?;
    let key =
        PrivateKeyDer::from_pem_file(&pki.key_file).map_err(|e| certificates(e.to_string()))?;
    let tls = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| certificates(e.to_string()))?;
    let io = |source| HarnessError::Io {
        path: dir.to_owned(),
        source,
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.map_err(io)?;
    let port = listener.local_addr().map_err(io)?.port();
    Ok((
        listener,
        TlsAcceptor::from(Arc::new(tls)),
        format!("https://127.0.0.1:{port}/{path}"),
        pki.ca_file,
    ))
}

/// Writes a kubeconfig naming the server at `url`, verified by `ca_file`, to `path`.
fn write_kubeconfig(path: &Path, url: &str, ca_file: &Path) -> Result<()> {
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "webhook", "cluster": {
            "server": url,
            "certificate-authority": ca_file,
        }}],
        "users": [{"name": "apiserver", "user": {}}],
        "contexts": [{"name": "webhook", "context": {"cluster": "webhook", "user": "apiserver"}}],
        "current-context": "webhook",
    });
    std::fs::write(path, config.to_string()).map_err(|source| HarnessError::Io {
        path: path.to_owned(),
        source,
    })
}

impl Drop for ReviewWebhook {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn serve(
    listener: TcpListener,
    tls: TlsAcceptor,
    answer: AnswerFn,
    received: Arc<Mutex<Vec<Value>>>,
) {
    while let Ok((tcp, _)) = listener.accept().await {
        let tls = tls.clone();
        let answer = answer.clone();
        let received = received.clone();
        tokio::spawn(async move {
            let Ok(stream) = tls.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(move |request| {
                let answer = answer.clone();
                let received = received.clone();
                async move {
                    let review = record(request, &received).await;
                    let reply = Full::new(answer(&review));
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(reply))
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The review `request` carries, recorded.
async fn record(request: hyper::Request<Incoming>, received: &Mutex<Vec<Value>>) -> Value {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    received
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(review.clone());
    review
}

//! A real SubjectAccessReview webhook server for the authorization tests: HTTPS on loopback
//! with its own CA, answering each review by its `spec.user` from a table (an unknown user gets
//! no opinion) in the `apiVersion` the review came in, and keeping every review it received so
//! tests can count calls and check what was sent. [`AuthzWebhook::kubeconfig`] writes the
//! kubeconfig that names it.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::error::Result;
use crate::token_webhook::loopback_tls;
use crate::token_webhook::write_kubeconfig;

/// What the server answers one user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `status.allowed: true`.
    Allow,
    /// `status.denied: true` with this reason.
    Deny(String),
    /// Neither allowed nor denied.
    NoOpinion,
    /// A body that is not a SubjectAccessReview.
    Garbage,
}

/// The answers of the server, by `spec.user`.
pub type Table = BTreeMap<String, Answer>;

/// A running SubjectAccessReview webhook server; stops when dropped.
pub struct AuthzWebhook {
    url: String,
    ca_file: PathBuf,
    received: Arc<Mutex<Vec<Value>>>,
    server: JoinHandle<()>,
}

impl AuthzWebhook {
    /// Starts a server on a free loopback port, its certificates in `dir`, answering `table`.
    pub async fn start(dir: &Path, table: Table) -> Result<Self> {
        let (listener, tls, url, ca_file) = loopback_tls(dir, "authorize").await?;
        let received = Arc::new(Mutex::new(Vec::new()));
        let server = tokio::spawn(serve(listener, tls, Arc::new(table), received.clone()));
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

    /// Every SubjectAccessReview received so far, in order.
    pub fn received(&self) -> Vec<Value> {
        self.received
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The reviews received so far about `user`.
    pub fn received_for(&self, user: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|r| r["spec"]["user"] == user)
            .collect()
    }
}

impl Drop for AuthzWebhook {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn serve(
    listener: TcpListener,
    tls: TlsAcceptor,
    table: Arc<Table>,
    received: Arc<Mutex<Vec<Value>>>,
) {
    while let Ok((tcp, _)) = listener.accept().await {
        let tls = tls.clone();
        let table = table.clone();
        let received = received.clone();
        tokio::spawn(async move {
            let Ok(stream) = tls.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(move |request| {
                let table = table.clone();
                let received = received.clone();
                async move {
                    let answer = answer(request, &table, &received).await;
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(answer)))
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The answer to `request`'s review, recorded first.
async fn answer(
    request: hyper::Request<Incoming>,
    table: &Table,
    received: &Mutex<Vec<Value>>,
) -> Bytes {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    received
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(review.clone());
    let user = review["spec"]["user"].as_str().unwrap_or_default();
    let status = match table.get(user).unwrap_or(&Answer::NoOpinion) {
        Answer::Allow => json!({"allowed": true}),
        Answer::Deny(reason) => json!({"allowed": false, "denied": true, "reason": reason}),
        Answer::NoOpinion => json!({"allowed": false}),
        Answer::Garbage => return Bytes::from_static(b"<html>not a review</html>"),
    };
    let reply = json!({
        "apiVersion": review["apiVersion"],
        "kind": "SubjectAccessReview",
        "status": status,
    });
    Bytes::from(reply.to_string())
}

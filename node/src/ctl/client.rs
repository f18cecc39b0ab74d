//! The operator commands' client: finds the kubeconfig (`--kubeconfig`, else `$KUBECONFIG`'s
//! first file, else `~/.kube/config`) and its context, and exchanges JSON with the operating
//! API under [`apiary_api::admin::PREFIX`], turning `Status` answers into [`CtlError`]s.

use std::path::PathBuf;

use apiary_api::admin::PREFIX;
use clap::Args;
use http::Method;
use http_body_util::BodyExt;
use serde_json::Value;
use tokio::io::AsyncWrite;
use tokio::io::AsyncWriteExt;

use crate::kubeconfig::Endpoint;

/// The most bytes of a JSON answer that are read.
const MAX_ANSWER_BYTES: usize = 16 << 20;

/// How the operator commands reach the cluster.
#[derive(Debug, Clone, Default, Args)]
pub struct ConnectArgs {
    /// The kubeconfig to use (default: the first file of `$KUBECONFIG`, else ~/.kube/config).
    #[arg(long, global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current context).
    #[arg(long, global = true)]
    pub context: Option<String>,
}

impl ConnectArgs {
    /// The kubeconfig file these arguments name.
    fn kubeconfig_path(&self) -> Result<PathBuf, CtlError> {
        if let Some(path) = &self.kubeconfig {
            return Ok(path.clone());
        }
        let from_env = std::env::var_os("KUBECONFIG")
            .and_then(|paths| std::env::split_paths(&paths).find(|p| !p.as_os_str().is_empty()));
        if let Some(path) = from_env {
            return Ok(path);
        }
        std::env::var_os("HOME")
            .map(|home| PathBuf::from(home).join(".kube").join("config"))
            .ok_or_else(|| CtlError::Config("no --kubeconfig, $KUBECONFIG or $HOME".into()))
    }
}

/// Why an operator command failed.
#[derive(Debug, thiserror::Error)]
pub enum CtlError {
    /// The kubeconfig could not be read or used.
    #[error("kubeconfig: {0}")]
    Config(String),
    /// The server could not be reached, or its answer not read.
    #[error("{0}")]
    Transport(String),
    /// The server answered with an error `Status`.
    #[error("{message} ({code} {reason})")]
    Status {
        /// The HTTP status code.
        code: u16,
        /// The `Status` reason (`Forbidden`, `Conflict`, ...).
        reason: String,
        /// The `Status` message.
        message: String,
    },
}

/// A client of the operating API.
pub struct Client {
    endpoint: Endpoint,
}

impl Client {
    /// The client `args` describe.
    pub fn connect(args: &ConnectArgs) -> Result<Self, CtlError> {
        let path = args.kubeconfig_path()?;
        let endpoint =
            Endpoint::from_kubeconfig(&path, args.context.as_deref()).map_err(CtlError::Config)?;
        Ok(Self { endpoint })
    }

    /// GETs `path` (below [`PREFIX`], with its query) and returns the JSON answer.
    pub async fn get(&self, path: &str) -> Result<Value, CtlError> {
        self.exchange(Method::GET, path, None).await
    }

    /// POSTs `body` to `path` and returns the JSON answer.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, CtlError> {
        self.exchange(Method::POST, path, Some(body)).await
    }

    /// DELETEs `path` and returns the JSON answer.
    pub async fn delete(&self, path: &str) -> Result<Value, CtlError> {
        self.exchange(Method::DELETE, path, None).await
    }

    /// GETs `path` and copies the answer's body to `out` as it arrives (a snapshot), without
    /// holding it in memory; returns the bytes copied.
    pub async fn download(
        &self,
        path: &str,
        out: &mut (impl AsyncWrite + Unpin),
    ) -> Result<u64, CtlError> {
        let response = self.send(Method::GET, path, None).await?;
        let mut response = error_status(response).await?;
        let mut copied = 0;
        while let Some(frame) = response.body_mut().frame().await {
            let frame = frame.map_err(|e| CtlError::Transport(format!("reading: {e}")))?;
            if let Ok(data) = frame.into_data() {
                out.write_all(&data)
                    .await
                    .map_err(|e| CtlError::Transport(format!("writing: {e}")))?;
                copied += data.len() as u64;
            }
        }
        out.flush()
            .await
            .map_err(|e| CtlError::Transport(format!("writing: {e}")))?;
        Ok(copied)
    }

    async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, CtlError> {
        let response = self.send(method, path, body).await?;
        let response = error_status(response).await?;
        let bytes = read_limited(response).await?;
        if bytes.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| CtlError::Transport(format!("the answer is not JSON: {e}")))
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<http::Response<hyper::body::Incoming>, CtlError> {
        let target = format!("{PREFIX}{}", path.trim_start_matches('/'));
        let (content_type, body) = match body {
            Some(body) => (Some("application/json"), body.to_string().into_bytes()),
            None => (None, Vec::new()),
        };
        self.endpoint
            .send(method, Some(&target), content_type, body)
            .await
            .map_err(CtlError::Transport)
    }
}

/// `response` when it succeeded; else its `Status` as a [`CtlError`].
async fn error_status(
    response: http::Response<hyper::body::Incoming>,
) -> Result<http::Response<hyper::body::Incoming>, CtlError> {
    let code = response.status();
    if code.is_success() {
        return Ok(response);
    }
    let bytes = read_limited(response).await?;
    let status: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let text = |key: &str| status.get(key).and_then(Value::as_str).map(str::to_owned);
    Err(CtlError::Status {
        code: code.as_u16(),
        reason: text("reason").unwrap_or_else(|| code.canonical_reason().unwrap_or("").into()),
        message: text("message").unwrap_or_else(|| String::from_utf8_lossy(&bytes).into_owned()),
    })
}

/// The body of `response`, at most [`MAX_ANSWER_BYTES`].
async fn read_limited(
    response: http::Response<hyper::body::Incoming>,
) -> Result<Vec<u8>, CtlError> {
    let limited = http_body_util::Limited::new(response.into_body(), MAX_ANSWER_BYTES);
    limited
        .collect()
        .await
        .map(|c| c.to_bytes().to_vec())
        .map_err(|e| CtlError::Transport(format!("reading the answer: {e}")))
}

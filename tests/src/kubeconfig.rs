//! Reads one context of the kubeconfig `apiary dev` writes: the replica's address and a rustls
//! client configuration trusting the cluster CA and presenting the admin client certificate.
//!
//! Parsing goes through kube-rs (`Kubeconfig::read_from`, `Config::from_custom_kubeconfig`), the
//! same code path a kube-rs user takes, so a kubeconfig the harness accepts is one real clients
//! accept too.

use std::path::Path;
use std::sync::Arc;

use http::Uri;
use kube::Config;
use kube::client::ConfigExt;
use kube::config::KubeConfigOptions;
use kube::config::Kubeconfig;
use rustls::ClientConfig;

use crate::error::HarnessError;
use crate::error::Result;

/// The address and TLS settings of one kubeconfig context.
#[derive(Clone)]
pub struct Endpoint {
    /// The context name (`node-1`, ...).
    pub context: String,
    /// The server URL of the context's cluster.
    pub server: Uri,
    /// CA trust and client identity from the context's cluster and user.
    pub tls: Arc<ClientConfig>,
}

/// Installs ring as the process's rustls crypto provider unless one is installed already; the
/// kube-rs TLS code builds its configuration with the process default.
pub fn install_crypto_provider() {
    // An error only means another provider was installed first, which serves as well.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The kube-rs configuration of `context` in the kubeconfig at `path`.
pub async fn kube_config(path: &Path, context: &str) -> Result<Config> {
    let error = |reason: String| HarnessError::Kubeconfig {
        path: path.to_path_buf(),
        context: context.to_owned(),
        reason,
    };
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| error(e.to_string()))?;
    let options = KubeConfigOptions {
        context: Some(context.to_owned()),
        ..KubeConfigOptions::default()
    };
    Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| error(e.to_string()))
}

/// Reads `context` from the kubeconfig at `path`.
pub async fn endpoint(path: &Path, context: &str) -> Result<Endpoint> {
    install_crypto_provider();
    let config = kube_config(path, context).await?;
    let tls = config
        .rustls_client_config()
        .map_err(|e| HarnessError::Kubeconfig {
            path: path.to_path_buf(),
            context: context.to_owned(),
            reason: format!("no usable TLS settings: {e}"),
        })?;
    Ok(Endpoint {
        context: context.to_owned(),
        server: config.cluster_url,
        tls: Arc::new(tls),
    })
}

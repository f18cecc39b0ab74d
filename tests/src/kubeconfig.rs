//! Reads one context of a kubeconfig (the one `apiary dev` writes, or a test's own): the
//! replica's address, a rustls client configuration trusting the cluster CA and presenting the
//! user's client certificate, and the user's other [`Credentials`] (`token`, `tokenFile`,
//! `exec`).
//!
//! Parsing goes through kube-rs (`Kubeconfig::read_from`, `Config::from_custom_kubeconfig`), the
//! same code path a kube-rs user takes, so a kubeconfig the harness accepts is one real clients
//! accept too.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use http::Uri;
use kube::Config;
use kube::client::ConfigExt;
use kube::config::KubeConfigOptions;
use kube::config::Kubeconfig;
use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;

use crate::error::HarnessError;
use crate::error::Result;
use crate::exec_credential::ClusterInfo;
use crate::exec_credential::ExecPlugin;
use crate::exec_credential::exec_group;

/// The address and TLS settings of one kubeconfig context.
#[derive(Clone)]
pub struct Endpoint {
    /// The context name (`node-1`, ...).
    pub context: String,
    /// The server URL of the context's cluster.
    pub server: Uri,
    /// CA trust and client identity from the context's cluster and user.
    pub tls: Arc<ClientConfig>,
    /// The cluster's CAs alone (for a client certificate that arrives later, from a plugin).
    pub roots: Arc<RootCertStore>,
    /// The user's credentials besides a client certificate of the kubeconfig.
    pub credentials: Credentials,
}

/// A kubeconfig user's credentials that its TLS settings do not hold.
#[derive(Debug, Clone, Default)]
pub enum Credentials {
    /// None (a client certificate, or nothing).
    #[default]
    None,
    /// `token`: a bearer token.
    Token(String),
    /// `tokenFile`: a file holding a bearer token, read for every request.
    TokenFile(PathBuf),
    /// `exec`: a credential plugin (a bearer token or a client certificate).
    Exec(Arc<ExecPlugin>),
}

/// Installs ring as the process's rustls crypto provider unless one is installed already; the
/// kube-rs TLS code builds its configuration with the process default.
pub fn install_crypto_provider() {
    // An error only means another provider was installed first, which serves as well.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The kube-rs configuration of `context` in the kubeconfig at `path`.
pub async fn kube_config(path: &Path, context: &str) -> Result<Config> {
    load(path, context, |_| ()).await
}

/// The kube-rs configuration of `context` in the kubeconfig at `path`, after `adjust`.
async fn load(path: &Path, context: &str, adjust: impl FnOnce(&mut Kubeconfig)) -> Result<Config> {
    let error = |reason: String| HarnessError::Kubeconfig {
        path: path.to_path_buf(),
        context: context.to_owned(),
        reason,
    };
    let mut kubeconfig = Kubeconfig::read_from(path).map_err(|e| error(e.to_string()))?;
    adjust(&mut kubeconfig);
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
    // The plugin runs here, as [`Credentials::Exec`], not inside kube-rs as well.
    let config = load(path, context, |kubeconfig| {
        for user in &mut kubeconfig.auth_infos {
            if let Some(info) = &mut user.auth_info {
                info.exec = None;
            }
        }
    })
    .await?;
    let tls = config
        .rustls_client_config()
        .map_err(|e| HarnessError::Kubeconfig {
            path: path.to_path_buf(),
            context: context.to_owned(),
            reason: format!("no usable TLS settings: {e}"),
        })?;
    let mut roots = RootCertStore::empty();
    for der in config.root_cert.iter().flatten() {
        roots
            .add(CertificateDer::from(der.clone()))
            .map_err(|e| HarnessError::Kubeconfig {
                path: path.to_path_buf(),
                context: context.to_owned(),
                reason: format!("cluster CA unusable: {e}"),
            })?;
    }
    Ok(Endpoint {
        context: context.to_owned(),
        credentials: credentials(path, context)?,
        server: config.cluster_url,
        tls: Arc::new(tls),
        roots: Arc::new(roots),
    })
}

/// The [`Credentials`] of `context`'s user in the kubeconfig at `path`.
pub fn credentials(path: &Path, context: &str) -> Result<Credentials> {
    let error = |reason: String| HarnessError::Kubeconfig {
        path: path.to_path_buf(),
        context: context.to_owned(),
        reason,
    };
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| error(e.to_string()))?;
    let named = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.clone())
        .ok_or_else(|| error("no such context".to_owned()))?;
    let Some(user) = kubeconfig
        .auth_infos
        .iter()
        .find(|u| Some(&u.name) == named.user.as_ref())
        .and_then(|u| u.auth_info.clone())
    else {
        return Ok(Credentials::None);
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    if let Some(exec) = &user.exec {
        let cluster = kubeconfig
            .clusters
            .iter()
            .find(|c| c.name == named.cluster)
            .and_then(|c| c.cluster.clone())
            .unwrap_or_default();
        let certificate_authority = match (
            &cluster.certificate_authority_data,
            &cluster.certificate_authority,
        ) {
            (Some(data), _) => {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .map_err(|e| error(format!("certificate-authority-data: {e}")))?
            }
            (None, Some(file)) => {
                std::fs::read(dir.join(file)).map_err(|source| HarnessError::Io {
                    path: dir.join(file),
                    source,
                })?
            }
            (None, None) => Vec::new(),
        };
        let extension = |group: &str| {
            cluster
                .extensions
                .iter()
                .flatten()
                .find(|e| e.name == format!("{group}/exec"))
                .map(|e| e.extension.clone())
        };
        let info = ClusterInfo {
            server: cluster.server.clone().unwrap_or_default(),
            certificate_authority,
            config: extension(exec_group(crate::Flavor::Kubernetes))
                .or_else(|| extension(exec_group(crate::Flavor::Platform))),
        };
        return Ok(Credentials::Exec(Arc::new(ExecPlugin::new(
            exec, dir, info,
        )?)));
    }
    // kube's secret strings serialize as they were read.
    let fields = serde_json::to_value(&user).map_err(|e| error(e.to_string()))?;
    if let Some(token) = fields["token"].as_str().filter(|t| !t.is_empty()) {
        return Ok(Credentials::Token(token.to_owned()));
    }
    Ok(match &user.token_file {
        Some(file) => Credentials::TokenFile(dir.join(file)),
        None => Credentials::None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A kubeconfig in `dir` whose context `c` has user `user` (JSON).
    fn kubeconfig(dir: &Path, user: serde_json::Value) -> PathBuf {
        let path = dir.join("kubeconfig");
        let config = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        });
        std::fs::write(&path, config.to_string()).expect("kubeconfig written");
        path
    }

    // Kubeconfig users with `token`, `tokenFile` (relative to the file) and `exec` are read.
    #[test]
    fn token_token_file_and_exec_users_are_read() {
        let dir = tempfile::tempdir().expect("dir");
        let token = credentials(&kubeconfig(dir.path(), json!({"token": "abc"})), "c");
        assert!(matches!(token, Ok(Credentials::Token(t)) if t == "abc"));
        let file = credentials(&kubeconfig(dir.path(), json!({"tokenFile": "t.txt"})), "c");
        assert!(matches!(file, Ok(Credentials::TokenFile(p)) if p == dir.path().join("t.txt")));
        let exec = json!({"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "plugin",
        }});
        let exec = credentials(&kubeconfig(dir.path(), exec), "c");
        assert!(matches!(exec, Ok(Credentials::Exec(_))));
        assert!(matches!(
            credentials(&kubeconfig(dir.path(), json!({})), "c"),
            Ok(Credentials::None)
        ));
        assert!(credentials(&kubeconfig(dir.path(), json!({})), "missing").is_err());
    }
}

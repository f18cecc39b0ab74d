//! The client side of credential plugins (spec 001 "Credential plugin exchange"): a kubeconfig
//! user's `exec` runs a command that prints an ExecCredential with a bearer token or a client
//! certificate. The plugin gets its request in `<FLAVOR>_EXEC_INFO` (`spec.interactive`, and
//! `spec.cluster` with `provideClusterInfo`); its answer is cached until its
//! `expirationTimestamp` or until the server answers 401 ([`ExecPlugin::forget`]).
//!
//! Errors name the plugin's command and never the credential.

use std::io::IsTerminal;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;

use chrono::DateTime;
use chrono::Utc;
use kube::config::ExecConfig;
use kube::config::ExecInteractiveMode;
use serde_json::Value;
use serde_json::json;

use crate::dev_cluster::Flavor;
use crate::error::HarnessError;
use crate::error::Result;
use crate::loopback_pki::ClientCert;

/// What a plugin answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// A bearer token.
    Token(String),
    /// A client certificate and its key.
    Certificate(ClientCert),
}

/// The cluster as `spec.cluster` describes it to a plugin with `provideClusterInfo`.
#[derive(Debug, Clone, Default)]
pub struct ClusterInfo {
    /// The server URL.
    pub server: String,
    /// The cluster's CA bundle, PEM (sent base64-encoded).
    pub certificate_authority: Vec<u8>,
    /// The cluster's `client.authentication.<domain>/exec` extension, if any.
    pub config: Option<Value>,
}

/// A kubeconfig user's credential plugin and its cached answer.
#[derive(Debug)]
pub struct ExecPlugin {
    command: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    api_version: String,
    interactive_mode: ExecInteractiveMode,
    cluster: Option<ClusterInfo>,
    info_variable: String,
    cached: Mutex<Option<Cached>>,
}

#[derive(Debug, Clone)]
struct Cached {
    credential: Credential,
    expires: Option<DateTime<Utc>>,
}

/// The API group of ExecCredential in `flavor`.
pub fn exec_group(flavor: Flavor) -> &'static str {
    match flavor {
        Flavor::Platform => "client.authentication.platform.io",
        Flavor::Kubernetes => "client.authentication.k8s.io",
    }
}

impl ExecPlugin {
    /// The plugin `exec` of a kubeconfig in `kubeconfig_dir` (a command with a directory
    /// resolves against it, a bare name is looked up on `PATH`), for the cluster `cluster`. The
    /// flavor is the one whose ExecCredential group `exec.apiVersion` names.
    pub fn new(exec: &ExecConfig, kubeconfig_dir: &Path, cluster: ClusterInfo) -> Result<Self> {
        let command = exec.command.clone().unwrap_or_default();
        let error = |reason: String| HarnessError::ExecPlugin {
            command: command.clone(),
            reason,
        };
        if command.is_empty() {
            return Err(error("exec has no command".to_owned()));
        }
        let api_version = exec.api_version.clone().unwrap_or_default();
        let flavor = [Flavor::Platform, Flavor::Kubernetes]
            .into_iter()
            .find(|flavor| api_version.starts_with(&format!("{}/", exec_group(*flavor))))
            .ok_or_else(|| error(format!("unsupported apiVersion {api_version:?}")))?;
        let version = api_version.strip_prefix(exec_group(flavor));
        let interactive_mode = match (version, &exec.interactive_mode) {
            (Some("/v1"), None) => return Err(error("v1 requires interactiveMode".to_owned())),
            (Some("/v1" | "/v1beta1"), Some(mode)) => mode.clone(),
            (Some("/v1beta1"), None) => ExecInteractiveMode::IfAvailable,
            _ => return Err(error(format!("unsupported apiVersion {api_version:?}"))),
        };
        let path = PathBuf::from(&command);
        let command = if path.is_relative() && command.contains(std::path::MAIN_SEPARATOR) {
            kubeconfig_dir.join(path)
        } else {
            path
        };
        let env = exec
            .env
            .iter()
            .flatten()
            .filter_map(|pair| Some((pair.get("name")?.clone(), pair.get("value")?.clone())))
            .collect();
        Ok(Self {
            command,
            args: exec.args.clone().unwrap_or_default(),
            env,
            api_version,
            interactive_mode,
            cluster: exec.provide_cluster_info.then_some(cluster),
            info_variable: format!("{}_EXEC_INFO", flavor.as_str().to_uppercase()),
            cached: Mutex::new(None),
        })
    }

    /// The credential: the cached one while it has not expired, else the plugin's new answer.
    pub async fn credential(&self) -> Result<Credential> {
        if let Some(cached) = self.lock().as_ref()
            && cached.expires.is_none_or(|at| Utc::now() < at)
        {
            return Ok(cached.credential.clone());
        }
        let fresh = self.run().await?;
        let credential = fresh.credential.clone();
        *self.lock() = Some(fresh);
        Ok(credential)
    }

    /// Drops the cached credential (the server answered 401), so the next request runs the
    /// plugin again.
    pub fn forget(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Cached>> {
        self.cached
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn error(&self, reason: String) -> HarnessError {
        HarnessError::ExecPlugin {
            command: self.command.display().to_string(),
            reason,
        }
    }

    /// The ExecCredential the plugin gets in its environment.
    fn request(&self, interactive: bool) -> Value {
        let mut spec = json!({"interactive": interactive});
        if let Some(cluster) = &self.cluster {
            use base64::Engine;
            let mut described = json!({
                "server": cluster.server,
                "certificate-authority-data":
                    base64::engine::general_purpose::STANDARD.encode(&cluster.certificate_authority),
            });
            if let Some(config) = &cluster.config {
                described["config"] = config.clone();
            }
            spec["cluster"] = described;
        }
        json!({"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec})
    }

    /// Runs the plugin once and reads its answer.
    async fn run(&self) -> Result<Cached> {
        let terminal = std::io::stdin().is_terminal();
        let interactive = match self.interactive_mode {
            ExecInteractiveMode::Never => false,
            ExecInteractiveMode::IfAvailable => terminal,
            ExecInteractiveMode::Always if terminal => true,
            ExecInteractiveMode::Always => {
                return Err(self.error("interactiveMode Always needs a terminal".to_owned()));
            }
        };
        let output = tokio::process::Command::new(&self.command)
            .args(&self.args)
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .env(&self.info_variable, self.request(interactive).to_string())
            .stdin(if interactive {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|e| self.error(format!("cannot run: {e}")))?;
        if !output.status.success() {
            return Err(self.error(format!("exited with {}", output.status)));
        }
        let answer: Value = serde_json::from_slice(&output.stdout)
            .map_err(|_| self.error("did not print an ExecCredential in JSON".to_owned()))?;
        if answer["apiVersion"] != self.api_version.as_str() || answer["kind"] != "ExecCredential" {
            return Err(self.error(format!(
                "answered {} {}, not ExecCredential {}",
                answer["apiVersion"], answer["kind"], self.api_version
            )));
        }
        let status = &answer["status"];
        let text = |field: &str| status[field].as_str().filter(|s| !s.is_empty());
        let credential = match (
            text("token"),
            text("clientCertificateData"),
            text("clientKeyData"),
        ) {
            (Some(token), None, None) => Credential::Token(token.to_owned()),
            (None, Some(cert), Some(key)) => Credential::Certificate(ClientCert {
                cert_pem: cert.to_owned(),
                key_pem: key.to_owned(),
            }),
            _ => {
                return Err(self.error(
                    "status needs a token, or clientCertificateData with clientKeyData".to_owned(),
                ));
            }
        };
        let expires = match text("expirationTimestamp") {
            Some(at) => Some(
                DateTime::parse_from_rfc3339(at)
                    .map_err(|e| self.error(format!("expirationTimestamp: {e}")))?
                    .with_timezone(&Utc),
            ),
            None => None,
        };
        Ok(Cached {
            credential,
            expires,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(api_version: &str, mode: Option<ExecInteractiveMode>, command: &str) -> ExecConfig {
        ExecConfig {
            api_version: Some(api_version.to_owned()),
            command: Some(command.to_owned()),
            args: None,
            env: None,
            drop_env: None,
            install_hint: None,
            interactive_mode: mode,
            provide_cluster_info: false,
            cluster: None,
            other: Default::default(),
        }
    }

    fn plugin(exec: &ExecConfig) -> Result<ExecPlugin> {
        ExecPlugin::new(exec, Path::new("/etc/kube"), ClusterInfo::default())
    }

    // R-ACC-073, R-ACC-074: apiVersion v1 or v1beta1 of the flavor's group; interactiveMode
    // is required in v1 and defaults to IfAvailable in v1beta1; a command with a directory
    // resolves against the kubeconfig's directory, a bare name stays for PATH.
    #[test]
    fn exec_settings_are_checked_as_the_document_says() {
        let v1 = "client.authentication.k8s.io/v1";
        let beta = "client.authentication.platform.io/v1beta1";
        assert!(plugin(&exec(v1, None, "p")).is_err());
        let never = plugin(&exec(v1, Some(ExecInteractiveMode::Never), "./bin/p")).expect("v1");
        assert_eq!(never.command, PathBuf::from("/etc/kube/./bin/p"));
        assert_eq!(never.info_variable, "KUBERNETES_EXEC_INFO");
        let default = plugin(&exec(beta, None, "p")).expect("v1beta1");
        assert_eq!(default.interactive_mode, ExecInteractiveMode::IfAvailable);
        assert_eq!(default.command, PathBuf::from("p"));
        assert_eq!(default.info_variable, "PLATFORM_EXEC_INFO");
        assert!(plugin(&exec("client.authentication.k8s.io/v2", None, "p")).is_err());
        assert!(plugin(&exec(v1, Some(ExecInteractiveMode::Never), "")).is_err());
    }

    // R-ACC-074: Always needs a terminal; the harness runs without one.
    #[tokio::test]
    async fn always_interactive_fails_without_a_terminal() {
        if std::io::stdin().is_terminal() {
            return;
        }
        let always = exec(
            "client.authentication.k8s.io/v1",
            Some(ExecInteractiveMode::Always),
            "/bin/true",
        );
        let error = plugin(&always)
            .expect("valid")
            .credential()
            .await
            .expect_err("refused");
        assert!(error.to_string().contains("/bin/true"), "{error}");
    }

    // R-ACC-076, R-ACC-077: an answer with neither a token nor a certificate pair is an error
    // that names the plugin, never the credential; a token is cached until forgotten.
    #[tokio::test]
    async fn answers_are_checked_and_cached_until_forgotten() {
        let dir = tempfile::tempdir().expect("dir");
        let script = |name: &str, status: &str| {
            let path = dir.path().join(name);
            let body = format!(
                "#!/bin/sh\necho run >> \"{}.runs\"\nprintf '%s' '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{status}}}'\n",
                path.display()
            );
            std::fs::write(&path, body).expect("script");
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .expect("mode");
            path
        };
        let v1 = "client.authentication.k8s.io/v1";
        let half = script("half", r#"{"clientCertificateData":"secret-cert"}"#);
        let half = exec(
            v1,
            Some(ExecInteractiveMode::Never),
            half.to_str().expect("path"),
        );
        let error = plugin(&half)
            .expect("valid")
            .credential()
            .await
            .expect_err("refused");
        assert!(!error.to_string().contains("secret-cert"), "{error}");
        assert!(error.to_string().contains("half"), "{error}");

        let token = script(
            "token",
            r#"{"token":"t-1","expirationTimestamp":"2999-01-01T00:00:00Z"}"#,
        );
        let config = exec(
            v1,
            Some(ExecInteractiveMode::Never),
            token.to_str().expect("path"),
        );
        let plugin = plugin(&config).expect("valid");
        let runs = || {
            std::fs::read_to_string(dir.path().join("token.runs")).map_or(0, |r| r.lines().count())
        };
        assert_eq!(
            plugin.credential().await.expect("token"),
            Credential::Token("t-1".to_owned())
        );
        plugin.credential().await.expect("cached");
        assert_eq!(runs(), 1);
        plugin.forget();
        plugin.credential().await.expect("again");
        assert_eq!(runs(), 2);
    }
}

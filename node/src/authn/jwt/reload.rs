//! Re-reading `--authentication-config` while the replica runs: the file's contents are
//! polled; a changed file that is valid replaces the JWT authenticators at once, a bad one
//! keeps the configuration in force and is logged. Every attempt is counted in
//! `apiserver_authentication_config_controller_automatic_reloads_total` and stamped in
//! `apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds`.

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::time::Duration;
use std::time::SystemTime;

use apiary_api::auth::jwt::AuthenticationConfiguration;
use apiary_api::auth::jwt::JwtAuthenticators;
use apiary_api::metrics::Descriptor;
use apiary_api::metrics::Metrics;
use apiary_api::metrics::Stability;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use sha2::Digest;
use sha2::Sha256;
use tokio_util::sync::CancellationToken;

use super::JwtConfig;
use super::JwtConfigError;

/// How often the file's contents are compared with those in force.
const POLL_INTERVAL: Duration = Duration::from_secs(2);

const RELOADS: Descriptor = Descriptor {
    name: "apiserver_authentication_config_controller_automatic_reloads",
    help: "Total number of automatic reloads of authentication configuration split by status and apiserver identity.",
    stability: Stability::Alpha,
    deprecated_since: None,
};
const LAST_RELOAD: Descriptor = Descriptor {
    name: "apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds",
    help: "Timestamp of the last automatic reload of authentication configuration split by status and apiserver identity.",
    stability: Stability::Alpha,
    deprecated_since: None,
};

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReloadLabels {
    status: &'static str,
    apiserver_id_hash: String,
}

/// The reload metrics of one replica.
#[derive(Clone)]
pub struct ReloadMetrics {
    reloads: Family<ReloadLabels, Counter>,
    last: Family<ReloadLabels, Gauge<f64, AtomicU64>>,
    id_hash: String,
}

impl ReloadMetrics {
    /// Registers the reload metrics of `replica` in `metrics`.
    pub fn register(metrics: &Metrics, replica: &str) -> Self {
        Self::register_as(metrics, replica, &RELOADS, &LAST_RELOAD)
    }

    /// Registers reload metrics of `replica` in `metrics` under the names of `reloads` (the
    /// counter) and `last` (the timestamp), for another configuration file's reloads.
    pub fn register_as(
        metrics: &Metrics,
        replica: &str,
        reloads: &Descriptor,
        last: &Descriptor,
    ) -> Self {
        let this = Self {
            reloads: Family::default(),
            last: Family::default(),
            id_hash: format!("sha256:{:x}", Sha256::digest(replica.as_bytes())),
        };
        metrics.register(reloads, this.reloads.clone());
        metrics.register(last, this.last.clone());
        this
    }

    /// Counts one reload attempt, a `success` or not, and stamps its time.
    pub fn record(&self, success: bool) {
        let labels = ReloadLabels {
            status: if success { "success" } else { "failure" },
            apiserver_id_hash: self.id_hash.clone(),
        };
        self.reloads.get_or_create(&labels).inc();
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.last.get_or_create(&labels).set(now);
    }
}

/// Polls `path` until `stop`; a changed, valid file replaces `authenticators` (built for
/// `api_audiences`); a changed, bad one is logged once and counted as a failure.
pub fn spawn(
    config: JwtConfig,
    path: PathBuf,
    authenticators: JwtAuthenticators,
    api_audiences: Vec<String>,
    metrics: ReloadMetrics,
    stop: CancellationToken,
) {
    tokio::spawn(async move {
        let mut seen = std::fs::read_to_string(&path).ok();
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(POLL_INTERVAL) => {}
            }
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(error) if seen.is_some() => {
                    seen = None;
                    metrics.record(false);
                    tracing::error!(path = %path.display(), %error, "reading the authentication config failed; the previous one stays in force");
                    continue;
                }
                Err(_) => continue,
            };
            if seen.as_deref() == Some(text.as_str()) {
                continue;
            }
            let built = AuthenticationConfiguration::parse(&text, config.flavor)
                .map_err(|e| JwtConfigError::File {
                    path: path.display().to_string(),
                    problem: e.to_string(),
                })
                .and_then(|configuration| config.authenticators(&configuration, &api_audiences));
            seen = Some(text);
            match built {
                Ok(built) => {
                    authenticators.replace(built);
                    metrics.record(true);
                    tracing::info!(path = %path.display(), "reloaded authentication config");
                }
                Err(error) => {
                    metrics.record(false);
                    tracing::error!(path = %path.display(), %error, "the new authentication config is not valid; the previous one stays in force");
                }
            }
        }
    });
}

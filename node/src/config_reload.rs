//! Re-reading a configuration file while the replica runs (`--authentication-config`,
//! `--authorization-config`): the file's contents are compared every [`POLL_INTERVAL`] (so a
//! change is seen within it, and the file is re-read far more often than kube-apiserver's
//! every 60 s); a changed file goes to the caller, which installs it or refuses it, keeping
//! the configuration in force. Every attempt is counted and stamped in the file's
//! [`ReloadMetrics`] and logged.

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::time::Duration;
use std::time::SystemTime;

use apiary_api::metrics::Descriptor;
use apiary_api::metrics::Metrics;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use sha2::Digest;
use sha2::Sha256;
use tokio_util::sync::CancellationToken;

/// How often the file's contents are compared with those in force.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);

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
    /// Registers the reload metrics of `replica` in `metrics` under the names of `reloads`
    /// (the counter, by status and replica) and `last` (the timestamp of the last attempt).
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

/// Polls `path` until `stop`. A changed file's text goes to `install`: `Ok` means it is in
/// force, `Err` (what is wrong) that the previous configuration stays; both are counted in
/// `metrics` and logged as the `kind` configuration (`authentication`, `authorization`). A
/// file that cannot be read counts as one failure until it can be read again.
pub fn watch(
    path: PathBuf,
    kind: &'static str,
    metrics: ReloadMetrics,
    stop: CancellationToken,
    mut install: impl FnMut(&str) -> Result<(), String> + Send + 'static,
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
                    tracing::error!(path = %path.display(), %error, "reading the {kind} config failed; the previous one stays in force");
                    continue;
                }
                Err(_) => continue,
            };
            if seen.as_deref() == Some(text.as_str()) {
                continue;
            }
            let installed = install(&text);
            seen = Some(text);
            match installed {
                Ok(()) => {
                    metrics.record(true);
                    tracing::info!(path = %path.display(), "reloaded {kind} config");
                }
                Err(error) => {
                    metrics.record(false);
                    tracing::error!(path = %path.display(), %error, "the new {kind} config is not valid; the previous one stays in force");
                }
            }
        }
    });
}

//! Re-reading `--authorization-config` while the replica runs (R-ACC-164, R-ACC-165): the
//! file's contents are compared every [`POLL_INTERVAL`] (so a change is seen within it, and
//! the file is re-read far more often than kube-apiserver's every 60 s); a changed file that
//! is valid and keeps the RBAC and Node modes replaces the chain at once, anything else keeps
//! the chain in force and is logged. Every attempt is counted in
//! `apiserver_authorization_config_controller_automatic_reloads_total` and stamped in
//! `..._automatic_reload_last_timestamp_seconds`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use apiary_api::Flavor;
use tokio_util::sync::CancellationToken;

use super::chain::Builder;
use super::chain::ModeChain;
use super::file;
use crate::authn::jwt::reload::ReloadMetrics;

/// How often the file's contents are compared with those in force.
const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// Polls `path` until `stop`; a changed file that `builder` accepts replaces `chain`'s modes.
pub fn spawn(
    path: PathBuf,
    flavor: Flavor,
    builder: Builder,
    chain: Arc<ModeChain>,
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
                    tracing::error!(path = %path.display(), %error, "reading the authorization config failed; the previous one stays in force");
                    continue;
                }
                Err(_) => continue,
            };
            if seen.as_deref() == Some(text.as_str()) {
                continue;
            }
            let reloaded = file::parse(&text, flavor)
                .map_err(|errors| errors.join(", "))
                .and_then(|modes| builder.reload(&chain, &modes));
            seen = Some(text);
            match reloaded {
                Ok(()) => {
                    metrics.record(true);
                    tracing::info!(path = %path.display(), modes = ?chain.names(), "reloaded authorization config");
                }
                Err(error) => {
                    metrics.record(false);
                    tracing::error!(path = %path.display(), %error, "the new authorization config is not valid; the previous one stays in force");
                }
            }
        }
    });
}

//! Re-reading `--authorization-config` while the replica runs (R-ACC-164, R-ACC-165): a
//! changed file that is valid and keeps the RBAC and Node modes replaces the chain at once,
//! anything else keeps the chain in force ([`crate::config_reload`]). Every attempt is counted
//! in `apiserver_authorization_config_controller_automatic_reloads_total` and stamped in
//! `..._automatic_reload_last_timestamp_seconds`.

use std::path::PathBuf;
use std::sync::Arc;

use apiary_api::Flavor;
use tokio_util::sync::CancellationToken;

use super::chain::Builder;
use super::chain::ModeChain;
use super::file;
use crate::config_reload;
use crate::config_reload::ReloadMetrics;

/// Polls `path` until `stop`; a changed file that `builder` accepts replaces `chain`'s modes.
pub fn spawn(
    path: PathBuf,
    flavor: Flavor,
    builder: Builder,
    chain: Arc<ModeChain>,
    metrics: ReloadMetrics,
    stop: CancellationToken,
) {
    config_reload::watch(path, "authorization", metrics, stop, move |text| {
        let modes = file::parse(text, flavor).map_err(|errors| errors.join(", "))?;
        builder.reload(&chain, &modes)?;
        tracing::info!(modes = ?chain.names(), "authorization modes in force");
        Ok(())
    });
}

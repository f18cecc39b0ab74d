//! Re-reading `--authentication-config` while the replica runs: a changed file that is valid
//! replaces the JWT authenticators at once, a bad one keeps the configuration in force
//! ([`crate::config_reload`]). Every attempt is counted in
//! `apiserver_authentication_config_controller_automatic_reloads_total` and stamped in
//! `apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds`.

use std::path::PathBuf;

use apiary_api::auth::jwt::AuthenticationConfiguration;
use apiary_api::auth::jwt::JwtAuthenticators;
use apiary_api::metrics::Descriptor;
use apiary_api::metrics::Metrics;
use apiary_api::metrics::Stability;
use tokio_util::sync::CancellationToken;

use super::JwtConfig;
use super::JwtConfigError;
use crate::config_reload;
use crate::config_reload::ReloadMetrics;

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

/// Registers the authentication configuration's reload metrics of `replica` in `metrics`.
pub fn register_metrics(metrics: &Metrics, replica: &str) -> ReloadMetrics {
    ReloadMetrics::register_as(metrics, replica, &RELOADS, &LAST_RELOAD)
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
    let shown = path.display().to_string();
    config_reload::watch(path, "authentication", metrics, stop, move |text| {
        let configuration =
            (AuthenticationConfiguration::parse(text, config.flavor)).map_err(|e| {
                JwtConfigError::File {
                    path: shown.clone(),
                    problem: e.to_string(),
                }
            });
        let built = configuration
            .and_then(|configuration| config.authenticators(&configuration, &api_audiences));
        let built = built.map_err(|e| e.to_string())?;
        authenticators.replace(built);
        Ok(())
    });
}

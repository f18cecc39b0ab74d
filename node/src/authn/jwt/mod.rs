//! JWT (OpenID Connect) authentication of a replica: the `--oidc-*` flags and
//! `--authentication-config` ([`JwtArgs`]), checked at start-up into a [`JwtConfig`]
//! (Kubernetes' rules, the flags turned into the same configuration the file holds), the
//! issuers' keys fetched over HTTPS ([`keys`]) and the file re-read on change ([`reload`]).

mod args;
pub mod keys;
pub mod reload;

use std::path::PathBuf;
use std::sync::Arc;

use apiary_api::auth::jwt::AnonymousSettings;
use apiary_api::auth::jwt::AuthenticationConfiguration;
use apiary_api::auth::jwt::JwtAuthenticator;
use apiary_api::auth::jwt::JwtAuthenticators;
use apiary_api::flavor::Flavor;
use apiary_api::metrics::Metrics;
use jsonwebtoken::Algorithm;
use tokio_util::sync::CancellationToken;

pub use self::args::JwtArgs;
use self::keys::IssuerKeys;

/// Why the JWT authentication flags or file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtConfigError {
    /// The flags are contradictory or malformed (Kubernetes' wording).
    #[error("{0}")]
    Flags(String),
    /// The configuration file cannot be read or decoded.
    #[error("--authentication-config {path}: {problem}")]
    File {
        /// The file.
        path: String,
        /// What is wrong.
        problem: String,
    },
    /// The configuration breaks its rules; every problem, with its field path.
    #[error("invalid authentication configuration: {}", .0.join(", "))]
    Invalid(Vec<String>),
}

/// The JWT authentication a replica starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtConfig {
    /// The configuration in force at start (from the flags or the file).
    pub configuration: AuthenticationConfiguration,
    /// The signing algorithms tokens may use.
    pub algorithms: Vec<Algorithm>,
    /// The file to re-read on change (`--authentication-config`); `None` for the flags.
    pub file: Option<PathBuf>,
    /// The issuers no JWT authenticator may claim (`--service-account-issuer`).
    pub disallowed_issuers: Vec<String>,
    /// The naming flavor.
    pub flavor: Flavor,
}

impl JwtConfig {
    /// The anonymous settings of the configuration file, if it has an `anonymous` block
    /// (for the anonymous authenticator's wiring).
    pub fn anonymous(&self) -> Option<AnonymousSettings> {
        self.configuration.anonymous_settings()
    }

    /// Builds the authenticators of `configuration` with this config's algorithms, keys
    /// fetched for each issuer; `api_audiences` are the API's audiences.
    fn authenticators(
        &self,
        configuration: &AuthenticationConfiguration,
        api_audiences: &[String],
    ) -> Result<Vec<JwtAuthenticator>, JwtConfigError> {
        let compiled = configuration
            .validate(&self.disallowed_issuers, self.flavor)
            .map_err(|errors| {
                JwtConfigError::Invalid(errors.iter().map(ToString::to_string).collect())
            })?;
        compiled
            .into_iter()
            .map(|settings| {
                let keys = IssuerKeys::new(&settings.issuer).map_err(|problem| {
                    JwtConfigError::Invalid(vec![format!(
                        "issuer {}: {problem}",
                        settings.issuer.url
                    )])
                })?;
                Ok(JwtAuthenticator::new(
                    settings,
                    self.algorithms.clone(),
                    Arc::new(keys),
                    api_audiences.to_vec(),
                ))
            })
            .collect()
    }

    /// Starts JWT authentication: the authenticators in force, with `metrics` recording the
    /// reloads of the file (re-read until `stop`) when there is one.
    pub fn start(
        &self,
        api_audiences: &[String],
        metrics: &Metrics,
        replica: &str,
        stop: CancellationToken,
    ) -> Result<JwtAuthenticators, JwtConfigError> {
        let authenticators =
            JwtAuthenticators::new(self.authenticators(&self.configuration, api_audiences)?);
        if let Some(path) = &self.file {
            reload::spawn(
                self.clone(),
                path.clone(),
                authenticators.clone(),
                api_audiences.to_vec(),
                reload::register_metrics(metrics, replica),
                stop,
            );
        }
        Ok(authenticators)
    }
}

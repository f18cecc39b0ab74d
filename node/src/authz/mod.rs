//! The authorization modes of a replica (spec 001 "Authorization", R-ACC-159..168): either
//! `--authorization-mode` (a comma list of `AlwaysAllow`, `AlwaysDeny`, `ABAC`, `RBAC`,
//! `Node`, `Webhook`, consulted in that order; `Node,RBAC` by default, as kubeadm sets it)
//! with `--authorization-policy-file` and `--authorization-webhook-*`, or the
//! `--authorization-config` file ([`file`], re-read as it changes: [`reload`]); never both.
//! [`AuthzArgs`] are checked as kube-apiserver checks them into [`AuthorizationSettings`],
//! which [`AuthorizationSettings::start`] turns into the one [`ModeChain`] the API consults
//! after `system:masters` and the always-on authorizers.

pub mod chain;
pub mod file;
pub mod metrics;
pub mod reload;
pub mod webhook;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use apiary_api::Flavor;
use apiary_api::metrics::Metrics;
use apiary_api::storage::Storage;
use clap::Args;
use tokio_util::sync::CancellationToken;

use self::chain::BuildParts;
use self::chain::Builder;
pub use self::chain::ModeChain;
use self::metrics::AuthzMetrics;
use self::webhook::FailurePolicy;
use self::webhook::SarVersion;
use crate::dev::path_flags;
use crate::duration::format_duration;
use crate::duration::parse_duration;

/// The webhook's timeout when configured by the flags (kube-apiserver's).
const FLAG_WEBHOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// `--authorization-webhook-cache-authorized-ttl` by default.
const DEFAULT_AUTHORIZED_TTL: Duration = Duration::from_secs(300);

/// `--authorization-webhook-cache-unauthorized-ttl` by default.
const DEFAULT_UNAUTHORIZED_TTL: Duration = Duration::from_secs(30);

/// The type of an authorization mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ModeType {
    /// `ABAC`: the policy file.
    Abac,
    /// `AlwaysAllow`: every request is allowed.
    AlwaysAllow,
    /// `AlwaysDeny`: every request is denied.
    AlwaysDeny,
    /// `Node`: node agents.
    Node,
    /// `RBAC`: roles and bindings.
    Rbac,
    /// `Webhook`: a remote authorizer.
    Webhook,
}

impl ModeType {
    /// Every type, in the order Kubernetes lists the supported values.
    pub const ALL: [Self; 6] = [
        Self::Abac,
        Self::AlwaysAllow,
        Self::AlwaysDeny,
        Self::Node,
        Self::Rbac,
        Self::Webhook,
    ];

    /// The type's name as written in flags and files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Abac => "ABAC",
            Self::AlwaysAllow => "AlwaysAllow",
            Self::AlwaysDeny => "AlwaysDeny",
            Self::Node => "Node",
            Self::Rbac => "RBAC",
            Self::Webhook => "Webhook",
        }
    }

    /// The type named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// One configured mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// A mode without settings of its own here (RBAC, Node, ABAC, AlwaysAllow, AlwaysDeny).
    Fixed(ModeType),
    /// A webhook.
    Webhook(WebhookMode),
}

/// A webhook's checked settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookMode {
    /// Its name (metrics, logs).
    pub name: String,
    /// The longest one call may take.
    pub timeout: Duration,
    /// How long an allow is kept (zero: not kept).
    pub authorized_ttl: Duration,
    /// How long a deny or no opinion is kept (zero: not kept).
    pub unauthorized_ttl: Duration,
    /// The SubjectAccessReview version sent.
    pub version: SarVersion,
    /// What a failure decides.
    pub failure_policy: FailurePolicy,
    /// The kubeconfig naming the server.
    pub kubeconfig: PathBuf,
    /// CEL expressions over `request` that must all be true for the webhook to be asked.
    pub match_conditions: Vec<String>,
}

/// The authorization flags, shared by `apiary serve` and `apiary dev` (which passes them on).
/// Options are `None` when not given, so giving them beside `--authorization-config` is seen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct AuthzArgs {
    /// Authorization modes, consulted in order, comma separated: AlwaysAllow, AlwaysDeny,
    /// ABAC, RBAC, Node, Webhook [default: Node,RBAC].
    #[arg(long, value_delimiter = ',')]
    pub authorization_mode: Option<Vec<String>>,
    /// The ABAC policy file (one JSON policy per line), for `--authorization-mode=ABAC`.
    #[arg(long)]
    pub authorization_policy_file: Option<PathBuf>,
    /// Kubeconfig naming the authorization webhook server, for `--authorization-mode=Webhook`.
    #[arg(long)]
    pub authorization_webhook_config_file: Option<PathBuf>,
    /// The SubjectAccessReview version sent to the webhook [default: v1beta1].
    #[arg(long, value_parser = ["v1", "v1beta1"])]
    pub authorization_webhook_version: Option<String>,
    /// How long the webhook's allows are kept [default: 5m].
    #[arg(long, value_parser = parse_duration)]
    pub authorization_webhook_cache_authorized_ttl: Option<Duration>,
    /// How long the webhook's denies and no opinions are kept [default: 30s].
    #[arg(long, value_parser = parse_duration)]
    pub authorization_webhook_cache_unauthorized_ttl: Option<Duration>,
    /// An AuthorizationConfiguration file (YAML or JSON), re-read when it changes; instead of
    /// `--authorization-mode` and `--authorization-webhook-*`.
    #[arg(long)]
    pub authorization_config: Option<PathBuf>,
}

impl AuthzArgs {
    /// Whether a flag that `--authorization-config` replaces is given.
    fn legacy_flags_set(&self) -> bool {
        self.authorization_mode.is_some()
            || self.authorization_webhook_config_file.is_some()
            || self.authorization_webhook_version.is_some()
            || self.authorization_webhook_cache_authorized_ttl.is_some()
            || self.authorization_webhook_cache_unauthorized_ttl.is_some()
    }

    /// The flags a dev replica gets for these (paths made absolute).
    pub fn replica_flags(&self) -> Vec<OsString> {
        let mut flags: Vec<OsString> = Vec::new();
        if let Some(modes) = &self.authorization_mode {
            flags.push(format!("--authorization-mode={}", modes.join(",")).into());
        }
        if let Some(version) = &self.authorization_webhook_version {
            flags.push(format!("--authorization-webhook-version={version}").into());
        }
        for (flag, ttl) in [
            (
                "--authorization-webhook-cache-authorized-ttl",
                self.authorization_webhook_cache_authorized_ttl,
            ),
            (
                "--authorization-webhook-cache-unauthorized-ttl",
                self.authorization_webhook_cache_unauthorized_ttl,
            ),
        ] {
            if let Some(ttl) = ttl {
                flags.push(format!("{flag}={}", format_duration(ttl)).into());
            }
        }
        flags.extend(path_flags(&[
            (
                "--authorization-policy-file",
                &self.authorization_policy_file,
            ),
            (
                "--authorization-webhook-config-file",
                &self.authorization_webhook_config_file,
            ),
            ("--authorization-config", &self.authorization_config),
        ]));
        flags
    }
}

/// Why the authorization flags or file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthzError {
    /// The flags are contradictory or malformed (kube-apiserver's wording).
    #[error("{}", .0.join(", "))]
    Flags(Vec<String>),
    /// The configuration file cannot be read or breaks its rules; every problem.
    #[error("--authorization-config {}: {}", path.display(), problems.join(", "))]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong, with field paths.
        problems: Vec<String>,
    },
    /// The ABAC policy file cannot be read or parsed.
    #[error("--authorization-policy-file {}: {problem}", path.display())]
    Policy {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A webhook cannot be set up (its kubeconfig).
    #[error("{0}")]
    Webhook(String),
}

/// The checked authorization configuration of a replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationSettings {
    modes: Vec<Mode>,
    file: Option<PathBuf>,
    policy_file: Option<PathBuf>,
}

impl Default for AuthorizationSettings {
    /// `Node,RBAC`, `apiary serve`'s default.
    fn default() -> Self {
        Self {
            modes: vec![Mode::Fixed(ModeType::Node), Mode::Fixed(ModeType::Rbac)],
            file: None,
            policy_file: None,
        }
    }
}

/// What [`AuthorizationSettings::start`] needs of the replica.
pub struct StartParts<'a> {
    /// The naming flavor.
    pub flavor: Flavor,
    /// The store RBAC and Node follow.
    pub storage: Arc<dyn Storage>,
    /// Whether the Node authorizer limits node agents by selectors.
    pub with_selectors: bool,
    /// Where the authorization metrics are registered.
    pub metrics: &'a Metrics,
    /// The replica's name (the reload metrics' identity).
    pub replica: &'a str,
    /// Ends the re-reading of the configuration file.
    pub stop: CancellationToken,
}

impl AuthorizationSettings {
    /// Checks `args` as kube-apiserver does: the file alone, or known modes each given once
    /// with the files they need and no file without its mode.
    pub fn from_args(args: &AuthzArgs, flavor: Flavor) -> Result<Self, AuthzError> {
        if let Some(path) = &args.authorization_config {
            if args.legacy_flags_set() {
                return Err(AuthzError::Flags(vec![
                    "--authorization-config can not be specified simultaneously with --authorization-mode, --authorization-webhook-*".to_owned(),
                ]));
            }
            let modes = file::load(path, flavor).map_err(|problems| AuthzError::File {
                path: path.clone(),
                problems,
            })?;
            if args.authorization_policy_file.is_none()
                && modes.contains(&Mode::Fixed(ModeType::Abac))
            {
                return Err(AuthzError::Flags(vec![
                    "authorization-mode ABAC's authorization policy file not passed".to_owned(),
                ]));
            }
            return Ok(Self {
                modes,
                file: Some(path.clone()),
                policy_file: args.authorization_policy_file.clone(),
            });
        }
        let names = args
            .authorization_mode
            .clone()
            .unwrap_or_else(|| vec!["Node".to_owned(), "RBAC".to_owned()]);
        let mut errors = Vec::new();
        if names.is_empty() {
            errors.push("at least one authorization-mode must be passed".to_owned());
        }
        let mut modes = Vec::new();
        for name in &names {
            match ModeType::parse(name) {
                None => errors.push(format!("authorization-mode {name:?} is not a valid mode")),
                Some(ModeType::Webhook) => match &args.authorization_webhook_config_file {
                    None => errors.push(
                        "authorization-mode Webhook's authorization config file not passed"
                            .to_owned(),
                    ),
                    Some(path) => modes.push(Mode::Webhook(flag_webhook(args, path))),
                },
                Some(ModeType::Abac) if args.authorization_policy_file.is_none() => errors.push(
                    "authorization-mode ABAC's authorization policy file not passed".to_owned(),
                ),
                Some(kind) => modes.push(Mode::Fixed(kind)),
            }
        }
        let distinct: BTreeSet<&String> = names.iter().collect();
        if args.authorization_policy_file.is_some() && !names.iter().any(|n| n == "ABAC") {
            errors.push("cannot specify --authorization-policy-file without mode ABAC".to_owned());
        }
        if args.authorization_webhook_config_file.is_some() && !names.iter().any(|n| n == "Webhook")
        {
            errors.push(
                "cannot specify --authorization-webhook-config-file without mode Webhook"
                    .to_owned(),
            );
        }
        if distinct.len() != names.len() {
            errors.push(format!(
                "authorization-mode {names:?} has mode specified more than once"
            ));
        }
        if !errors.is_empty() {
            return Err(AuthzError::Flags(errors));
        }
        Ok(Self {
            modes,
            file: None,
            policy_file: args.authorization_policy_file.clone(),
        })
    }

    /// The modes, in the order they are consulted.
    pub fn modes(&self) -> &[Mode] {
        &self.modes
    }

    /// Whether anonymous requests may be let in: not with `AlwaysAllow`, which would give them
    /// everything (kube-apiserver turns anonymous access off then, R-ACC-146).
    pub fn anonymous_allowed(&self) -> bool {
        !self.modes.contains(&Mode::Fixed(ModeType::AlwaysAllow))
    }

    /// Builds the chain of the modes (RBAC and Node follow `parts.storage` from now on) and,
    /// for a configuration file, starts re-reading it until `parts.stop`.
    pub fn start(&self, parts: StartParts<'_>) -> Result<Arc<ModeChain>, AuthzError> {
        let metrics = AuthzMetrics::register(parts.metrics, parts.replica);
        let reloads = metrics.reloads.clone();
        let builder = Builder::new(
            BuildParts {
                flavor: parts.flavor,
                storage: parts.storage,
                with_selectors: parts.with_selectors,
                policy_file: self.policy_file.clone(),
                metrics,
            },
            &self.modes,
        )?;
        let chain = builder.start(&self.modes).map_err(AuthzError::Webhook)?;
        if let Some(path) = &self.file {
            reload::spawn(
                path.clone(),
                parts.flavor,
                builder,
                chain.clone(),
                reloads,
                parts.stop,
            );
        }
        Ok(chain)
    }
}

/// The webhook `--authorization-webhook-*` describe, as kube-apiserver makes it of the flags:
/// named `webhook`, a 30 s timeout, no opinion on failures, no match conditions.
fn flag_webhook(args: &AuthzArgs, kubeconfig: &std::path::Path) -> WebhookMode {
    WebhookMode {
        name: "webhook".to_owned(),
        timeout: FLAG_WEBHOOK_TIMEOUT,
        authorized_ttl: args
            .authorization_webhook_cache_authorized_ttl
            .unwrap_or(DEFAULT_AUTHORIZED_TTL),
        unauthorized_ttl: args
            .authorization_webhook_cache_unauthorized_ttl
            .unwrap_or(DEFAULT_UNAUTHORIZED_TTL),
        version: args
            .authorization_webhook_version
            .as_deref()
            .and_then(SarVersion::parse)
            .unwrap_or_default(),
        failure_policy: FailurePolicy::NoOpinion,
        kubeconfig: std::path::absolute(kubeconfig).unwrap_or_else(|_| kubeconfig.to_owned()),
        match_conditions: Vec::new(),
    }
}

#[cfg(test)]
#[path = "mod_test.rs"]
mod tests;

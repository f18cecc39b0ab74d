//! The audit flags of `apiary serve` (kube-apiserver's names and defaults), what they resolve
//! to at start-up (the policy read and checked, the log opened, the webhook started), and how
//! `apiary dev` passes them on to its replicas.

pub mod webhook;

use std::ffi::OsString;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use apiary_api::Flavor;
use apiary_api::audit::AuditConfig;
use apiary_api::audit::BatchSettings;
use apiary_api::audit::LogBackend;
use apiary_api::audit::LogFormat;
use apiary_api::audit::Policy;
use apiary_api::audit::PolicyError;
use apiary_api::audit::Rotation;
use apiary_api::audit::TruncateSettings;
use apiary_api::audit::UnknownLogFormat;
use apiary_api::audit::UnknownWebhookMode;
use apiary_api::audit::WebhookBackend;
use apiary_api::audit::WebhookSettings;
use clap::Args;
use clap::Parser;

use crate::duration::format_duration;
use crate::duration::parse_duration;

/// The audit flags, shared by `apiary serve` and `apiary dev` (which passes them on).
#[derive(Debug, Clone, PartialEq, Args)]
pub struct AuditArgs {
    /// The audit policy (YAML or JSON `audit.<domain>/v1` Policy); without it nothing is
    /// audited.
    #[arg(long)]
    pub audit_policy_file: Option<PathBuf>,
    /// Where the log backend writes events, `-` for standard output; without it no log
    /// backend. `apiary dev` puts a relative path in each replica's directory.
    #[arg(long)]
    pub audit_log_path: Option<PathBuf>,
    /// `json` (one Event per line) or `legacy` (one text line per event).
    #[arg(long, default_value = "json")]
    pub audit_log_format: String,
    /// Days a rotated audit log is kept; 0 keeps them regardless of age.
    #[arg(long, default_value_t = 0)]
    pub audit_log_maxage: u64,
    /// Rotated audit logs kept; 0 keeps all.
    #[arg(long, default_value_t = 0)]
    pub audit_log_maxbackup: usize,
    /// Megabytes an audit log reaches before it rotates; 0 means 100.
    #[arg(long, default_value_t = 0)]
    pub audit_log_maxsize: u64,
    /// A kubeconfig naming the audit webhook server, its CA and the client certificate.
    #[arg(long)]
    pub audit_webhook_config_file: Option<PathBuf>,
    /// `batch` (buffered, never blocks a request), `blocking` or `blocking-strict` (a failed
    /// RequestReceived post fails the request).
    #[arg(long, default_value = "batch")]
    pub audit_webhook_mode: String,
    /// Events buffered before new ones are dropped (batch mode).
    #[arg(long, default_value_t = 10_000)]
    pub audit_webhook_batch_buffer_size: usize,
    /// The most events in one batch.
    #[arg(long, default_value_t = 400)]
    pub audit_webhook_batch_max_size: usize,
    /// How long a batch waits to fill before it is sent.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub audit_webhook_batch_max_wait: Duration,
    /// Whether batches are sent at a limited rate.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub audit_webhook_batch_throttle_enable: bool,
    /// Batches per second when throttled.
    #[arg(long, default_value_t = 10.0)]
    pub audit_webhook_batch_throttle_qps: f64,
    /// Batches sent at once when throttled, after a quiet time.
    #[arg(long, default_value_t = 15)]
    pub audit_webhook_batch_throttle_burst: u32,
    /// The wait before the first retry of a failed post (it grows by half each time).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub audit_webhook_initial_backoff: Duration,
    /// Whether events and batches are fitted to the size limits below.
    #[arg(long, default_value_t = false, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub audit_webhook_truncate_enabled: bool,
    /// The most bytes of one post.
    #[arg(long, default_value_t = 10 * 1024 * 1024)]
    pub audit_webhook_truncate_max_batch_size: usize,
    /// The most bytes of one event: a larger one loses its objects, then is dropped.
    #[arg(long, default_value_t = 100 * 1024)]
    pub audit_webhook_truncate_max_event_size: usize,
}

/// The flags as `apiary serve` has them when none is given (nothing audited).
impl Default for AuditArgs {
    fn default() -> Self {
        #[derive(clap::Parser)]
        struct Only {
            #[command(flatten)]
            audit: AuditArgs,
        }
        Only::parse_from(["apiary"]).audit
    }
}

/// Audit flags that cannot be used; start-up stops.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuditError {
    /// The policy file cannot be read.
    #[error("cannot read --audit-policy-file {path}: {problem}")]
    ReadPolicy {
        /// The file.
        path: PathBuf,
        /// Why.
        problem: String,
    },
    /// The policy does not parse or is invalid.
    #[error("--audit-policy-file {path}")]
    Policy {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: PolicyError,
    },
    /// An unknown `--audit-log-format`.
    #[error("--audit-log-format")]
    LogFormat(#[source] UnknownLogFormat),
    /// An unknown `--audit-webhook-mode`.
    #[error("--audit-webhook-mode")]
    WebhookMode(#[source] UnknownWebhookMode),
    /// A count or size that must be positive is zero.
    #[error("--{flag} must be more than zero")]
    NotPositive {
        /// The flag.
        flag: &'static str,
    },
    /// The log file cannot be opened.
    #[error("cannot open --audit-log-path {path}: {problem}")]
    OpenLog {
        /// The file.
        path: PathBuf,
        /// Why.
        problem: String,
    },
    /// `--audit-webhook-batch-throttle-qps` is not a positive number.
    #[error("--audit-webhook-batch-throttle-qps must be a positive number, not {0}")]
    ThrottleQps(String),
    /// The webhook kubeconfig is unusable.
    #[error("--audit-webhook-config-file {path}: {problem}")]
    WebhookConfig {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
}

/// The checked audit flags (`ServeConfig::audit`); the default audits nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditSettings {
    policy: Option<Arc<Policy>>,
    log: Option<(PathBuf, Rotation, LogFormat)>,
    webhook: Option<(PathBuf, WebhookSettings)>,
}

/// Every number in it is finite (the throttle rate is checked), so equality is total.
impl Eq for AuditSettings {}

impl AuditSettings {
    /// Checks `args` and reads the policy for `flavor`'s audit group.
    pub fn from_args(args: &AuditArgs, flavor: Flavor) -> Result<Self, AuditError> {
        let policy = match &args.audit_policy_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| AuditError::ReadPolicy {
                    path: path.clone(),
                    problem: e.to_string(),
                })?;
                let policy = Policy::parse(&text, flavor).map_err(|source| AuditError::Policy {
                    path: path.clone(),
                    source,
                })?;
                Some(Arc::new(policy))
            }
            None => None,
        };
        let format = args
            .audit_log_format
            .parse()
            .map_err(AuditError::LogFormat)?;
        let rotation = Rotation {
            max_bytes: args.audit_log_maxsize.saturating_mul(1024 * 1024),
            max_backups: args.audit_log_maxbackup,
            max_age: (args.audit_log_maxage > 0)
                .then(|| Duration::from_secs(args.audit_log_maxage.saturating_mul(86_400))),
        };
        let mode = args
            .audit_webhook_mode
            .parse()
            .map_err(AuditError::WebhookMode)?;
        for (flag, value) in [
            (
                "audit-webhook-batch-buffer-size",
                args.audit_webhook_batch_buffer_size,
            ),
            (
                "audit-webhook-batch-max-size",
                args.audit_webhook_batch_max_size,
            ),
            (
                "audit-webhook-truncate-max-batch-size",
                args.audit_webhook_truncate_max_batch_size,
            ),
            (
                "audit-webhook-truncate-max-event-size",
                args.audit_webhook_truncate_max_event_size,
            ),
        ] {
            if value == 0 {
                return Err(AuditError::NotPositive { flag });
            }
        }
        let qps = args.audit_webhook_batch_throttle_qps;
        if !(qps.is_finite() && qps > 0.0) {
            return Err(AuditError::ThrottleQps(qps.to_string()));
        }
        let settings = WebhookSettings {
            mode,
            batch: BatchSettings {
                buffer_size: args.audit_webhook_batch_buffer_size,
                max_size: args.audit_webhook_batch_max_size,
                max_wait: args.audit_webhook_batch_max_wait,
                throttle: args.audit_webhook_batch_throttle_enable.then_some((
                    args.audit_webhook_batch_throttle_qps,
                    args.audit_webhook_batch_throttle_burst,
                )),
            },
            truncate: args
                .audit_webhook_truncate_enabled
                .then_some(TruncateSettings {
                    max_event_bytes: args.audit_webhook_truncate_max_event_size,
                    max_batch_bytes: args.audit_webhook_truncate_max_batch_size,
                }),
            initial_backoff: args.audit_webhook_initial_backoff,
        };
        Ok(Self {
            policy,
            log: args
                .audit_log_path
                .clone()
                .map(|path| (path, rotation, format)),
            webhook: args
                .audit_webhook_config_file
                .clone()
                .map(|path| (path, settings)),
        })
    }

    /// Opens the log and starts the webhook's sender on the current (the API's) runtime.
    pub fn start(&self, flavor: Flavor) -> Result<AuditConfig, AuditError> {
        let mut config = AuditConfig {
            policy: self.policy.clone(),
            backends: Vec::new(),
        };
        if let Some((path, rotation, format)) = &self.log {
            let backend = if path.as_os_str() == "-" {
                LogBackend::stdout(*format)
            } else {
                LogBackend::file(path, *rotation, *format).map_err(|e| AuditError::OpenLog {
                    path: path.clone(),
                    problem: e.to_string(),
                })?
            };
            config.backends.push(Arc::new(backend));
        }
        if let Some((path, settings)) = &self.webhook {
            let transport = webhook::TlsWebhook::from_kubeconfig(path).map_err(|problem| {
                AuditError::WebhookConfig {
                    path: path.clone(),
                    problem,
                }
            })?;
            let backend = WebhookBackend::new(Arc::new(transport), *settings, flavor);
            config.backends.push(Arc::new(backend));
        }
        Ok(config)
    }
}

impl AuditArgs {
    /// The flags a `apiary dev` replica gets: files made absolute, a relative log path put in
    /// the replica's directory `replica_dir`, every other value as given.
    pub fn replica_flags(&self, replica_dir: &Path) -> Vec<OsString> {
        let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        let mut flags: Vec<OsString> = Vec::new();
        let mut path_flag = |flag: &str, path: PathBuf| {
            let mut arg = OsString::from(format!("--{flag}="));
            arg.push(path);
            flags.push(arg);
        };
        if let Some(policy) = &self.audit_policy_file {
            path_flag("audit-policy-file", absolute(policy));
        }
        if let Some(log) = &self.audit_log_path {
            let log = if log.is_relative() && log.as_os_str() != "-" {
                replica_dir.join(log)
            } else {
                log.clone()
            };
            path_flag("audit-log-path", log);
        }
        if let Some(config) = &self.audit_webhook_config_file {
            path_flag("audit-webhook-config-file", absolute(config));
        }
        let values = [
            ("audit-log-format", self.audit_log_format.clone()),
            ("audit-log-maxage", self.audit_log_maxage.to_string()),
            ("audit-log-maxbackup", self.audit_log_maxbackup.to_string()),
            ("audit-log-maxsize", self.audit_log_maxsize.to_string()),
            ("audit-webhook-mode", self.audit_webhook_mode.clone()),
            (
                "audit-webhook-batch-buffer-size",
                self.audit_webhook_batch_buffer_size.to_string(),
            ),
            (
                "audit-webhook-batch-max-size",
                self.audit_webhook_batch_max_size.to_string(),
            ),
            (
                "audit-webhook-batch-max-wait",
                format_duration(self.audit_webhook_batch_max_wait),
            ),
            (
                "audit-webhook-batch-throttle-enable",
                self.audit_webhook_batch_throttle_enable.to_string(),
            ),
            (
                "audit-webhook-batch-throttle-qps",
                self.audit_webhook_batch_throttle_qps.to_string(),
            ),
            (
                "audit-webhook-batch-throttle-burst",
                self.audit_webhook_batch_throttle_burst.to_string(),
            ),
            (
                "audit-webhook-initial-backoff",
                format_duration(self.audit_webhook_initial_backoff),
            ),
            (
                "audit-webhook-truncate-enabled",
                self.audit_webhook_truncate_enabled.to_string(),
            ),
            (
                "audit-webhook-truncate-max-batch-size",
                self.audit_webhook_truncate_max_batch_size.to_string(),
            ),
            (
                "audit-webhook-truncate-max-event-size",
                self.audit_webhook_truncate_max_event_size.to_string(),
            ),
        ];
        flags.extend(
            values
                .into_iter()
                .map(|(flag, value)| OsString::from(format!("--{flag}={value}"))),
        );
        flags
    }
}

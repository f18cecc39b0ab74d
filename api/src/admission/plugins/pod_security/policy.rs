//! The Pod Security Standards' levels and versions, and a namespace's policy (enforce, audit,
//! warn) read from its `pod-security.<domain>/<mode>[-version]` labels over the configured
//! defaults, as pod-security-admission parses them.

use serde_json::Map;
use serde_json::Value;

use crate::validation::FieldError;

/// A standard's level, from the most to the least permissive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// No restriction.
    Privileged,
    /// Prevents known privilege escalations.
    Baseline,
    /// Current pod hardening practice.
    Restricted,
}

/// The message of a level that is none of the three.
pub const LEVEL_ERROR: &str = "must be one of privileged, baseline, restricted";
/// The message of a malformed version.
pub const VERSION_ERROR: &str = "must be \"latest\" or \"v1.x\"";

impl Level {
    /// The level named `value`.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "privileged" => Some(Self::Privileged),
            "baseline" => Some(Self::Baseline),
            "restricted" => Some(Self::Restricted),
            _ => None,
        }
    }

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Privileged => "privileged",
            Self::Baseline => "baseline",
            Self::Restricted => "restricted",
        }
    }
}

/// A standard's version: `latest` or `v1.<minor>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The newest checks.
    Latest,
    /// The checks of Kubernetes 1.<minor>.
    Minor(u32),
}

impl Version {
    /// The version `value` spells (`latest`, or `v1.` and a minor without leading zeros).
    pub fn parse(value: &str) -> Option<Self> {
        if value == "latest" {
            return Some(Self::Latest);
        }
        let minor = value.strip_prefix("v1.")?;
        let canonical = minor == "0" || !minor.starts_with('0');
        match canonical && !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()) {
            true => minor.parse().ok().map(Self::Minor),
            false => None,
        }
    }

    /// Whether checks introduced in 1.`minor` apply at this version.
    pub fn at_least(self, minor: u32) -> bool {
        match self {
            Self::Latest => true,
            Self::Minor(m) => m >= minor,
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Latest => f.write_str("latest"),
            Self::Minor(m) => write!(f, "v1.{m}"),
        }
    }
}

/// A level at a version (`restricted:latest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelVersion {
    /// The level.
    pub level: Level,
    /// The version of its checks.
    pub version: Version,
}

impl LevelVersion {
    /// The most permissive policy: nothing is checked.
    pub const PRIVILEGED: Self = Self {
        level: Level::Privileged,
        version: Version::Latest,
    };
}

impl std::fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.level.as_str(), self.version)
    }
}

/// The three modes of a namespace's policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Pods that violate it are refused.
    pub enforce: LevelVersion,
    /// Violations are recorded in the audit event.
    pub audit: LevelVersion,
    /// Violations are answered as warnings.
    pub warn: LevelVersion,
}

impl Default for Policy {
    /// Everything privileged (Kubernetes' default configuration).
    fn default() -> Self {
        Self {
            enforce: LevelVersion::PRIVILEGED,
            audit: LevelVersion::PRIVILEGED,
            warn: LevelVersion::PRIVILEGED,
        }
    }
}

/// The modes, as the labels and the configuration's `defaults` name them.
pub const MODES: [&str; 3] = ["enforce", "audit", "warn"];

impl Policy {
    /// The mode named `mode` (one of [`MODES`]).
    fn mode_mut(&mut self, mode: &str) -> &mut LevelVersion {
        match mode {
            "enforce" => &mut self.enforce,
            "audit" => &mut self.audit,
            _ => &mut self.warn,
        }
    }

    /// The policy `labels` set over `defaults`, with the errors of malformed labels (each at
    /// `metadata.labels[<label>]`). As Kubernetes does, a malformed level counts as
    /// `restricted` and a malformed version as `latest`.
    pub fn from_labels(
        labels: Option<&Map<String, Value>>,
        prefix: &str,
        defaults: &Self,
    ) -> (Self, Vec<FieldError>) {
        let mut policy = *defaults;
        let mut errors = Vec::new();
        let Some(labels) = labels else {
            return (policy, errors);
        };
        for mode in MODES {
            let target = policy.mode_mut(mode);
            let level_label = format!("{prefix}{mode}");
            if let Some(value) = labels.get(&level_label).and_then(Value::as_str) {
                target.level = Level::parse(value).unwrap_or_else(|| {
                    let field = format!("metadata.labels[{level_label}]");
                    errors.push(FieldError::invalid(field, value, LEVEL_ERROR));
                    Level::Restricted
                });
            }
            let version_label = format!("{prefix}{mode}-version");
            if let Some(value) = labels.get(&version_label).and_then(Value::as_str) {
                target.version = Version::parse(value).unwrap_or_else(|| {
                    let field = format!("metadata.labels[{version_label}]");
                    errors.push(FieldError::invalid(field, value, VERSION_ERROR));
                    Version::Latest
                });
            }
        }
        (policy, errors)
    }
}

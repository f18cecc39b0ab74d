//! Feature gates: the one table of every gate Apiary knows ([`GATES`]), the stage rules of
//! `--feature-gates` (deprecation rules 9 and 10), and the typed lookup handlers read
//! ([`FeatureGates::enabled`]).
//!
//! Stages are those of the release Apiary reports (Kubernetes 1.37) where the specification
//! names a gate with an older stage; CHECKLIST.md's differences table records each such case.

use std::fmt;

use crate::request::parse_bool;

/// A gate that changes what Apiary serves; read through [`FeatureGates::enabled`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// Large get and list responses are gzip-compressed for clients that accept it.
    APIResponseCompression,
    /// A delete may force the removal of an object that cannot be read.
    AllowUnsafeMalformedObjectDeletion,
    /// The node authorizer checks field and label selectors.
    AuthorizeNodeWithSelectors,
    /// Field and label selectors reach the authorizers.
    AuthorizeWithSelectors,
    /// CBOR is served and may be stored.
    CBORServingAndStorage,
    /// Impersonation may be granted per kind of user and per request
    /// (`impersonate:<mode>`, `impersonate-on:<mode>:<verb>`) besides the legacy `impersonate`.
    ConstrainedImpersonation,
    /// A watch may start with a stream of the current state instead of a list.
    WatchList,
    /// A watch that starts with its initial events is gzip-compressed for clients that
    /// accept it.
    WatchListCompression,
}

impl Feature {
    /// How many features there are (the length of [`FeatureGates`]' values).
    const COUNT: usize = 8;

    /// This feature's position among [`FeatureGates`]' values.
    fn index(self) -> usize {
        self as usize
    }
}

/// The maturity of a gate, which decides its default and whether it may be set (rules 9, 10
/// and the stages of the versioning document).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Off by default, may be enabled.
    Alpha,
    /// On by default, may be disabled.
    Beta,
    /// Stable and locked to its default: setting the other value stops start-up.
    Ga,
    /// On its way out: still operational and settable, but setting it warns.
    Deprecated,
    /// Past its deprecation window: no longer operational, setting it stops start-up.
    Removed,
}

impl Stage {
    /// The stage as `--help` shows it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Alpha => "ALPHA",
            Self::Beta => "BETA",
            Self::Ga => "GA",
            Self::Deprecated => "DEPRECATED",
            Self::Removed => "REMOVED",
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// The name set in `--feature-gates`.
    pub name: &'static str,
    /// The feature it turns on; `None` for a removed gate, which turns nothing on any more,
    /// and for the global toggles ([`Gate::toggles`]).
    pub feature: Option<Feature>,
    /// Its stage.
    pub stage: Stage,
    /// Its value when not set (for a GA gate, the value it is locked to).
    pub default: bool,
    /// Whether it changes what is stored or replicated, so every replica of a cluster must
    /// have the same value (the node refuses to start a replica that differs).
    pub cluster_wide: bool,
}

/// The gate that sets every alpha gate not set explicitly (kube-apiserver's global toggle).
pub const ALL_ALPHA: &str = "AllAlpha";

/// The gate that sets every beta gate not set explicitly.
pub const ALL_BETA: &str = "AllBeta";

/// Every gate Apiary knows, in name order (byte-wise, as kube-apiserver lists them). Where a
/// stage comes from (the specification's documents, else kube-apiserver's versioned gate
/// table for the release Apiary reports):
///
/// - `APIResponseCompression`: beta, on (000, "Accept-Encoding: gzip"; beta since 1.16).
/// - `AllowUnsafeMalformedObjectDeletion`: alpha, off (000, forced deletion; alpha since 1.32);
///   cluster-wide: it decides which deletes are replicated.
/// - `AllAlpha`, `AllBeta`: kube-apiserver's global toggles (alpha and beta, off): each sets
///   every gate of its stage that `--feature-gates` does not set explicitly, whatever the order
///   of the entries; GA, deprecated and removed gates are never touched.
/// - `APIListChunking`: removed (GA and locked in 1.29, removed in 1.32); chunked lists are
///   always served.
/// - `AuthorizeNodeWithSelectors`, `AuthorizeWithSelectors`: GA and locked on (GA since 1.34;
///   CHECKLIST.md's differences table: the spec's older alpha/beta wording is not followed).
/// - `CBORServingAndStorage`: alpha, off (000, media types; alpha since 1.32); cluster-wide:
///   it decides the stored encoding.
/// - `ConstrainedImpersonation`: beta, on (001, "Impersonation"; alpha in 1.35, beta and on
///   since 1.36).
/// - `WatchList`: beta, on (beta since 1.32, on by default again since 1.34).
/// - `WatchListCompression`: beta, on (beta and on since 1.37; kube-apiserver's
///   `pkg/features/kube_features.go`).
pub const GATES: &[Gate] = &[
    Gate {
        name: "APIListChunking",
        feature: None,
        stage: Stage::Removed,
        default: true,
        cluster_wide: false,
    },
    Gate {
        name: "APIResponseCompression",
        feature: Some(Feature::APIResponseCompression),
        stage: Stage::Beta,
        default: true,
        cluster_wide: false,
    },
    Gate {
        name: ALL_ALPHA,
        feature: None,
        stage: Stage::Alpha,
        default: false,
        cluster_wide: false,
    },
    Gate {
        name: ALL_BETA,
        feature: None,
        stage: Stage::Beta,
        default: false,
        cluster_wide: false,
    },
    Gate {
        name: "AllowUnsafeMalformedObjectDeletion",
        feature: Some(Feature::AllowUnsafeMalformedObjectDeletion),
        stage: Stage::Alpha,
        default: false,
        cluster_wide: true,
    },
    Gate {
        name: "AuthorizeNodeWithSelectors",
        feature: Some(Feature::AuthorizeNodeWithSelectors),
        stage: Stage::Ga,
        default: true,
        cluster_wide: false,
    },
    Gate {
        name: "AuthorizeWithSelectors",
        feature: Some(Feature::AuthorizeWithSelectors),
        stage: Stage::Ga,
        default: true,
        cluster_wide: false,
    },
    Gate {
        name: "CBORServingAndStorage",
        feature: Some(Feature::CBORServingAndStorage),
        stage: Stage::Alpha,
        default: false,
        cluster_wide: true,
    },
    Gate {
        name: "ConstrainedImpersonation",
        feature: Some(Feature::ConstrainedImpersonation),
        stage: Stage::Beta,
        default: true,
        cluster_wide: false,
    },
    Gate {
        name: "WatchList",
        feature: Some(Feature::WatchList),
        stage: Stage::Beta,
        default: true,
        cluster_wide: false,
    },
    Gate {
        name: "WatchListCompression",
        feature: Some(Feature::WatchListCompression),
        stage: Stage::Beta,
        default: true,
        cluster_wide: false,
    },
];

/// Why `--feature-gates` stops start-up; the wording follows kube-apiserver's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureGateError {
    /// An entry is not `name=value`.
    #[error("malformed pair {pair:?}, expect string=bool")]
    MalformedPair {
        /// The entry.
        pair: String,
    },
    /// The value is not a boolean.
    #[error("invalid value of {name}={value}, expect true or false")]
    InvalidValue {
        /// The gate.
        name: String,
        /// The value given.
        value: String,
    },
    /// No gate has this name.
    #[error("unrecognized feature gate: {name}")]
    Unknown {
        /// The name given.
        name: String,
    },
    /// A GA gate set to the value it is not locked to (R-VER-051).
    #[error("cannot set feature gate {name} to {value}, feature is locked to {locked}")]
    Locked {
        /// The gate.
        name: &'static str,
        /// The value asked for.
        value: bool,
        /// The value it is locked to.
        locked: bool,
    },
    /// The gate is past its deprecation window (R-VER-089).
    #[error("feature gate {name} has been removed and can no longer be set")]
    Removed {
        /// The gate.
        name: &'static str,
    },
}

/// A gate set to an accepted value that still deserves a line in the log (rule 10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateWarning {
    /// The gate.
    pub name: &'static str,
    /// Its stage (GA or deprecated).
    pub stage: Stage,
    /// The value set.
    pub value: bool,
}

impl fmt::Display for GateWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stage = match self.stage {
            Stage::Ga => "GA",
            _ => "deprecated",
        };
        write!(
            f,
            "Setting {stage} feature gate {}={}. It will be removed in a future release.",
            self.name, self.value
        )
    }
}

impl Gate {
    /// The stage whose gates this global toggle sets (`AllAlpha`, `AllBeta`), if it is one.
    pub fn toggles(&self) -> Option<Stage> {
        match self.name {
            ALL_ALPHA => Some(Stage::Alpha),
            ALL_BETA => Some(Stage::Beta),
            _ => None,
        }
    }

    /// Whether `value` may be set on this gate, by its stage: alpha and beta take either
    /// value, a GA gate only the one it is locked to, a deprecated gate either with a warning,
    /// a removed gate none. A GA gate set to its locked value warns too, as it will go away.
    pub fn check(&self, value: bool) -> Result<Option<GateWarning>, FeatureGateError> {
        let warning = GateWarning {
            name: self.name,
            stage: self.stage,
            value,
        };
        match self.stage {
            Stage::Alpha | Stage::Beta => Ok(None),
            Stage::Ga if value == self.default => Ok(Some(warning)),
            Stage::Ga => Err(FeatureGateError::Locked {
                name: self.name,
                value,
                locked: self.default,
            }),
            Stage::Deprecated => Ok(Some(warning)),
            Stage::Removed => Err(FeatureGateError::Removed { name: self.name }),
        }
    }

    /// This gate's line in `--help`: `Name=true|false (STAGE - default=...)`.
    pub fn help_line(&self) -> String {
        match self.stage {
            Stage::Removed => format!("{} (REMOVED - setting it is an error)", self.name),
            Stage::Ga => format!(
                "{}=true|false (GA - default={}, locked)",
                self.name, self.default
            ),
            stage => format!(
                "{}=true|false ({} - default={}{})",
                self.name,
                stage.label(),
                self.default,
                if self.cluster_wide {
                    ", same on every replica"
                } else {
                    ""
                }
            ),
        }
    }
}

/// Which features are on: every gate's default, overridden by `--feature-gates`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureGates {
    enabled: [bool; Feature::COUNT],
}

impl Default for FeatureGates {
    /// Every gate at its default.
    fn default() -> Self {
        let mut enabled = [false; Feature::COUNT];
        for gate in GATES {
            if let Some(feature) = gate.feature {
                enabled[feature.index()] = gate.default;
            }
        }
        Self { enabled }
    }
}

impl FeatureGates {
    /// Whether `feature` is on.
    pub fn enabled(&self, feature: Feature) -> bool {
        self.enabled[feature.index()]
    }

    /// The value of every cluster-wide gate ([`Gate::cluster_wide`]), by name.
    pub fn cluster_wide(&self) -> impl Iterator<Item = (&'static str, bool)> + '_ {
        GATES
            .iter()
            .filter(|g| g.cluster_wide)
            .filter_map(|g| g.feature.map(|feature| (g.name, self.enabled(feature))))
    }

    /// The gates from `--feature-gates` values: each a comma-separated list of `Name=bool`
    /// (whitespace around names and values trimmed, empty entries skipped, booleans spelled as
    /// kube-apiserver accepts them), later entries winning. `AllAlpha` and `AllBeta` set every
    /// alpha or beta gate that no entry names, so an explicit entry wins over them in any
    /// order. Returns the warnings to log.
    pub fn parse<'a>(
        values: impl IntoIterator<Item = &'a str>,
    ) -> Result<(Self, Vec<GateWarning>), FeatureGateError> {
        let mut set: Vec<(&Gate, bool)> = Vec::new();
        let mut warnings = Vec::new();
        for pair in values.into_iter().flat_map(|v| v.split(',')) {
            let pair = pair.trim();
            if pair.is_empty() {
                continue;
            }
            let (name, value) =
                pair.split_once('=')
                    .ok_or_else(|| FeatureGateError::MalformedPair {
                        pair: pair.to_owned(),
                    })?;
            let (name, value) = (name.trim(), value.trim());
            let value = parse_bool(value).ok_or_else(|| FeatureGateError::InvalidValue {
                name: name.to_owned(),
                value: value.to_owned(),
            })?;
            let gate =
                GATES
                    .iter()
                    .find(|g| g.name == name)
                    .ok_or_else(|| FeatureGateError::Unknown {
                        name: name.to_owned(),
                    })?;
            warnings.extend(gate.check(value)?);
            set.push((gate, value));
        }
        let mut gates = Self::default();
        for (toggle, value) in &set {
            let Some(stage) = toggle.toggles() else {
                continue;
            };
            for gate in GATES.iter().filter(|g| g.stage == stage) {
                if let Some(feature) = gate.feature {
                    gates.enabled[feature.index()] = *value;
                }
            }
        }
        for (gate, value) in set {
            if let Some(feature) = gate.feature {
                gates.enabled[feature.index()] = value;
            }
        }
        Ok((gates, warnings))
    }

    /// The help text of `--feature-gates`: one line per gate with its stage and default.
    pub fn help() -> String {
        let mut help = String::from(
            "A set of key=value pairs that describe feature gates for alpha/experimental \
             features, comma separated and repeatable. GA gates are locked to their default; \
             setting a deprecated gate warns. Options are:",
        );
        for gate in GATES {
            help.push('\n');
            help.push_str(&gate.help_line());
        }
        help
    }
}

#[cfg(test)]
#[path = "features_test.rs"]
mod tests;

//! What a metric says about itself, as Kubernetes' component-base describes metrics: its
//! stability level (`[ALPHA]`, `[BETA]`, `[STABLE]` before the help text), the release that
//! deprecated it (`(Deprecated since x.y.z)` after the level, spec 002 rules 11a/11b), and the
//! hiding rule: a metric deprecated before the current minor release is hidden unless
//! `--show-hidden-metrics-for-version` names the previous minor release.

use thiserror::Error;

use crate::discovery::MAJOR as RELEASE_MAJOR;
use crate::discovery::MINOR as RELEASE_MINOR;

/// How stable a metric's name, labels and meaning are (component-base's levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stability {
    /// No guarantee: may change or go in any release.
    Alpha,
    /// Labels may be added, never removed.
    Beta,
    /// Neither name nor labels change during its lifetime.
    Stable,
}

impl Stability {
    /// The level as it prefixes the help text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Alpha => "ALPHA",
            Self::Beta => "BETA",
            Self::Stable => "STABLE",
        }
    }
}

/// A metric's name, help and stability, and the release that deprecated it, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    /// The name as exposed (a counter's without `_total`, which the encoding appends).
    pub name: &'static str,
    /// The help text, without the stability prefix.
    pub help: &'static str,
    /// The stability level.
    pub stability: Stability,
    /// The release that deprecated the metric (`x.y.z`), if it is deprecated.
    pub deprecated_since: Option<&'static str>,
}

impl Descriptor {
    /// The help text as exposed: `[LEVEL] ` first, then `(Deprecated since x.y.z) ` for a
    /// deprecated metric, then the help.
    pub fn exposed_help(&self) -> String {
        match self.deprecated_since {
            Some(since) => format!(
                "[{}] (Deprecated since {since}) {}",
                self.stability.as_str(),
                self.help
            ),
            None => format!("[{}] {}", self.stability.as_str(), self.help),
        }
    }

    /// Whether the metric is hidden: deprecated in a release before the current minor one
    /// (component-base hides a metric once it has been deprecated for more than one release),
    /// and hidden metrics are not shown.
    pub fn is_hidden(&self, exposure: Exposure) -> bool {
        if exposure.show_hidden {
            return false;
        }
        self.deprecated_since
            .and_then(major_minor)
            .is_some_and(|since| since < (RELEASE_MAJOR, RELEASE_MINOR))
    }
}

/// `x.y` or `x.y.z` -> `(x, y)`.
fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Which registered metrics are exposed (`--show-hidden-metrics-for-version`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exposure {
    show_hidden: bool,
}

/// A `--show-hidden-metrics-for-version` value other than the previous minor release.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error(
    "--show-hidden-metrics-for-version must be omitted or have the value '{expected}'. Only the previous minor version is allowed"
)]
pub struct ShowHiddenVersionError {
    /// The only value accepted.
    pub expected: String,
}

impl Exposure {
    /// Hidden metrics stay hidden.
    pub fn new() -> Self {
        Self::default()
    }

    /// From `--show-hidden-metrics-for-version`: empty shows nothing hidden; the previous
    /// minor release (`1.36` while Apiary reports 1.37) shows the metrics hidden in this
    /// release; any other value is refused, as kube-apiserver refuses it.
    pub fn for_show_hidden_version(value: &str) -> Result<Self, ShowHiddenVersionError> {
        if value.is_empty() {
            return Ok(Self::default());
        }
        let expected = format!("{RELEASE_MAJOR}.{}", RELEASE_MINOR.saturating_sub(1));
        let valid = value.split('.').count() == 2
            && major_minor(value) == Some((RELEASE_MAJOR, RELEASE_MINOR.saturating_sub(1)));
        if valid {
            Ok(Self { show_hidden: true })
        } else {
            Err(ShowHiddenVersionError { expected })
        }
    }

    /// Whether hidden metrics are shown.
    pub fn shows_hidden(self) -> bool {
        self.show_hidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn descriptor(
        stability: Stability,
        deprecated_since: Option<&'static str>,
    ) -> Descriptor {
        Descriptor {
            name: "m",
            help: "Things.",
            stability,
            deprecated_since,
        }
    }

    #[test]
    fn help_starts_with_the_stability_level() {
        assert_eq!(
            descriptor(Stability::Stable, None).exposed_help(),
            "[STABLE] Things."
        );
        assert_eq!(
            descriptor(Stability::Alpha, None).exposed_help(),
            "[ALPHA] Things."
        );
        assert_eq!(
            descriptor(Stability::Beta, None).exposed_help(),
            "[BETA] Things."
        );
    }

    // R-VER-090 (with the component-base wording the differences table records)
    #[test]
    fn deprecated_help_names_the_release_after_the_level() {
        assert_eq!(
            descriptor(Stability::Stable, Some("1.34.0")).exposed_help(),
            "[STABLE] (Deprecated since 1.34.0) Things."
        );
    }

    #[test]
    fn deprecated_metrics_hide_after_one_release() {
        let shown = Exposure::new();
        assert!(!descriptor(Stability::Stable, None).is_hidden(shown));
        // Deprecated in the current release: still shown.
        assert!(!descriptor(Stability::Stable, Some("1.37.0")).is_hidden(shown));
        // Deprecated in an earlier release: hidden.
        assert!(descriptor(Stability::Stable, Some("1.36.0")).is_hidden(shown));
        assert!(descriptor(Stability::Alpha, Some("1.34.0")).is_hidden(shown));
    }

    // R-VER-092
    #[test]
    fn the_previous_minor_release_shows_hidden_metrics() {
        let exposure = Exposure::for_show_hidden_version("1.36").unwrap();
        assert!(exposure.shows_hidden());
        assert!(!descriptor(Stability::Stable, Some("1.34.0")).is_hidden(exposure));
        assert_eq!(Exposure::for_show_hidden_version(""), Ok(Exposure::new()));
    }

    #[test]
    fn only_the_previous_minor_release_is_accepted() {
        for value in ["1.37", "1.35", "1.36.0", "2.36", "v1.36", "1", "latest"] {
            let error = Exposure::for_show_hidden_version(value).unwrap_err();
            assert_eq!(error.expected, "1.36", "{value}");
            assert!(error.to_string().contains("'1.36'"), "{error}");
        }
    }
}

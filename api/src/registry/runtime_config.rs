//! `--runtime-config` (R-VER-063..067): which API versions and resources are served beyond
//! (or instead of) the defaults. Parsed once at start-up against the built-in table; pure.
//!
//! Each value is a comma-separated list of `<key>[=<value>]`, the value `true` or `false`
//! (no value: `true`). Keys: `api/all`, `api/ga`, `api/beta`, `api/alpha`;
//! `<group>/<version>` (core: `api/v1` or `v1`); `<group>/<version>/<resource>` (core:
//! `api/v1/<resource>`). Group names are spelled in the flavor's domain. For a row, the most
//! specific key wins: resource, then group/version, then its stage, then `api/all`, then the
//! row's default; among equal keys the last one given wins.

use super::builtin::Row;
use super::builtin::Stage;
use super::builtin::StorageHome;
use super::builtin::rows;
use crate::flavor::Flavor;

/// A `--runtime-config` entry that cannot be used; start-up stops with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeConfigError {
    /// The key names no group/version the server knows.
    #[error("--runtime-config: unknown api group version {0:?}")]
    UnknownGroupVersion(String),
    /// The key names no resource of a known group/version.
    #[error("--runtime-config: unknown api resource {0:?}")]
    UnknownResource(String),
    /// The key enables a version that shares another's storage and has no conversion to
    /// it yet, so it cannot be served.
    #[error(
        "--runtime-config: {0} cannot be enabled: it shares storage with another version and no conversion to it exists"
    )]
    NoConversion(String),
    /// The value is neither `true` nor `false`.
    #[error(
        "--runtime-config: invalid value {value:?} for {key:?} (expected \"true\" or \"false\")"
    )]
    InvalidValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
    },
}

/// What a key selects.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Selector {
    All,
    Stage(Stage),
    GroupVersion {
        group: String,
        version: String,
    },
    Resource {
        group: String,
        version: String,
        resource: String,
    },
}

/// The parsed `--runtime-config`: every entry in the order given (empty: all defaults).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    entries: Vec<(Selector, bool)>,
}

fn selector(key: &str, known: &[(String, &Row)]) -> Result<Selector, RuntimeConfigError> {
    let gv_known = |g: &str, v: &str| known.iter().any(|(group, r)| group == g && r.version == v);
    let parts: Vec<&str> = key.split('/').collect();
    let (group, version, resource) = match parts.as_slice() {
        ["api", "all"] => return Ok(Selector::All),
        ["api", "ga"] => return Ok(Selector::Stage(Stage::Ga)),
        ["api", "beta"] => return Ok(Selector::Stage(Stage::Beta)),
        ["api", "alpha"] => return Ok(Selector::Stage(Stage::Alpha)),
        [version] => ("", *version, None),
        ["api", version] => ("", *version, None),
        ["api", version, resource] => ("", *version, Some(*resource)),
        [group, version] => (*group, *version, None),
        [group, version, resource] => (*group, *version, Some(*resource)),
        _ => return Err(RuntimeConfigError::UnknownGroupVersion(key.to_owned())),
    };
    if !gv_known(group, version) {
        return Err(RuntimeConfigError::UnknownGroupVersion(key.to_owned()));
    }
    let (group, version) = (group.to_owned(), version.to_owned());
    let Some(resource) = resource else {
        return Ok(Selector::GroupVersion { group, version });
    };
    let resource_known = known
        .iter()
        .any(|(g, r)| *g == group && r.version == version && r.plural == resource);
    if !resource_known {
        return Err(RuntimeConfigError::UnknownResource(key.to_owned()));
    }
    Ok(Selector::Resource {
        group,
        version,
        resource: resource.to_owned(),
    })
}

impl RuntimeConfig {
    /// Parses the `--runtime-config` values (each a comma-separated list) for `flavor`.
    pub fn parse<'a>(
        values: impl IntoIterator<Item = &'a str>,
        flavor: Flavor,
    ) -> Result<Self, RuntimeConfigError> {
        let table = rows();
        let known: Vec<(String, &Row)> = table.iter().map(|r| (r.group.name(flavor), r)).collect();
        let mut entries = Vec::new();
        for item in values
            .into_iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|i| !i.is_empty())
        {
            let (key, value) = item.split_once('=').unwrap_or((item, "true"));
            let on = match value {
                "true" | "" => true,
                "false" => false,
                other => {
                    return Err(RuntimeConfigError::InvalidValue {
                        key: key.to_owned(),
                        value: other.to_owned(),
                    });
                }
            };
            entries.push((selector(key, &known)?, on));
        }
        let this = Self { entries };
        // Naming such a row is an error; the broad levels (`api/all`, `api/beta`) enable
        // what can be served.
        if let Some(row) = table.iter().find(|r| {
            matches!(r.storage, StorageHome::Shared(h) if h.conversion.is_none())
                && this.named(r, flavor) == Some(true)
        }) {
            return Err(RuntimeConfigError::NoConversion(format!(
                "{}/{}/{}",
                row.group.name(flavor),
                row.version,
                row.plural
            )));
        }
        Ok(this)
    }

    /// What the last entry whose selector `pick` accepts says, if any (a later entry
    /// overrides an earlier one).
    fn last(&self, pick: impl Fn(&Selector) -> bool) -> Option<bool> {
        self.entries
            .iter()
            .rev()
            .find(|(s, _)| pick(s))
            .map(|(_, on)| *on)
    }

    /// What the most specific entry naming `row`'s resource or group/version says, if any.
    fn named(&self, row: &Row, flavor: Flavor) -> Option<bool> {
        let group = row.group.name(flavor);
        self.last(|s| {
            matches!(s, Selector::Resource { group: g, version: v, resource: r }
                if *g == group && v == row.version && r == row.plural)
        })
        .or_else(|| {
            self.last(|s| {
                matches!(s, Selector::GroupVersion { group: g, version: v }
                    if *g == group && v == row.version)
            })
        })
    }

    /// Whether `row` is enabled in `flavor`: the most specific entry naming it, or its
    /// default.
    pub fn enabled(&self, row: &Row, flavor: Flavor) -> bool {
        self.named(row, flavor)
            .or_else(|| self.last(|s| *s == Selector::Stage(row.stage())))
            .or_else(|| self.last(|s| *s == Selector::All))
            .unwrap_or(row.default_on)
    }
}

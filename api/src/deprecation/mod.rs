//! Deprecation signals of the built-in API versions (spec 002 "Errors" and "Deprecation
//! rules"), as kube-apiserver derives them (`k8s.io/apiserver/pkg/endpoints/deprecation` over
//! the types' generated `APILifecycle*` methods): the [`DeprecationTable`] of every built-in
//! kind deprecated in the release Apiary reports, the `Warning` text of a request to one, and
//! the [`DeprecatedApi`] a request resolves to, which the metric
//! `apiserver_requested_deprecated_apis` and the audit annotations read.
//!
//! The single source is what each type declares ([`lifecycle`]): the release it was
//! introduced in, and explicit overrides. The policy fills in the rest: a prerelease (alpha or
//! beta) kind is deprecated three minor releases after its introduction and removed three
//! after its deprecation, unless it says otherwise; a GA kind is deprecated only where it says
//! so, and never removed.

mod lifecycle;
#[cfg(test)]
mod tests;

use std::fmt;

use k8s_openapi::Resource;

use crate::discovery;
use crate::flavor::Flavor;
use crate::registry::ResourceType;
use crate::registry::builtin::GroupName;
use crate::registry::builtin::Stage;
use crate::registry::subresource_kind;

/// A Kubernetes release, `<major>.<minor>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    /// The major number.
    pub major: u32,
    /// The minor number.
    pub minor: u32,
}

impl Release {
    /// The release whose API Apiary reports (`/version`).
    pub const CURRENT: Self = Self::new(discovery::MAJOR, discovery::MINOR);

    /// `<major>.<minor>`.
    pub const fn new(major: u32, minor: u32) -> Self {
        Self { major, minor }
    }

    /// The release `minors` minor releases later.
    const fn later(self, minors: u32) -> Self {
        Self::new(self.major, self.minor + minors)
    }
}

impl fmt::Display for Release {
    /// `1.37`: the form of the metric label and the audit annotation (the warning text adds
    /// a `v`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// How many minor releases the policy gives a prerelease kind before its deprecation, and
/// again before its removal (rule 4a; `prerelease-lifecycle-gen`'s defaults).
const PRERELEASE_MINORS: u32 = 3;

/// A group/version/kind of the built-in table, its group left to the flavor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TypeName {
    group: GroupName,
    version: &'static str,
    kind: &'static str,
}

impl TypeName {
    fn of<T: Resource>() -> Self {
        Self {
            group: GroupName::of_k8s(T::GROUP),
            version: T::VERSION,
            kind: T::KIND,
        }
    }

    /// `v1` for core, `<group>/<version>` otherwise, as Kubernetes prints a group version.
    fn api_version(self, flavor: Flavor) -> String {
        match self.group {
            GroupName::Core => self.version.to_owned(),
            group => format!("{}/{}", group.name(flavor), self.version),
        }
    }
}

/// What one kind declares: its introduction, and the overrides of the policy.
#[derive(Debug, Clone, Copy)]
struct Declared {
    name: TypeName,
    introduced: Release,
    deprecated: Option<Release>,
    replacement: Option<TypeName>,
}

/// The declaration of `T`, introduced in `introduced`, with no override.
fn declared<T: Resource>(introduced: Release) -> Declared {
    Declared {
        name: TypeName::of::<T>(),
        introduced,
        deprecated: None,
        replacement: None,
    }
}

impl Declared {
    /// Deprecated in `release` instead of the policy's release.
    fn deprecated(mut self, release: Release) -> Self {
        self.deprecated = Some(release);
        self
    }

    /// Replaced by `T` (the warning names it).
    fn replaced_by<T: Resource>(mut self) -> Self {
        self.replacement = Some(TypeName::of::<T>());
        self
    }

    /// The releases the declaration and the policy give: a prerelease kind is deprecated
    /// [`PRERELEASE_MINORS`] after its introduction (or when it says) and removed as many
    /// after its deprecation; a GA kind only when it says, and never removed.
    fn lifecycle(&self) -> (Option<Release>, Option<Release>) {
        if Stage::of(self.name.version) == Stage::Ga {
            return (self.deprecated, None);
        }
        let deprecated = self
            .deprecated
            .unwrap_or(self.introduced.later(PRERELEASE_MINORS));
        (Some(deprecated), Some(deprecated.later(PRERELEASE_MINORS)))
    }
}

/// A kind deprecated in the current release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    /// The release it was deprecated in.
    pub deprecated_in: Release,
    /// The release it is no longer served in, if one is set (never for a GA kind).
    pub removed_in: Option<Release>,
    /// The kind to use instead, as `<apiVersion> <Kind>`, if the type names one.
    pub replacement: Option<String>,
    /// The `Warning` text of a request to it, in kube-apiserver's wording.
    pub warning: String,
}

/// The deprecated built-in kinds of one flavor, by group, version and kind (a few dozen at
/// most: a scan, which allocates nothing on the request path).
#[derive(Debug, Clone)]
pub struct DeprecationTable {
    flavor: Flavor,
    deprecated: Vec<((String, String, String), Deprecation)>,
}

impl DeprecationTable {
    /// The kinds deprecated in the release Apiary reports ([`Release::CURRENT`]).
    pub fn new(flavor: Flavor) -> Self {
        Self::at(flavor, Release::CURRENT)
    }

    /// The kinds deprecated in `current`.
    pub fn at(flavor: Flavor, current: Release) -> Self {
        let mut deprecated = Vec::new();
        for declared in lifecycle::declared_lifecycles() {
            let (Some(deprecated_in), removed_in) = declared.lifecycle() else {
                continue;
            };
            if deprecated_in > current {
                continue;
            }
            let name = declared.name;
            let replacement = declared
                .replacement
                .map(|r| format!("{} {}", r.api_version(flavor), r.kind));
            let mut warning = format!(
                "{} {} is deprecated in v{deprecated_in}+",
                name.api_version(flavor),
                name.kind
            );
            if let Some(removed) = removed_in {
                warning.push_str(&format!(", unavailable in v{removed}+"));
            }
            if let Some(replacement) = &replacement {
                warning.push_str(&format!("; use {replacement}"));
            }
            let key = (
                name.group.name(flavor),
                name.version.to_owned(),
                name.kind.to_owned(),
            );
            let entry = Deprecation {
                deprecated_in,
                removed_in,
                replacement,
                warning,
            };
            deprecated.push((key, entry));
        }
        Self { flavor, deprecated }
    }

    /// The deprecation of the kind `kind` of `group`/`version` (group as the flavor spells
    /// it, empty for core), if it is deprecated.
    pub fn lookup(&self, group: &str, version: &str, kind: &str) -> Option<&Deprecation> {
        self.deprecated
            .iter()
            .find(|((g, v, k), _)| g == group && v == version && k == kind)
            .map(|(_, deprecation)| deprecation)
    }

    /// What a request to `subresource` (empty: the resource itself) of the served type `rt`
    /// resolves to, if its kind is deprecated: the kind is the type's own, or the one a
    /// subresource answers instead (`scale` is `autoscaling/v1` Scale), as kube-apiserver
    /// judges each route by the kind it serves.
    pub fn resolve(
        &self,
        rt: &ResourceType,
        subresource: &str,
    ) -> Option<(&Deprecation, DeprecatedApi)> {
        let deprecation = match subresource_kind(subresource, self.flavor) {
            Some((group, version, kind)) => self.lookup(&group, version, kind),
            None => self.lookup(&rt.group, &rt.version, &rt.kind),
        }?;
        let api = DeprecatedApi {
            group: rt.group.clone(),
            version: rt.version.clone(),
            resource: rt.plural.clone(),
            subresource: subresource.to_owned(),
            removed_release: deprecation.removed_in,
        };
        Some((deprecation, api))
    }
}

/// A request that reached a deprecated version: the labels of
/// `apiserver_requested_deprecated_apis` and the source of the audit annotations. The resource
/// handler puts it into the response's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeprecatedApi {
    /// The group (empty for core).
    pub group: String,
    /// The version.
    pub version: String,
    /// The resource (plural).
    pub resource: String,
    /// The subresource (empty for none).
    pub subresource: String,
    /// The release the version is removed in, if one is set.
    pub removed_release: Option<Release>,
}

impl DeprecatedApi {
    /// The `removed_release` label of the metric: the release, or empty when none is set.
    pub fn removed_release_label(&self) -> String {
        self.removed_release
            .map(|r| r.to_string())
            .unwrap_or_default()
    }

    /// The audit annotations of the request, as kube-apiserver sets them:
    /// `<domain>/deprecated: "true"`, and `<domain>/removed-release: "<major>.<minor>"` when a
    /// removal release is set.
    pub fn audit_annotations(&self, flavor: Flavor) -> Vec<(String, String)> {
        let domain = flavor.group_domain();
        let mut annotations = vec![(format!("{domain}/deprecated"), "true".to_owned())];
        if let Some(removed) = self.removed_release {
            annotations.push((format!("{domain}/removed-release"), removed.to_string()));
        }
        annotations
    }
}

//! The evaluation of a pod against a level of the Pod Security Standards: the baseline
//! checks (baseline.rs), then for `restricted` the restricted ones (restricted.rs), each
//! applying from the version that introduced it, in pod-security-admission's order.

use std::collections::BTreeSet;

use serde_json::Value;

use super::baseline;
use super::policy::Level;
use super::policy::LevelVersion;
use super::policy::Version;
use super::restricted;

/// One failed check: its reason and what in the pod fails it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The check's reason (`privileged`, `runAsNonRoot != true`).
    pub reason: String,
    /// Which fields of which containers (`container "c" must not set ...`).
    pub detail: String,
}

impl Violation {
    pub(super) fn new(reason: impl Into<String>, detail: impl Into<String>) -> Option<Self> {
        Some(Self {
            reason: reason.into(),
            detail: detail.into(),
        })
    }
}

/// What a check sees: the pod's metadata and spec, and the version evaluated.
pub(super) struct Pod<'a> {
    pub metadata: &'a Value,
    pub spec: &'a Value,
    pub version: Version,
}

impl<'a> Pod<'a> {
    /// The containers, init containers first, then the regular and the ephemeral ones.
    pub fn containers(&self) -> impl Iterator<Item = &'a Value> + 'a {
        super::super::pods::containers(self.spec)
    }

    /// The pod's security context (`Null` when unset).
    pub fn security_context(&self) -> &'a Value {
        &self.spec["securityContext"]
    }

    /// Whether the pod declares it runs on Windows.
    pub fn is_windows(&self) -> bool {
        self.spec.pointer("/os/name").and_then(Value::as_str) == Some("windows")
    }

    /// The pod's annotations, as (key, value) pairs.
    pub fn annotations(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.metadata["annotations"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
    }
}

/// A container's name.
pub(super) fn name(container: &Value) -> &str {
    container["name"].as_str().unwrap_or_default()
}

/// `"a", "b"`.
pub(super) fn join_quote<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    items
        .into_iter()
        .map(|s| format!("\"{}\"", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `singular` for one, `plural` otherwise.
pub(super) fn pluralize<'a>(singular: &'a str, plural: &'a str, count: usize) -> &'a str {
    match count {
        1 => singular,
        _ => plural,
    }
}

/// `container "a"` or `containers "a", "b"`.
pub(super) fn containers_phrase(names: &[&str]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

/// Sorted, without duplicates (Go's `sets.String.List()`).
pub(super) fn sorted<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Vec<String> {
    items
        .into_iter()
        .map(Into::into)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// A check: the violation the pod commits, if any.
type Check = fn(&Pod<'_>) -> Option<Violation>;

/// The violations of the pod (`metadata`, `spec`) against `policy`, in Kubernetes' order.
pub fn evaluate(policy: LevelVersion, metadata: &Value, spec: &Value) -> Vec<Violation> {
    let pod = Pod {
        metadata,
        spec,
        version: policy.version,
    };
    let extra: &[Check] = match policy.level {
        Level::Privileged => return Vec::new(),
        Level::Baseline => &[baseline::seccomp_profile],
        Level::Restricted => restricted::CHECKS,
    };
    baseline::CHECKS
        .iter()
        .chain(extra)
        .filter_map(|check| check(&pod))
        .collect()
}

/// `reason (detail), reason (detail)`: the violations as the messages list them.
pub fn describe(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| format!("{} ({})", v.reason, v.detail))
        .collect::<Vec<_>>()
        .join(", ")
}

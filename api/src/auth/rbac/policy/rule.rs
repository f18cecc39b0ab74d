//! The building blocks of the default policy: one RBAC `PolicyRule` and the verb sets the
//! defaults repeat. A rule is written with its API groups spelled neutrally (`"events."` is
//! the events group of the flavor's domain) and rendered to JSON as Kubernetes renders the
//! bootstrap policy: verbs, resources, names and URLs sorted, groups in the order given.

use serde_json::Value;
use serde_json::json;

use crate::flavor::Flavor;

/// Reading: `get`, `list`, `watch`.
pub(super) const READ: &[&str] = &["get", "list", "watch"];

/// Writing without reading: `create`, `update`, `patch`, `delete`, `deletecollection`.
pub(super) const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];

/// Reading and writing.
pub(super) const READ_WRITE: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// Recording events: `create`, `update`, `patch`.
pub(super) const EVENT_WRITE: &[&str] = &["create", "patch", "update"];

/// One rule of a default role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rule {
    verbs: Vec<String>,
    groups: Vec<String>,
    resources: Vec<String>,
    names: Vec<String>,
    urls: Vec<String>,
}

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn sorted(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items.dedup();
    items
}

/// `verbs` on `resources` of `groups` (a group ending in `.` gets the flavor's group domain
/// appended when rendered; `""` is the core group).
pub(super) fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Rule {
    Rule {
        verbs: owned(verbs),
        groups: owned(groups),
        resources: owned(resources),
        names: Vec::new(),
        urls: Vec::new(),
    }
}

/// `verbs` on the non-resource URLs `urls`.
pub(super) fn urls(verbs: &[&str], urls: &[&str]) -> Rule {
    Rule {
        verbs: owned(verbs),
        groups: Vec::new(),
        resources: Vec::new(),
        names: Vec::new(),
        urls: owned(urls),
    }
}

/// The rule every controller has: recording events in the core and events groups.
pub(super) fn events() -> Rule {
    rule(EVENT_WRITE, &["", "events."], &["events"])
}

impl Rule {
    /// The rule restricted to the objects named `names`.
    pub(super) fn names<S: AsRef<str>>(mut self, names: &[S]) -> Self {
        self.names = names.iter().map(|n| n.as_ref().to_owned()).collect();
        self
    }

    /// The rule as a `PolicyRule` of `flavor`.
    pub(super) fn render(&self, flavor: Flavor) -> Value {
        if !self.urls.is_empty() {
            return json!({
                "nonResourceURLs": sorted(self.urls.clone()),
                "verbs": sorted(self.verbs.clone()),
            });
        }
        let groups: Vec<String> = self
            .groups
            .iter()
            .map(|g| match g.strip_suffix('.') {
                Some(prefix) => format!("{prefix}.{}", flavor.group_domain()),
                None => g.clone(),
            })
            .collect();
        let mut rendered = json!({
            "apiGroups": groups,
            "resources": sorted(self.resources.clone()),
            "verbs": sorted(self.verbs.clone()),
        });
        if !self.names.is_empty() {
            rendered["resourceNames"] = json!(sorted(self.names.clone()));
        }
        rendered
    }
}

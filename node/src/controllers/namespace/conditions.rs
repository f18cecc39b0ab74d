//! The namespace controller's progress report: the five deletion conditions of a terminating
//! namespace's `status.conditions`, with Kubernetes' types, reasons and messages (True while
//! failing or waiting, False with the "ok" wording otherwise); `lastTransitionTime` moves only
//! when a condition's status does.

use std::collections::BTreeMap;

use serde_json::Value;
use serde_json::json;

/// The condition types the controller maintains, in Kubernetes' order, with their "ok"
/// reason and message.
const TYPES: [(&str, &str, &str); 5] = [
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        "NamespaceContentRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        "NamespaceFinalizersRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
];

/// What one pass over a namespace's content found.
#[derive(Debug, Default)]
pub struct Progress {
    /// The discovery failure message, if discovery failed for some group versions.
    pub discovery_failure: Option<String>,
    /// The group version parsing failures.
    pub parse_failures: Vec<String>,
    /// The failures to delete the content of a resource type.
    pub content_failures: Vec<String>,
    /// Per resource type (`resource.group`), how many objects remain.
    pub remaining: BTreeMap<String, usize>,
    /// Per finalizer, how many remaining objects it holds.
    pub finalizers: BTreeMap<String, usize>,
}

impl Progress {
    /// The failing conditions: (type, reason, message).
    fn failing(&self) -> Vec<(&'static str, &'static str, String)> {
        let mut failing = Vec::new();
        if let Some(message) = &self.discovery_failure {
            failing.push((TYPES[0].0, "DiscoveryFailed", message.clone()));
        }
        if !self.parse_failures.is_empty() {
            failing.push((
                TYPES[1].0,
                "GroupVersionParsingFailed",
                self.parse_failures.join(", "),
            ));
        }
        if !self.content_failures.is_empty() {
            let mut messages = self.content_failures.clone();
            messages.sort();
            failing.push((
                TYPES[2].0,
                "ContentDeletionFailed",
                format!(
                    "Failed to delete all resource types, {} remaining: {}",
                    messages.len(),
                    messages.join(", ")
                ),
            ));
        }
        let counted = |counts: &BTreeMap<String, usize>, word: &str| {
            let mut parts: Vec<String> = counts
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(what, n)| format!("{what} {word} {n} resource instances"))
                .collect();
            parts.sort();
            parts.join(", ")
        };
        if !self.remaining.is_empty() {
            failing.push((
                TYPES[3].0,
                "SomeResourcesRemain",
                format!(
                    "Some resources are remaining: {}",
                    counted(&self.remaining, "has")
                ),
            ));
        }
        if !self.finalizers.is_empty() {
            failing.push((
                TYPES[4].0,
                "SomeFinalizerRemain",
                format!(
                    "Some finalizers are remaining: {}",
                    counted(&self.finalizers, "in")
                ),
            ));
        }
        failing
    }

    /// Brings `status.conditions` of `namespace` up to date, at `now`; whether it changed.
    pub fn update(&self, namespace: &mut Value, now: &str) -> bool {
        let failing = self.failing();
        let Some(status) = namespace
            .as_object_mut()
            .map(|m| m.entry("status").or_insert_with(|| json!({})))
        else {
            return false;
        };
        if !status.is_object() {
            *status = json!({});
        }
        let conditions = status
            .as_object_mut()
            .map(|s| s.entry("conditions").or_insert_with(|| json!([])));
        let Some(conditions) = conditions else {
            return false;
        };
        if !conditions.is_array() {
            *conditions = json!([]);
        }
        let Some(list) = conditions.as_array_mut() else {
            return false;
        };
        let mut changed = false;
        for (kind, ok_reason, ok_message) in TYPES {
            let (status, reason, message) = match failing.iter().find(|(t, ..)| *t == kind) {
                Some((_, reason, message)) => ("True", *reason, message.clone()),
                None => ("False", ok_reason, ok_message.to_owned()),
            };
            let wanted = json!({
                "type": kind,
                "status": status,
                "lastTransitionTime": now,
                "reason": reason,
                "message": message,
            });
            match list.iter_mut().find(|c| c["type"] == kind) {
                None => {
                    list.push(wanted);
                    changed = true;
                }
                Some(old) => {
                    if old["status"] == status
                        && old["reason"] == reason
                        && old["message"] == message.as_str()
                    {
                        continue;
                    }
                    if old["status"] != status {
                        old["lastTransitionTime"] = now.into();
                    }
                    old["status"] = status.into();
                    old["reason"] = reason.into();
                    old["message"] = message.into();
                    changed = true;
                }
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition<'a>(ns: &'a Value, kind: &str) -> &'a Value {
        ns["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == kind)
            .unwrap()
    }

    // R-RES-061: remaining content and finalizers are reported as Kubernetes words them; the
    // "ok" variants follow once they are gone, and a repeat changes nothing.
    #[test]
    fn conditions_report_what_remains() {
        let mut ns = json!({"metadata": {"name": "a"}, "status": {"phase": "Terminating"}});
        let mut progress = Progress::default();
        progress.remaining.insert("configmaps.".into(), 2);
        progress.remaining.insert("deployments.apps".into(), 1);
        progress.finalizers.insert("example.com/hold".into(), 3);
        assert!(progress.update(&mut ns, "t1"));
        let remaining = condition(&ns, "NamespaceContentRemaining");
        assert_eq!(remaining["status"], "True");
        assert_eq!(remaining["reason"], "SomeResourcesRemain");
        assert_eq!(
            remaining["message"],
            "Some resources are remaining: configmaps. has 2 resource instances, deployments.apps has 1 resource instances"
        );
        let finalizers = condition(&ns, "NamespaceFinalizersRemaining");
        assert_eq!(finalizers["reason"], "SomeFinalizerRemain");
        assert_eq!(
            finalizers["message"],
            "Some finalizers are remaining: example.com/hold in 3 resource instances"
        );
        let discovery = condition(&ns, "NamespaceDeletionDiscoveryFailure");
        assert_eq!(discovery["status"], "False");
        assert_eq!(discovery["reason"], "ResourcesDiscovered");
        assert_eq!(ns["status"]["conditions"].as_array().unwrap().len(), 5);
        assert!(!progress.update(&mut ns, "t2"), "nothing changed");

        let done = Progress::default();
        assert!(done.update(&mut ns, "t3"));
        let remaining = condition(&ns, "NamespaceContentRemaining");
        assert_eq!(remaining["status"], "False");
        assert_eq!(remaining["reason"], "ContentRemoved");
        assert_eq!(remaining["message"], "All content successfully removed");
        assert_eq!(remaining["lastTransitionTime"], "t3");
        assert_eq!(
            condition(&ns, "NamespaceDeletionDiscoveryFailure")["lastTransitionTime"],
            "t1"
        );
    }

    #[test]
    fn failures_are_reported() {
        let mut ns = json!({"status": {}});
        let progress = Progress {
            discovery_failure: Some("Discovery failed for some groups, 1 failing: x".into()),
            content_failures: vec!["b".into(), "a".into()],
            ..Progress::default()
        };
        assert!(progress.update(&mut ns, "t"));
        let content = condition(&ns, "NamespaceDeletionContentFailure");
        assert_eq!(content["status"], "True");
        assert_eq!(content["reason"], "ContentDeletionFailed");
        assert_eq!(
            content["message"],
            "Failed to delete all resource types, 2 remaining: a, b"
        );
        assert_eq!(
            condition(&ns, "NamespaceDeletionDiscoveryFailure")["reason"],
            "DiscoveryFailed"
        );
    }
}

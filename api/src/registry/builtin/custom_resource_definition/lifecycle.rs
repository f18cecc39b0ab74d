//! A CRD's lifecycle state, shared by its strategy and the CRD controllers: the conditions of
//! `status.conditions` (set as Kubernetes' `SetCRDCondition` sets them), the cleanup
//! finalizer, and the mark the first delete of a CRD leaves (apiextensions-apiserver's
//! `REST.Delete`: `deletionTimestamp`, the finalizer and `Terminating` in one write, the CRD
//! answered and kept until its instances are gone).

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use serde_json::Map;
use serde_json::Value;

use crate::flavor::Flavor;

/// The condition type of a CRD whose names are accepted.
pub const NAMES_ACCEPTED: &str = "NamesAccepted";

/// The condition type of a CRD whose custom resources are served.
pub const ESTABLISHED: &str = "Established";

/// The condition type of a CRD being deleted.
pub const TERMINATING: &str = "Terminating";

/// The finalizer a deleted CRD carries until its instances are removed
/// (`customresourcecleanup.apiextensions.<group domain>`).
pub fn cleanup_finalizer(flavor: Flavor) -> String {
    format!(
        "customresourcecleanup.apiextensions.{}",
        flavor.group_domain()
    )
}

/// One condition of a CRD's `status.conditions`, without its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Condition<'a> {
    /// `type`.
    pub kind: &'a str,
    /// `status`: `True`, `False` or `Unknown`.
    pub status: &'a str,
    /// `reason`.
    pub reason: &'a str,
    /// `message`.
    pub message: &'a str,
}

/// The condition of type `kind` in `crd`'s `status.conditions`.
pub fn find<'a>(crd: &'a Value, kind: &str) -> Option<&'a Value> {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
}

/// Whether `crd` has the condition `kind` with status `True`.
pub fn is_true(crd: &Value, kind: &str) -> bool {
    find(crd, kind)
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some("True")
}

/// Whether `crd`'s condition of `condition`'s type says the same (type, status, reason and
/// message; times aside), as Kubernetes' `IsCRDConditionEquivalent`.
pub fn is_equivalent(crd: &Value, condition: &Condition<'_>) -> bool {
    find(crd, condition.kind).is_some_and(|c| {
        let text = |key: &str| c.get(key).and_then(Value::as_str).unwrap_or_default();
        text("status") == condition.status
            && text("reason") == condition.reason
            && text("message") == condition.message
    })
}

/// `time` as Kubernetes writes a `metav1.Time`.
pub fn timestamp(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Sets `condition` in `crd`'s `status.conditions` at `now`, as Kubernetes'
/// `SetCRDCondition`: a new condition is appended; an existing one takes the status, reason
/// and message, and its `lastTransitionTime` moves only when the status changes (or it had
/// none). Other fields of an existing condition (`observedGeneration`) stay.
pub fn set(crd: &mut Value, condition: &Condition<'_>, now: &str) {
    let Some(list) = conditions_mut(crd) else {
        return;
    };
    let existing = list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(condition.kind));
    match existing.and_then(Value::as_object_mut) {
        None => {
            let mut entry = Map::new();
            entry.insert("type".to_owned(), condition.kind.into());
            entry.insert("status".to_owned(), condition.status.into());
            entry.insert("lastTransitionTime".to_owned(), now.into());
            entry.insert("reason".to_owned(), condition.reason.into());
            entry.insert("message".to_owned(), condition.message.into());
            list.push(Value::Object(entry));
        }
        Some(entry) => {
            let status_changed =
                entry.get("status").and_then(Value::as_str) != Some(condition.status);
            let no_time = entry
                .get("lastTransitionTime")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if status_changed || no_time {
                entry.insert("lastTransitionTime".to_owned(), now.into());
            }
            entry.insert("status".to_owned(), condition.status.into());
            entry.insert("reason".to_owned(), condition.reason.into());
            entry.insert("message".to_owned(), condition.message.into());
        }
    }
}

/// `status.conditions` of `crd` as a list, created when missing or not a list.
fn conditions_mut(crd: &mut Value) -> Option<&mut Vec<Value>> {
    let status = crd
        .as_object_mut()?
        .entry("status")
        .or_insert_with(|| Value::Object(Map::new()));
    if !status.is_object() {
        *status = Value::Object(Map::new());
    }
    let conditions = status
        .as_object_mut()?
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !conditions.is_array() {
        *conditions = Value::Array(Vec::new());
    }
    conditions.as_array_mut()
}

/// The `Terminating` condition of a CRD just marked for deletion.
pub const DELETION_PENDING: Condition<'static> = Condition {
    kind: TERMINATING,
    status: "True",
    reason: "InstanceDeletionPending",
    message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
};

/// Marks `crd` for deletion at `now` as the first delete of a CRD does in Kubernetes:
/// `deletionTimestamp` now (no grace period, no new generation), the cleanup finalizer
/// appended unless present, and the `Terminating` condition pending.
pub fn mark_for_deletion(crd: &mut Value, now: DateTime<Utc>, flavor: Flavor) {
    let at = timestamp(now);
    let finalizer = cleanup_finalizer(flavor);
    if let Some(meta) = crd.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("deletionTimestamp".to_owned(), at.clone().into());
        let finalizers = meta
            .entry("finalizers")
            .or_insert_with(|| Value::Array(Vec::new()));
        if !finalizers.is_array() {
            *finalizers = Value::Array(Vec::new());
        }
        if let Some(list) = finalizers.as_array_mut()
            && !list.iter().any(|f| f.as_str() == Some(finalizer.as_str()))
        {
            list.push(finalizer.into());
        }
    }
    set(crd, &DELETION_PENDING, &at);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const ACCEPTED: Condition<'static> = Condition {
        kind: NAMES_ACCEPTED,
        status: "True",
        reason: "NoConflicts",
        message: "no conflicts found",
    };

    // A condition's time moves only when its status does; its other fields stay.
    #[test]
    fn set_moves_the_time_only_on_a_status_change() {
        let mut crd = json!({"metadata": {"name": "a.b"}});
        set(&mut crd, &ACCEPTED, "t1");
        assert_eq!(
            crd["status"]["conditions"],
            json!([{"type": "NamesAccepted", "status": "True", "lastTransitionTime": "t1",
                "reason": "NoConflicts", "message": "no conflicts found"}])
        );
        crd["status"]["conditions"][0]["observedGeneration"] = json!(3);
        let reworded = Condition {
            message: "other",
            ..ACCEPTED
        };
        set(&mut crd, &reworded, "t2");
        let condition = &crd["status"]["conditions"][0];
        assert_eq!(condition["lastTransitionTime"], "t1");
        assert_eq!(condition["message"], "other");
        assert_eq!(condition["observedGeneration"], 3);
        assert!(is_equivalent(&crd, &reworded));
        assert!(!is_equivalent(&crd, &ACCEPTED));
        let conflict = Condition {
            status: "False",
            reason: "PluralConflict",
            ..ACCEPTED
        };
        set(&mut crd, &conflict, "t3");
        assert_eq!(crd["status"]["conditions"][0]["lastTransitionTime"], "t3");
        assert!(!is_true(&crd, NAMES_ACCEPTED));
        assert_eq!(
            crd["status"]["conditions"].as_array().map(Vec::len),
            Some(1)
        );
    }

    // The first delete's mark: deletionTimestamp, the flavor's finalizer once, Terminating.
    #[test]
    fn a_first_delete_marks_the_crd() {
        let now = DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
            .unwrap()
            .with_timezone(&Utc);
        let mut crd = json!({"metadata": {"name": "a.b", "finalizers": ["x/y"]}, "status": {}});
        mark_for_deletion(&mut crd, now, Flavor::Kubernetes);
        mark_for_deletion(&mut crd, now, Flavor::Kubernetes);
        assert_eq!(crd["metadata"]["deletionTimestamp"], "2026-01-02T03:04:05Z");
        assert_eq!(
            crd["metadata"]["finalizers"],
            json!(["x/y", "customresourcecleanup.apiextensions.k8s.io"])
        );
        assert!(crd["metadata"].get("deletionGracePeriodSeconds").is_none());
        let terminating = find(&crd, TERMINATING).unwrap();
        assert_eq!(terminating["status"], "True");
        assert_eq!(terminating["reason"], "InstanceDeletionPending");
        assert_eq!(
            terminating["message"],
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
        );
        assert_eq!(
            cleanup_finalizer(Flavor::Platform),
            "customresourcecleanup.apiextensions.platform.io"
        );
    }

    fn strategy() -> super::super::CustomResourceDefinitionStrategy {
        super::super::CustomResourceDefinitionStrategy::new(Flavor::Platform)
    }

    fn stored() -> Value {
        json!({
            "metadata": {"name": "widgets.example.com", "uid": "u1", "generation": 1},
            "spec": {"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"}},
            "status": {"storedVersions": ["v1"]},
        })
    }

    // The first delete of a CRD keeps it, marked for the flavor's cleanup finalizer with
    // Terminating pending, whatever the options ask; a later delete is the generic one (the
    // finalizer still holds it).
    #[test]
    fn the_first_delete_marks_and_the_next_is_generic() {
        use crate::registry::DeleteAction;
        use crate::registry::DeleteOptions;
        use crate::registry::PropagationPolicy;
        use crate::registry::Strategy;

        let now = Utc::now();
        let options = DeleteOptions {
            propagation_policy: Some(PropagationPolicy::Foreground),
            ..DeleteOptions::default()
        };
        let mut crd = stored();
        assert_eq!(
            strategy().before_delete(&mut crd, now, &options),
            DeleteAction::Mark
        );
        assert_eq!(
            crd["metadata"]["finalizers"],
            json!(["customresourcecleanup.apiextensions.platform.io"])
        );
        assert_eq!(crd["metadata"]["generation"], 1);
        assert!(is_true(&crd, TERMINATING));
        let again = strategy().before_delete(&mut crd.clone(), now, &DeleteOptions::default());
        assert!(
            matches!(again, DeleteAction::Unchanged | DeleteAction::Mark),
            "{again:?}"
        );
    }

    // A status write keeps the stored spec and takes the rest of the body, finalizers and
    // labels included (Kubernetes' CRD status strategy); other writes are left alone.
    #[test]
    fn a_status_write_keeps_the_spec_and_takes_the_metadata() {
        use crate::registry::Strategy;

        let old = stored();
        let mut new = old.clone();
        new["spec"]["group"] = json!("changed.example.com");
        new["metadata"]["finalizers"] = json!([]);
        new["metadata"]["labels"] = json!({"a": "b"});
        new["status"]["acceptedNames"] = json!({"plural": "widgets", "kind": "Widget"});
        strategy().prepare_for_subresource_update("status", &mut new, &old);
        assert_eq!(new["spec"], old["spec"]);
        assert_eq!(new["metadata"]["finalizers"], json!([]));
        assert_eq!(new["metadata"]["labels"], json!({"a": "b"}));
        assert_eq!(new["status"]["acceptedNames"]["kind"], "Widget");
    }
}

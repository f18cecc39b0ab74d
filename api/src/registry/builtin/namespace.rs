//! Namespace: RFC 1123 label names, the flavor's finalizer in `spec.finalizers`,
//! `status.phase: Active`, the `<label domain>/metadata.name` label, and Kubernetes'
//! two-step deletion (Terminating first; removal once `spec.finalizers` is empty).

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::flavor::Flavor;
use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;

use crate::registry::DeleteAction;
use crate::registry::DeleteOptions;
use crate::registry::GcPolicy;
use crate::registry::Strategy;
use crate::registry::plan_delete;
use crate::registry::store::keep_fields;
use crate::registry::strategy::has_finalizers;
use crate::request::FieldLabels;
use crate::request::METADATA_NAME;
use crate::request::SelectableField;
use crate::validation::FieldError;
use crate::validation::NameRule;
use crate::validation::validate_finalizer_name;

/// Kubernetes' answer to deleting a namespace that is still being emptied.
const STILL_TERMINATING: &str = "The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.";

/// The strategy of `v1` Namespace.
#[derive(Debug)]
pub struct NamespaceStrategy {
    flavor: Flavor,
}

impl NamespaceStrategy {
    /// The namespace strategy of `flavor` (which names the finalizer and the name label).
    pub fn new(flavor: Flavor) -> Self {
        Self { flavor }
    }
}

fn object_mut<'a>(obj: &'a mut Value, field: &str) -> Option<&'a mut Map<String, Value>> {
    let Value::Object(map) = obj else { return None };
    let entry = map
        .entry(field.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut()
}

fn spec_finalizers_pending(obj: &Value) -> bool {
    obj.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
}

impl Strategy for NamespaceStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::DnsLabel
    }

    /// Kubernetes' Namespace field label conversion: `status.phase` and `metadata.name` only
    /// (a namespace has no namespace to select on).
    fn field_labels(&self) -> FieldLabels {
        const PHASE: SelectableField = SelectableField {
            label: "status.phase",
            pointers: &["/status/phase"],
        };
        FieldLabels::Only(&[PHASE, METADATA_NAME])
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    /// Status starts Active and the flavor's finalizer is always present on create.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".to_owned(), json!({"phase": "Active"}));
        }
        let finalizer = self.flavor.namespace_finalizer();
        if let Some(spec) = object_mut(obj, "spec") {
            let list = spec
                .entry("finalizers".to_owned())
                .or_insert_with(|| Value::Array(Vec::new()));
            if !list.is_array() {
                *list = Value::Array(Vec::new());
            }
            if let Value::Array(items) = list
                && !items.iter().any(|f| f.as_str() == Some(finalizer))
            {
                items.push(finalizer.into());
            }
        }
    }

    /// As `ValidateNamespace`: every `spec.finalizers` entry is a finalizer name (upstream
    /// reports them at the unindexed path).
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let finalizers = obj.pointer("/spec/finalizers").and_then(Value::as_array);
        finalizers
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .flat_map(|f| validate_finalizer_name(f, "spec.finalizers", self.flavor))
            .collect()
    }

    /// As `ValidateNamespaceStatusUpdate`, for a status that changes: the phase is `Active`
    /// until deletion begins and `Terminating` after (upstream's path spells `Phase`).
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        if new.get("status") == old.get("status") {
            return Vec::new();
        }
        let phase = new.pointer("/status/phase").and_then(Value::as_str);
        let phase_value = phase.unwrap_or_default();
        if new.pointer("/metadata/deletionTimestamp").is_none() {
            if phase != Some("Active") {
                return vec![FieldError::invalid(
                    "status.Phase",
                    phase_value,
                    "may only be 'Active' if `deletionTimestamp` is empty",
                )];
            }
        } else if phase != Some("Terminating") {
            return vec![FieldError::invalid(
                "status.Phase",
                phase_value,
                "may only be 'Terminating' if `deletionTimestamp` is not empty",
            )];
        }
        Vec::new()
    }

    /// Finalizers change only through `finalize`, status only through `status`.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        keep_fields(new, old, &["spec", "status"]);
    }

    /// `finalize` changes `spec.finalizers` (and metadata) only; `status` changes status only.
    fn prepare_for_subresource_update(&self, subresource: &str, new: &mut Value, old: &Value) {
        match subresource {
            "finalize" => keep_fields(new, old, &["status"]),
            "status" => {
                let status = new.get("status").cloned();
                *new = old.clone();
                if let (Value::Object(m), Some(s)) = (new, status) {
                    m.insert("status".to_owned(), s);
                }
            }
            _ => {}
        }
    }

    /// The name label always equals the name (also for generated names).
    fn canonicalize(&self, obj: &mut Value) {
        let name = obj
            .pointer("/metadata/name")
            .cloned()
            .unwrap_or(Value::Null);
        let label = format!("{}/metadata.name", self.flavor.label_domain());
        if let Some(meta) = object_mut(obj, "metadata") {
            let labels = meta
                .entry("labels".to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(labels) = labels {
                labels.insert(label, name);
            }
        }
    }

    fn before_delete(
        &self,
        obj: &mut Value,
        now: DateTime<Utc>,
        options: &DeleteOptions,
    ) -> DeleteAction {
        if obj.pointer("/metadata/deletionTimestamp").is_none() {
            if let Some(meta) = object_mut(obj, "metadata") {
                let at = now.to_rfc3339_opts(SecondsFormat::Secs, true);
                meta.insert("deletionTimestamp".to_owned(), at.into());
            }
            if let Some(status) = object_mut(obj, "status") {
                status.insert("phase".to_owned(), "Terminating".into());
            }
            return DeleteAction::Mark;
        }
        if spec_finalizers_pending(obj) {
            return DeleteAction::Refuse(STILL_TERMINATING.to_owned());
        }
        plan_delete(obj, now, options, GcPolicy::DeleteDependents, None)
    }

    fn ready_for_removal(&self, obj: &Value) -> bool {
        obj.pointer("/metadata/deletionTimestamp").is_some()
            && !has_finalizers(obj)
            && !spec_finalizers_pending(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_sets_phase_finalizer_and_label() {
        let s = NamespaceStrategy::new(Flavor::Kubernetes);
        let mut v = json!({"metadata":{"name":"a"},"status":{"phase":"Terminating"}});
        s.prepare_for_create(&mut v);
        s.canonicalize(&mut v);
        assert_eq!(v["status"]["phase"], "Active");
        assert_eq!(v["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(v["metadata"]["labels"]["kubernetes.io/metadata.name"], "a");
        let p = NamespaceStrategy::new(Flavor::Platform);
        let mut w = json!({"metadata":{"name":"b"},"spec":{"finalizers":["x"]}});
        p.prepare_for_create(&mut w);
        p.canonicalize(&mut w);
        assert_eq!(w["spec"]["finalizers"], json!(["x", "platform"]));
        assert_eq!(w["metadata"]["labels"]["platform.io/metadata.name"], "b");
    }

    // R-RES-060, R-RES-061: a delete marks the namespace Terminating with `deletionTimestamp`; it is removed once its finalizers are gone.
    #[test]
    fn delete_goes_through_terminating() {
        let s = NamespaceStrategy::new(Flavor::Platform);
        let mut v = json!({"metadata":{"name":"a"},"spec":{"finalizers":["platform"]},"status":{"phase":"Active"}});
        let at = |text: &str| {
            DateTime::parse_from_rfc3339(text)
                .expect("a time")
                .with_timezone(&Utc)
        };
        let options = DeleteOptions::default();
        assert_eq!(
            s.before_delete(&mut v, at("2026-01-01T00:00:00Z"), &options),
            DeleteAction::Mark
        );
        assert_eq!(v["status"]["phase"], "Terminating");
        assert_eq!(v["metadata"]["deletionTimestamp"], "2026-01-01T00:00:00Z");
        assert!(matches!(
            s.before_delete(&mut v, at("2026-01-02T00:00:00Z"), &options),
            DeleteAction::Refuse(_)
        ));
        assert!(!s.ready_for_removal(&v));
        v["spec"]["finalizers"] = json!([]);
        assert!(s.ready_for_removal(&v));
        assert_eq!(
            s.before_delete(&mut v, at("2026-01-02T00:00:00Z"), &options),
            DeleteAction::Remove
        );
    }

    // R-RES-027
    #[test]
    fn spec_finalizers_are_finalizer_names() {
        let s = NamespaceStrategy::new(Flavor::Platform);
        assert!(
            s.validate(&json!({"spec":{"finalizers":["platform","example.com/x"]}}))
                .is_empty()
        );
        let errs = s.validate(&json!({"spec":{"finalizers":["platform","kubernetes"]}}));
        assert_eq!(
            errs.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec![
                r#"spec.finalizers: Invalid value: "kubernetes": name is neither a standard finalizer name nor is it fully qualified"#
            ]
        );
        let k = NamespaceStrategy::new(Flavor::Kubernetes);
        assert!(
            k.validate(&json!({"spec":{"finalizers":["kubernetes"]}}))
                .is_empty()
        );
    }

    #[test]
    fn status_phase_follows_deletion() {
        let s = NamespaceStrategy::new(Flavor::Platform);
        let old = json!({"status":{"phase":"Active"}});
        let bad = json!({"status":{"phase":"Terminating"}});
        assert_eq!(
            s.validate_update(&bad, &old)[0].to_string(),
            r#"status.Phase: Invalid value: "Terminating": may only be 'Active' if `deletionTimestamp` is empty"#
        );
        let deleting =
            json!({"metadata":{"deletionTimestamp":"t"},"status":{"phase":"Active","x":1}});
        assert_eq!(
            s.validate_update(&deleting, &old)[0].to_string(),
            r#"status.Phase: Invalid value: "Active": may only be 'Terminating' if `deletionTimestamp` is not empty"#
        );
        assert!(s.validate_update(&old, &old).is_empty());
    }

    #[test]
    fn updates_keep_spec_and_status() {
        let s = NamespaceStrategy::new(Flavor::Platform);
        let old = json!({"spec":{"finalizers":["platform"]},"status":{"phase":"Active"}});
        let mut new = json!({"metadata":{"labels":{"a":"b"}},"status":{"phase":"Gone"}});
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new["spec"], old["spec"]);
        assert_eq!(new["status"], old["status"]);
    }
}

//! core/v1 ReplicationController: defaults (selector and labels from the template), a
//! required map selector matching the template, the template rules, an empty status on
//! create, and the status counters.

use serde_json::Value;
use serde_json::json;

use super::defaults::default_replication_controller;
use super::fields::nonnegative;
use super::fields::set_status;
use super::workload::active_deadline_not_supported;
use super::workload::mismatch;
use super::workload::validate_replica_status;
use super::workload::validate_template_at;
use crate::registry::GcPolicy;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::validate_labels;

/// The strategy of `v1` ReplicationController.
#[derive(Debug, Default)]
pub struct ReplicationControllerStrategy;

impl Strategy for ReplicationControllerStrategy {
    /// A ReplicationController's pods are orphaned by default, as Kubernetes does.
    fn gc_policy(&self) -> GcPolicy {
        GcPolicy::OrphanDependents
    }

    fn default_fields(&self, obj: &mut Value) {
        default_replication_controller(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_status(obj, json!({"replicas": 0}));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = nonnegative(obj, "/spec", "spec", &["replicas", "minReadySeconds"]);
        let selector = obj
            .pointer("/spec/selector")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if selector.is_empty() {
            errs.push(FieldError::required("spec.selector", ""));
        }
        errs.extend(validate_labels(
            obj.pointer("/spec/selector"),
            "spec.selector",
        ));
        let Some(template) = obj.pointer("/spec/template").filter(|t| t.is_object()) else {
            errs.push(FieldError::required("spec.template", ""));
            return errs;
        };
        let labels = template
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if !selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
            errs.push(mismatch(labels));
        }
        errs.extend(validate_template_at(template, "spec.template", &["Always"]));
        errs.extend(active_deadline_not_supported(obj, "ReplicationController"));
        errs
    }

    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        validate_replica_status(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(rc: &Value) -> Vec<String> {
        ReplicationControllerStrategy
            .validate(rc)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn selector_and_template_rules() {
        let mut rc = json!({"spec": {"template": {"metadata": {"labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        ReplicationControllerStrategy.default_fields(&mut rc);
        assert!(messages(&rc).is_empty(), "{:?}", messages(&rc));
        rc["spec"]["selector"] = json!({"app": "b"});
        assert_eq!(
            messages(&rc),
            [
                r#"spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match template `labels`"#
            ]
        );
        let empty = json!({"spec": {"selector": {}}});
        assert_eq!(
            messages(&empty),
            [
                "spec.selector: Required value",
                "spec.template: Required value"
            ]
        );
    }
}

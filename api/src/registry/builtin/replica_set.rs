//! apps/v1 ReplicaSet: defaults, selector and template rules, an empty status on create, an
//! immutable selector, and the status counters.

use serde_json::Value;
use serde_json::json;

use super::defaults::default_replica_set;
use super::fields::nonnegative;
use super::fields::set_status;
use super::workload::immutable_selector;
use super::workload::no_active_deadline;
use super::workload::validate_replica_status;
use super::workload::validate_selector;
use super::workload::validate_template;
use crate::registry::Strategy;
use crate::validation::FieldError;

/// The strategy of `apps/v1` ReplicaSet.
#[derive(Debug, Default)]
pub struct ReplicaSetStrategy;

impl Strategy for ReplicaSetStrategy {
    fn default_fields(&self, obj: &mut Value) {
        default_replica_set(obj);
    }

    /// upstream resets the status to its zero value, whose `replicas` is always serialized.
    fn prepare_for_create(&self, obj: &mut Value) {
        set_status(obj, json!({"replicas": 0}));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = nonnegative(obj, "/spec", "spec", &["replicas", "minReadySeconds"]);
        // upstream words the ReplicaSet rule as the Deployment one.
        errs.extend(validate_selector(
            obj,
            "empty selector is invalid for deployment",
        ));
        errs.extend(validate_template(obj, &["Always"]));
        errs.extend(no_active_deadline(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        immutable_selector(new, old)
    }

    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        validate_replica_status(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_set_rules() {
        let mut rs = json!({"spec": {
            "replicas": -2,
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}}
        }});
        ReplicaSetStrategy.default_fields(&mut rs);
        let errs: Vec<String> = ReplicaSetStrategy
            .validate(&rs)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            ["spec.replicas: Invalid value: -2: must be greater than or equal to 0"]
        );
        ReplicaSetStrategy.prepare_for_create(&mut rs);
        assert_eq!(rs["status"], json!({"replicas": 0}));
    }

    #[test]
    fn status_counters() {
        let s = json!({"status": {"replicas": 1, "fullyLabeledReplicas": 2, "readyReplicas": 1, "availableReplicas": -1}});
        let errs: Vec<String> = validate_replica_status(&s)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            [
                "status.availableReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than the number of replicas",
            ]
        );
    }
}

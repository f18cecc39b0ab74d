//! apps/v1 Deployment: defaults, selector and template rules, the strategy, deadlines, an
//! empty status on create, an immutable selector, and the status counters.

use serde_json::Value;
use serde_json::json;

use super::defaults::default_deployment;
use super::fields::int_at;
use super::fields::nonnegative;
use super::fields::set_status;
use super::fields::str_at;
use super::workload::immutable_selector;
use super::workload::no_active_deadline;
use super::workload::validate_replica_counts;
use super::workload::validate_rolling_update;
use super::workload::validate_selector;
use super::workload::validate_template;
use crate::registry::Strategy;
use crate::validation::FieldError;

/// The strategy of `apps/v1` Deployment.
#[derive(Debug, Default)]
pub struct DeploymentStrategy;

impl Strategy for DeploymentStrategy {
    fn default_fields(&self, obj: &mut Value) {
        default_deployment(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_status(obj, json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = nonnegative(
            obj,
            "/spec",
            "spec",
            &["replicas", "minReadySeconds", "revisionHistoryLimit"],
        );
        errs.extend(validate_selector(
            obj,
            "empty selector is invalid for deployment",
        ));
        errs.extend(validate_template(obj, &["Always"]));
        errs.extend(no_active_deadline(obj));
        errs.extend(validate_strategy(obj));
        if let Some(deadline) = int_at(obj, "/spec/progressDeadlineSeconds") {
            if deadline <= 0 {
                errs.push(FieldError::invalid(
                    "spec.progressDeadlineSeconds",
                    deadline,
                    "must be greater than zero",
                ));
            }
            if deadline <= int_at(obj, "/spec/minReadySeconds").unwrap_or(0) {
                errs.push(FieldError::invalid(
                    "spec.progressDeadlineSeconds",
                    deadline,
                    "must be greater than minReadySeconds",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        immutable_selector(new, old)
    }

    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        validate_replica_counts(
            new,
            &[
                "observedGeneration",
                "replicas",
                "updatedReplicas",
                "readyReplicas",
                "availableReplicas",
                "unavailableReplicas",
                "terminatingReplicas",
                "collisionCount",
            ],
            &["updatedReplicas", "readyReplicas", "availableReplicas"],
            "status.replicas",
            "readyReplicas",
        )
    }
}

/// upstream's `ValidateDeploymentStrategy`.
fn validate_strategy(obj: &Value) -> Vec<FieldError> {
    let rolling = obj.pointer("/spec/strategy/rollingUpdate");
    match str_at(obj, "/spec/strategy/type") {
        "Recreate" if rolling.is_some() => vec![FieldError::forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        )],
        "Recreate" => Vec::new(),
        "RollingUpdate" if rolling.is_none() => vec![FieldError::required(
            "spec.strategy.rollingUpdate",
            "this should be defaulted and never be nil",
        )],
        "RollingUpdate" => validate_rolling_update(
            obj,
            "/spec/strategy/rollingUpdate",
            "spec.strategy.rollingUpdate",
        ),
        other => vec![FieldError::not_supported(
            "spec.strategy.type",
            other,
            &["Recreate", "RollingUpdate"],
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment() -> Value {
        let mut d = json!({"metadata": {"name": "d"}, "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}}
        }});
        DeploymentStrategy.default_fields(&mut d);
        d
    }

    fn messages(d: &Value) -> Vec<String> {
        DeploymentStrategy
            .validate(d)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_defaulted_deployment_is_valid_and_starts_with_an_empty_status() {
        let mut d = deployment();
        assert!(messages(&d).is_empty(), "{:?}", messages(&d));
        d["status"] = json!({"replicas": 3});
        DeploymentStrategy.prepare_for_create(&mut d);
        assert_eq!(d["status"], json!({}));
    }

    #[test]
    fn numbers_and_strategy() {
        let mut d = deployment();
        d["spec"]["replicas"] = (-1).into();
        d["spec"]["minReadySeconds"] = 700.into();
        d["spec"]["strategy"]["type"] = "Recreate".into();
        assert_eq!(
            messages(&d),
            [
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
                "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds",
            ]
        );
        let mut d = deployment();
        d["spec"]["strategy"] = json!({"type": "Blue"});
        assert_eq!(
            messages(&d),
            [
                r#"spec.strategy.type: Unsupported value: "Blue": supported values: "Recreate", "RollingUpdate""#
            ]
        );
        let mut d = deployment();
        d["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 5.into();
        assert_eq!(
            messages(&d),
            ["spec.template.spec.activeDeadlineSeconds: Invalid value: 5: must not be specified"]
        );
    }

    // R-VER-151
    #[test]
    fn the_selector_is_immutable() {
        let old = deployment();
        let mut new = old.clone();
        new["spec"]["selector"] = json!({"matchLabels": {"app": "b"}});
        assert_eq!(
            DeploymentStrategy.validate_update(&new, &old)[0].to_string(),
            r#"spec.selector: Invalid value: {"matchLabels":{"app":"b"}}: field is immutable"#
        );
    }

    #[test]
    fn status_counters() {
        let mut d = deployment();
        d["status"] = json!({"replicas": 1, "readyReplicas": 2, "availableReplicas": 3, "updatedReplicas": -1});
        let errs: Vec<String> = DeploymentStrategy
            .validate_status_update(&d, &d)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            [
                "status.updatedReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas",
            ]
        );
    }
}

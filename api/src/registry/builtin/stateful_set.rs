//! apps/v1 StatefulSet: defaults, selector and template rules, pod management and update
//! strategy, an empty status on create, upstream's list of the spec fields an update may
//! change, and the status counters.

use serde_json::Value;
use serde_json::json;

use super::defaults::default_stateful_set;
use super::fields::nonnegative;
use super::fields::set_status;
use super::fields::str_at;
use super::workload::active_deadline_not_supported;
use super::workload::validate_replica_counts;
use super::workload::validate_selector;
use super::workload::validate_template;
use crate::registry::Strategy;
use crate::validation::FieldError;

/// The spec fields an update may change.
const MUTABLE: &[&str] = &[
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// The strategy of `apps/v1` StatefulSet.
#[derive(Debug, Default)]
pub struct StatefulSetStrategy;

impl Strategy for StatefulSetStrategy {
    fn default_fields(&self, obj: &mut Value) {
        default_stateful_set(obj);
    }

    /// The zero status, whose `replicas` and `availableReplicas` are always serialized.
    fn prepare_for_create(&self, obj: &mut Value) {
        set_status(obj, json!({"replicas": 0, "availableReplicas": 0}));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        match str_at(obj, "/spec/podManagementPolicy") {
            "" => errs.push(FieldError::required("spec.podManagementPolicy", "")),
            "OrderedReady" | "Parallel" => {}
            other => errs.push(FieldError::invalid(
                "spec.podManagementPolicy",
                other,
                "must be 'OrderedReady' or 'Parallel'",
            )),
        }
        errs.extend(validate_update_strategy(obj));
        errs.extend(nonnegative(
            obj,
            "/spec",
            "spec",
            &["replicas", "minReadySeconds"],
        ));
        errs.extend(nonnegative(
            obj,
            "/spec/ordinals",
            "spec.ordinals",
            &["start"],
        ));
        errs.extend(validate_selector(
            obj,
            "empty selector is not valid for statefulset.",
        ));
        errs.extend(validate_template(obj, &["Always"]));
        errs.extend(active_deadline_not_supported(obj, "StatefulSet"));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let fixed = |obj: &Value| {
            let mut spec = obj.get("spec").cloned().unwrap_or(Value::Null);
            if let Value::Object(m) = &mut spec {
                m.retain(|k, _| !MUTABLE.contains(&k.as_str()));
            }
            spec
        };
        if fixed(new) == fixed(old) {
            return Vec::new();
        }
        vec![FieldError::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        )]
    }

    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        validate_replica_counts(
            new,
            &[
                "replicas",
                "readyReplicas",
                "currentReplicas",
                "updatedReplicas",
                "availableReplicas",
                "observedGeneration",
                "collisionCount",
            ],
            &[
                "readyReplicas",
                "currentReplicas",
                "updatedReplicas",
                "availableReplicas",
            ],
            "status.replicas",
            "status.readyReplicas",
        )
    }
}

/// `spec.updateStrategy`: RollingUpdate (with a non-negative partition) or OnDelete (with no
/// rollingUpdate).
fn validate_update_strategy(obj: &Value) -> Vec<FieldError> {
    let rolling = obj.pointer("/spec/updateStrategy/rollingUpdate");
    match str_at(obj, "/spec/updateStrategy/type") {
        "" => vec![FieldError::required("spec.updateStrategy", "")],
        "OnDelete" => rolling
            .map(|r| {
                FieldError::invalid(
                    "spec.updateStrategy.rollingUpdate",
                    r.clone(),
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            })
            .into_iter()
            .collect(),
        "RollingUpdate" => nonnegative(
            obj,
            "/spec/updateStrategy/rollingUpdate",
            "spec.updateStrategy.rollingUpdate",
            &["partition"],
        ),
        _ => vec![FieldError::invalid(
            "spec.updateStrategy",
            obj.pointer("/spec/updateStrategy")
                .cloned()
                .unwrap_or(Value::Null),
            "must be 'RollingUpdate' or 'OnDelete'",
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sts() -> Value {
        let mut s = json!({"metadata": {"name": "s"}, "spec": {
            "serviceName": "s",
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}}
        }});
        StatefulSetStrategy.default_fields(&mut s);
        s
    }

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_defaulted_statefulset_is_valid() {
        assert!(StatefulSetStrategy.validate(&sts()).is_empty());
    }

    #[test]
    fn policies_strategy_and_template() {
        let mut s = sts();
        s["spec"]["podManagementPolicy"] = "Random".into();
        s["spec"]["updateStrategy"] =
            json!({"type": "OnDelete", "rollingUpdate": {"partition": 1}});
        s["spec"]["selector"] = json!({});
        s["spec"]["template"]["spec"]["restartPolicy"] = "Never".into();
        assert_eq!(
            messages(StatefulSetStrategy.validate(&s)),
            [
                r#"spec.podManagementPolicy: Invalid value: "Random": must be 'OrderedReady' or 'Parallel'"#,
                r#"spec.updateStrategy.rollingUpdate: Invalid value: {"partition":1}: only allowed for updateStrategy 'RollingUpdate'"#,
                "spec.selector: Invalid value: {}: empty selector is not valid for statefulset.",
                r#"spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always""#,
            ]
        );
    }

    #[test]
    fn an_update_may_change_only_the_listed_fields() {
        let old = sts();
        let mut new = old.clone();
        new["spec"]["replicas"] = 3.into();
        new["spec"]["template"]["spec"]["containers"][0]["image"] = "j".into();
        assert!(StatefulSetStrategy.validate_update(&new, &old).is_empty());
        new["spec"]["serviceName"] = "other".into();
        assert_eq!(
            messages(StatefulSetStrategy.validate_update(&new, &old)),
            [
                "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
            ]
        );
    }

    #[test]
    fn ready_replicas_cannot_exceed_replicas() {
        let mut s = sts();
        s["status"] = json!({"replicas": 1, "readyReplicas": 2, "availableReplicas": 1});
        assert_eq!(
            messages(StatefulSetStrategy.validate_status_update(&s, &s)),
            ["status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas"]
        );
    }
}

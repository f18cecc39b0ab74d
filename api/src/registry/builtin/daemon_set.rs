//! apps/v1 DaemonSet: defaults, selector and template rules, the update strategy, an empty
//! status on create, an immutable selector, and non-negative status counters.

use serde_json::Value;
use serde_json::json;

use super::defaults::default_daemon_set;
use super::fields::nonnegative;
use super::fields::set_status;
use super::fields::str_at;
use super::workload::immutable_selector;
use super::workload::unavailable_and_surge;
use super::workload::validate_selector;
use super::workload::validate_status_counts;
use super::workload::validate_template;
use crate::registry::Strategy;
use crate::validation::FieldError;

/// The counters of a DaemonSet status.
const COUNTERS: &[&str] = &[
    "currentNumberScheduled",
    "numberMisscheduled",
    "desiredNumberScheduled",
    "numberReady",
    "observedGeneration",
    "updatedNumberScheduled",
    "numberAvailable",
    "numberUnavailable",
    "collisionCount",
];

/// The strategy of `apps/v1` DaemonSet.
#[derive(Debug, Default)]
pub struct DaemonSetStrategy;

impl Strategy for DaemonSetStrategy {
    fn default_fields(&self, obj: &mut Value) {
        default_daemon_set(obj);
    }

    /// The zero status: its four required counters are always serialized.
    fn prepare_for_create(&self, obj: &mut Value) {
        set_status(
            obj,
            json!({
                "currentNumberScheduled": 0, "numberMisscheduled": 0,
                "desiredNumberScheduled": 0, "numberReady": 0
            }),
        );
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_selector(obj, "empty selector is not valid for daemonset.");
        errs.extend(validate_template(obj, &["Always"]));
        if let Some(v) = obj.pointer("/spec/template/spec/activeDeadlineSeconds") {
            errs.push(FieldError::invalid(
                "spec.template.spec.activeDeadlineSeconds",
                v.clone(),
                "activeDeadlineSeconds must be nil for DaemonSet",
            ));
        }
        errs.extend(nonnegative(
            obj,
            "/spec",
            "spec",
            &["minReadySeconds", "revisionHistoryLimit"],
        ));
        errs.extend(validate_update_strategy(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        immutable_selector(new, old)
    }

    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        validate_status_counts(new, COUNTERS, &[])
    }
}

/// upstream's `ValidateDaemonSetUpdateStrategy`: OnDelete, or RollingUpdate with exactly
/// one of maxUnavailable and maxSurge non-zero.
fn validate_update_strategy(obj: &Value) -> Vec<FieldError> {
    const AT: &str = "/spec/updateStrategy/rollingUpdate";
    const PATH: &str = "spec.updateStrategy.rollingUpdate";
    match str_at(obj, "/spec/updateStrategy/type") {
        "OnDelete" => Vec::new(),
        "RollingUpdate" if obj.pointer(AT).is_none() => {
            vec![FieldError::required(PATH, "")]
        }
        "RollingUpdate" => {
            let (mut errs, unavailable_zero, surge_zero) =
                unavailable_and_surge(obj, AT, PATH, true);
            let set =
                |field: &str, zero: bool| obj.pointer(&format!("{AT}/{field}")).is_some() && !zero;
            let (unavailable, surge) = (
                set("maxUnavailable", unavailable_zero),
                set("maxSurge", surge_zero),
            );
            if unavailable && surge {
                errs.push(FieldError::invalid(
                    format!("{PATH}.maxSurge"),
                    obj.pointer(&format!("{AT}/maxSurge"))
                        .cloned()
                        .unwrap_or(Value::Null),
                    "may not be set when maxUnavailable is non-zero",
                ));
            } else if !unavailable && !surge {
                errs.push(FieldError::required(
                    format!("{PATH}.maxUnavailable"),
                    "cannot be 0 when maxSurge is 0",
                ));
            }
            errs
        }
        other => vec![FieldError::not_supported(
            "spec.updateStrategy.type",
            other,
            &["RollingUpdate", "OnDelete"],
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds() -> Value {
        let mut d = json!({"spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}}
        }});
        DaemonSetStrategy.default_fields(&mut d);
        d
    }

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn update_strategy_rules() {
        assert!(DaemonSetStrategy.validate(&ds()).is_empty());
        let mut d = ds();
        d["spec"]["updateStrategy"]["rollingUpdate"] = json!({"maxUnavailable": 0, "maxSurge": 0});
        assert_eq!(
            messages(DaemonSetStrategy.validate(&d)),
            [
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"
            ]
        );
        d["spec"]["updateStrategy"]["rollingUpdate"] =
            json!({"maxUnavailable": 1, "maxSurge": "10%"});
        assert_eq!(
            messages(DaemonSetStrategy.validate(&d)),
            [
                r#"spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "10%": may not be set when maxUnavailable is non-zero"#
            ]
        );
        d["spec"]["updateStrategy"] = json!({"type": "Now"});
        assert_eq!(
            messages(DaemonSetStrategy.validate(&d)),
            [
                r#"spec.updateStrategy.type: Unsupported value: "Now": supported values: "RollingUpdate", "OnDelete""#
            ]
        );
    }

    #[test]
    fn empty_selector_and_status() {
        let mut d = ds();
        d["spec"]["selector"] = json!({"matchLabels": {}});
        assert_eq!(
            messages(DaemonSetStrategy.validate(&d)),
            [
                r#"spec.selector: Invalid value: {"matchLabels":{}}: empty selector is not valid for daemonset."#
            ]
        );
        d["status"] = json!({"numberReady": -1});
        assert_eq!(
            messages(DaemonSetStrategy.validate_status_update(&d, &d)),
            ["status.numberReady: Invalid value: -1: must be greater than or equal to 0"]
        );
    }
}

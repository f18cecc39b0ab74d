//! PodDisruptionBudget (`policy/v1`): Kubernetes' `ValidatePodDisruptionBudgetSpec`.

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::Value;

use super::row::kind;
use crate::flavor::Flavor;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::validate_int_or_percent;
use crate::validation::validate_label_selector;

/// The values of `spec.unhealthyPodEvictionPolicy`, sorted as upstream lists them.
const EVICTION_POLICIES: &[&str] = &["AlwaysAllow", "IfHealthyBudget"];

/// The strategy of `policy/v1` PodDisruptionBudget: the generic steps plus the spec rules.
pub struct PodDisruptionBudgetStrategy {
    base: Box<dyn Strategy>,
}

impl PodDisruptionBudgetStrategy {
    /// The PodDisruptionBudget strategy of `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        Self {
            base: kind::<PodDisruptionBudget>().new_strategy(flavor),
        }
    }
}

impl Strategy for PodDisruptionBudgetStrategy {
    fn tracks_generation(&self) -> bool {
        self.base.tracks_generation()
    }

    /// `ValidatePodDisruptionBudgetSpec`: one of minAvailable and maxUnavailable, each a
    /// non-negative int or a percentage up to 100, a valid selector, a known eviction policy.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let min = spec.get("minAvailable").filter(|v| !v.is_null());
        let max = spec.get("maxUnavailable").filter(|v| !v.is_null());
        if min.is_some() && max.is_some() {
            errs.push(FieldError::invalid(
                "spec",
                spec.clone(),
                "minAvailable and maxUnavailable cannot be both set",
            ));
        }
        if let Some(v) = min {
            errs.extend(validate_int_or_percent(v, "spec.minAvailable", true));
        }
        if let Some(v) = max {
            errs.extend(validate_int_or_percent(v, "spec.maxUnavailable", true));
        }
        errs.extend(validate_label_selector(
            spec.get("selector"),
            "spec.selector",
        ));
        if let Some(policy) = spec
            .get("unhealthyPodEvictionPolicy")
            .and_then(Value::as_str)
            && !EVICTION_POLICIES.contains(&policy)
        {
            errs.push(FieldError::not_supported(
                "spec.unhealthyPodEvictionPolicy",
                policy,
                EVICTION_POLICIES,
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rendered(spec: Value) -> Vec<String> {
        PodDisruptionBudgetStrategy::new(Flavor::Kubernetes)
            .validate(&json!({ "spec": spec }))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn budget_rules() {
        assert!(
            rendered(json!({"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}}}))
                .is_empty()
        );
        assert_eq!(
            rendered(json!({"minAvailable":1,"maxUnavailable":1})),
            vec![
                r#"spec: Invalid value: {"minAvailable":1,"maxUnavailable":1}: minAvailable and maxUnavailable cannot be both set"#
            ]
        );
        assert_eq!(
            rendered(json!({"maxUnavailable":"110%"})),
            vec![r#"spec.maxUnavailable: Invalid value: "110%": must not be greater than 100%"#]
        );
        assert_eq!(
            rendered(json!({"minAvailable":-2})),
            vec!["spec.minAvailable: Invalid value: -2: must be greater than or equal to 0"]
        );
        assert_eq!(
            rendered(json!({"unhealthyPodEvictionPolicy":"Never"})),
            vec![
                r#"spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget""#
            ]
        );
        assert_eq!(
            rendered(json!({"selector":{"matchExpressions":[{"key":"a","operator":"In"}]}})),
            vec![
                "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ]
        );
    }
}

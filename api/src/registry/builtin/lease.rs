//! Lease (`coordination/v1`): Kubernetes' `ValidateLeaseSpec`.

use k8s_openapi::api::coordination::v1::Lease;
use serde_json::Value;

use super::row::kind;
use crate::flavor::Flavor;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::validate_qualified_name;

/// The strategies a Lease may name without a domain.
const LEASE_STRATEGIES: &[&str] = &["OldestEmulationVersion"];

/// The strategy of `coordination/v1` Lease: the generic steps plus the spec rules.
pub struct LeaseStrategy {
    base: Box<dyn Strategy>,
}

impl LeaseStrategy {
    /// The Lease strategy of `flavor` (which spells the group of the decoded object).
    pub fn new(flavor: Flavor) -> Self {
        Self {
            base: kind::<Lease>().new_strategy(flavor),
        }
    }
}

/// `ValidateCoordinatedLeaseStrategy`. Upstream reports it one level too deep
/// (`spec.strategy.strategy`), which is kept for identical messages.
fn validate_lease_strategy(strategy: &str) -> Vec<FieldError> {
    const PATH: &str = "spec.strategy.strategy";
    if !strategy.contains('/') {
        if LEASE_STRATEGIES.contains(&strategy) {
            return Vec::new();
        }
        return vec![FieldError::not_supported(PATH, strategy, LEASE_STRATEGIES)];
    }
    validate_qualified_name(strategy)
        .into_iter()
        .map(|msg| FieldError::invalid(PATH, strategy, msg))
        .collect()
}

impl Strategy for LeaseStrategy {
    fn tracks_generation(&self) -> bool {
        self.base.tracks_generation()
    }

    /// `ValidateLeaseSpec`, on create and update alike.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        if let Some(d) = spec.get("leaseDurationSeconds").and_then(Value::as_i64)
            && d <= 0
        {
            errs.push(FieldError::invalid(
                "spec.leaseDurationSeconds",
                d,
                "must be greater than 0",
            ));
        }
        if let Some(t) = spec.get("leaseTransitions").and_then(Value::as_i64)
            && t < 0
        {
            errs.push(FieldError::invalid(
                "spec.leaseTransitions",
                t,
                "must be greater than or equal to 0",
            ));
        }
        let strategy = spec.get("strategy").and_then(Value::as_str);
        if let Some(s) = strategy {
            errs.extend(validate_lease_strategy(s));
        }
        let holder = spec.get("preferredHolder").and_then(Value::as_str);
        if holder.is_some_and(|h| !h.is_empty()) && strategy.is_none_or(str::is_empty) {
            errs.push(FieldError::forbidden(
                "spec.preferredHolder",
                "may only be specified if `strategy` is defined",
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
        LeaseStrategy::new(Flavor::Kubernetes)
            .validate(&json!({ "spec": spec }))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn durations_transitions_and_holder() {
        assert!(
            rendered(json!({"holderIdentity":"a","leaseDurationSeconds":15,"leaseTransitions":0}))
                .is_empty()
        );
        assert_eq!(
            rendered(json!({"leaseDurationSeconds":0})),
            vec!["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"]
        );
        assert_eq!(
            rendered(json!({"leaseTransitions":-1})),
            vec!["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"]
        );
        assert_eq!(
            rendered(json!({"preferredHolder":"b"})),
            vec!["spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"]
        );
        assert!(
            rendered(json!({"preferredHolder":"b","strategy":"OldestEmulationVersion"})).is_empty()
        );
        assert!(rendered(json!({"strategy":"example.com/mine"})).is_empty());
        assert_eq!(
            rendered(json!({"strategy":"Newest"})),
            vec![
                r#"spec.strategy.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion""#
            ]
        );
    }

    #[test]
    fn leases_have_no_generation() {
        assert!(!LeaseStrategy::new(Flavor::Platform).tracks_generation());
    }
}

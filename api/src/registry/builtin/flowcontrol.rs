//! FlowSchema and PriorityLevelConfiguration (`flowcontrol.apiserver/v1`): Kubernetes' v1
//! defaulting (`SetDefaults_*`: `nominalConcurrencyShares` 30 only when unset, an explicit 0
//! kept, R-VER-098) and the spec rules of its `ValidateFlowSchema` and
//! `ValidatePriorityLevelConfiguration`.

use k8s_openapi::api::flowcontrol::v1::FlowSchema;
use k8s_openapi::api::flowcontrol::v1::PriorityLevelConfiguration;
use serde_json::Value;
use serde_json::json;

use super::row::kind;
use crate::flavor::Flavor;
use crate::registry::Strategy;
use crate::validation::FieldError;

/// A FlowSchema's `matchingPrecedence` when it is unset (or 0).
const DEFAULT_MATCHING_PRECEDENCE: i64 = 1000;
/// The highest `matchingPrecedence`.
const MAX_MATCHING_PRECEDENCE: i64 = 10_000;
/// A limited level's `nominalConcurrencyShares` when unset (v1).
const DEFAULT_NOMINAL_SHARES: i64 = 30;
/// The most queues a level may have.
const MAX_QUEUES: i64 = 10_000_000;
/// The bits of hash a shuffle-sharding deal may use.
const MAX_HASH_BITS: u32 = 60;

/// The strategy of FlowSchema: the generic steps plus defaulting and the spec rules.
pub struct FlowSchemaStrategy {
    base: Box<dyn Strategy>,
}

impl FlowSchemaStrategy {
    /// The FlowSchema strategy of `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        Self {
            base: kind::<FlowSchema>().status().new_strategy(flavor),
        }
    }
}

impl Strategy for FlowSchemaStrategy {
    fn tracks_generation(&self) -> bool {
        self.base.tracks_generation()
    }

    /// `SetDefaults_FlowSchemaSpec`: `matchingPrecedence` 0 or unset becomes 1000.
    fn default_fields(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            let unset = spec
                .get("matchingPrecedence")
                .and_then(Value::as_i64)
                .is_none_or(|p| p == 0);
            if unset {
                spec.insert(
                    "matchingPrecedence".into(),
                    DEFAULT_MATCHING_PRECEDENCE.into(),
                );
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_flow_schema_spec(obj.get("spec").unwrap_or(&Value::Null))
    }
}

fn validate_flow_schema_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let precedence = spec
        .get("matchingPrecedence")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if !(1..=MAX_MATCHING_PRECEDENCE).contains(&precedence) {
        errs.push(FieldError::invalid(
            "spec.matchingPrecedence",
            precedence,
            "must be between 1 and 10000, inclusive",
        ));
    }
    let level = spec.pointer("/priorityLevelConfiguration/name");
    if level.and_then(Value::as_str).is_none_or(str::is_empty) {
        errs.push(FieldError::required(
            "spec.priorityLevelConfiguration.name",
            "must reference a priority level",
        ));
    }
    if let Some(method) = spec.pointer("/distinguisherMethod/type") {
        let method = method.as_str().unwrap_or_default();
        if !["ByUser", "ByNamespace"].contains(&method) {
            errs.push(FieldError::not_supported(
                "spec.distinguisherMethod.type",
                method,
                &["ByNamespace", "ByUser"],
            ));
        }
    }
    let rules = spec.get("rules").and_then(Value::as_array);
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        let path = format!("spec.rules[{i}]");
        let subjects = rule.get("subjects").and_then(Value::as_array);
        if subjects.is_none_or(Vec::is_empty) {
            errs.push(FieldError::required(
                format!("{path}.subjects"),
                "subjects must contain at least one value",
            ));
        }
        let has = |field: &str| {
            rule.get(field)
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        };
        if !has("resourceRules") && !has("nonResourceRules") {
            errs.push(FieldError::required(
                path,
                "at least one of resourceRules and nonResourceRules has to be non-empty",
            ));
        }
    }
    errs
}

/// The strategy of PriorityLevelConfiguration: the generic steps plus defaulting and the spec
/// rules.
pub struct PriorityLevelStrategy {
    base: Box<dyn Strategy>,
}

impl PriorityLevelStrategy {
    /// The PriorityLevelConfiguration strategy of `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        Self {
            base: kind::<PriorityLevelConfiguration>()
                .status()
                .new_strategy(flavor),
        }
    }
}

impl Strategy for PriorityLevelStrategy {
    fn tracks_generation(&self) -> bool {
        self.base.tracks_generation()
    }

    /// The v1 `SetDefaults_*` of the exempt and limited parts and of queuing.
    fn default_fields(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        if let Some(exempt) = spec.get_mut("exempt").and_then(Value::as_object_mut) {
            exempt.entry("nominalConcurrencyShares").or_insert(json!(0));
            exempt.entry("lendablePercent").or_insert(json!(0));
        }
        let Some(limited) = spec.get_mut("limited").and_then(Value::as_object_mut) else {
            return;
        };
        let shares = limited
            .entry("nominalConcurrencyShares")
            .or_insert(json!(DEFAULT_NOMINAL_SHARES));
        if shares.is_null() {
            *shares = json!(DEFAULT_NOMINAL_SHARES);
        }
        limited.entry("lendablePercent").or_insert(json!(0));
        let queuing = limited
            .get_mut("limitResponse")
            .and_then(|r| r.get_mut("queuing"))
            .and_then(Value::as_object_mut);
        if let Some(queuing) = queuing {
            for (field, default) in [("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)] {
                let value = queuing.entry(field).or_insert(json!(0));
                if value.as_i64().is_none_or(|v| v == 0) {
                    *value = json!(default);
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_priority_level_spec(obj.get("spec").unwrap_or(&Value::Null))
    }
}

fn validate_priority_level_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = spec.get("type").and_then(Value::as_str).unwrap_or_default();
    let limited = spec.get("limited").filter(|l| !l.is_null());
    let exempt = spec.get("exempt").filter(|e| !e.is_null());
    match kind {
        "Exempt" => {
            if limited.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.limited",
                    "must be nil if the type is not Limited",
                ));
            }
            if let Some(exempt) = exempt {
                errs.extend(validate_shares_and_lending(exempt, "spec.exempt"));
            }
        }
        "Limited" => {
            if exempt.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.exempt",
                    "must be nil if the type is Limited",
                ));
            }
            match limited {
                None => errs.push(FieldError::required(
                    "spec.limited",
                    "must not be empty when type is Limited",
                )),
                Some(limited) => errs.extend(validate_limited(limited)),
            }
        }
        other => errs.push(FieldError::not_supported(
            "spec.type",
            other,
            &["Exempt", "Limited"],
        )),
    }
    errs
}

fn validate_shares_and_lending(part: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let int = |field| part.get(field).and_then(Value::as_i64);
    if let Some(shares) = int("nominalConcurrencyShares")
        && shares < 0
    {
        errs.push(FieldError::invalid(
            format!("{path}.nominalConcurrencyShares"),
            shares,
            "must be a non-negative integer",
        ));
    }
    if let Some(lendable) = int("lendablePercent")
        && !(0..=100).contains(&lendable)
    {
        errs.push(FieldError::invalid(
            format!("{path}.lendablePercent"),
            lendable,
            "must be between 0 and 100, inclusive",
        ));
    }
    errs
}

fn validate_limited(limited: &Value) -> Vec<FieldError> {
    let mut errs = validate_shares_and_lending(limited, "spec.limited");
    if let Some(borrowing) = limited.get("borrowingLimitPercent").and_then(Value::as_i64)
        && borrowing < 0
    {
        errs.push(FieldError::invalid(
            "spec.limited.borrowingLimitPercent",
            borrowing,
            "if specified, must be a non-negative integer",
        ));
    }
    let response = limited.get("limitResponse").unwrap_or(&Value::Null);
    let queuing = response.get("queuing").filter(|q| !q.is_null());
    match response
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "Reject" => {
            if queuing.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.limited.limitResponse.queuing",
                    "must be nil if limited.limitResponse.type is not Limited",
                ));
            }
        }
        "Queue" => match queuing {
            None => errs.push(FieldError::required(
                "spec.limited.limitResponse.queuing",
                "must not be empty if limited.limitResponse.type is Limited",
            )),
            Some(queuing) => errs.extend(validate_queuing(queuing)),
        },
        other => errs.push(FieldError::not_supported(
            "spec.limited.limitResponse.type",
            other,
            &["Queue", "Reject"],
        )),
    }
    errs
}

fn validate_queuing(queuing: &Value) -> Vec<FieldError> {
    const PATH: &str = "spec.limited.limitResponse.queuing";
    let mut errs = Vec::new();
    let int = |field| queuing.get(field).and_then(Value::as_i64).unwrap_or(0);
    let (length, queues, hand) = (int("queueLengthLimit"), int("queues"), int("handSize"));
    if length <= 0 {
        errs.push(FieldError::invalid(
            format!("{PATH}.queueLengthLimit"),
            length,
            "must be positive",
        ));
    }
    if queues <= 0 {
        errs.push(FieldError::invalid(
            format!("{PATH}.queues"),
            queues,
            "must be positive",
        ));
    } else if queues > MAX_QUEUES {
        errs.push(FieldError::invalid(
            format!("{PATH}.queues"),
            queues,
            format!("must not be greater than {MAX_QUEUES}"),
        ));
    }
    if hand <= 0 {
        errs.push(FieldError::invalid(
            format!("{PATH}.handSize"),
            hand,
            "must be positive",
        ));
    } else if hand > queues {
        errs.push(FieldError::invalid(
            format!("{PATH}.handSize"),
            hand,
            format!("should not be greater than queues ({queues})"),
        ));
    } else if entropy_bits(queues, hand) > MAX_HASH_BITS {
        errs.push(FieldError::invalid(
            format!("{PATH}.handSize"),
            hand,
            format!(
                "required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}"
            ),
        ));
    }
    errs
}

/// The bits of hash a deal of `hand` cards from `deck` consumes (the log2 of the falling
/// factorial, rounded up).
fn entropy_bits(deck: i64, hand: i64) -> u32 {
    let bits: f64 = (0..hand).map(|i| ((deck - i) as f64).log2()).sum();
    bits.ceil() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    // R-VER-098
    #[test]
    fn nominal_shares_default_to_30_only_when_unset() {
        let strategy = PriorityLevelStrategy::new(Flavor::Kubernetes);
        let mut unset = json!({"spec": {"type": "Limited", "limited": {
            "limitResponse": {"type": "Queue", "queuing": {}}}}});
        strategy.default_fields(&mut unset);
        assert_eq!(unset["spec"]["limited"]["nominalConcurrencyShares"], 30);
        assert_eq!(unset["spec"]["limited"]["lendablePercent"], 0);
        let queuing = &unset["spec"]["limited"]["limitResponse"]["queuing"];
        assert_eq!(
            queuing,
            &json!({"handSize": 8, "queues": 64, "queueLengthLimit": 50})
        );
        let mut zero = json!({"spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 0, "lendablePercent": 10,
            "limitResponse": {"type": "Reject"}}}});
        strategy.default_fields(&mut zero);
        assert_eq!(zero["spec"]["limited"]["nominalConcurrencyShares"], 0);
        assert_eq!(zero["spec"]["limited"]["lendablePercent"], 10);
        let mut exempt = json!({"spec": {"type": "Exempt", "exempt": {}}});
        strategy.default_fields(&mut exempt);
        assert_eq!(
            exempt["spec"]["exempt"],
            json!({"nominalConcurrencyShares": 0, "lendablePercent": 0})
        );
        assert!(strategy.validate(&zero).is_empty());
        assert!(strategy.validate(&unset).is_empty());
    }

    #[test]
    fn priority_level_rules() {
        let strategy = PriorityLevelStrategy::new(Flavor::Kubernetes);
        let spec = json!({"spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": -1, "lendablePercent": 101,
            "limitResponse": {"type": "Queue", "queuing": {
                "queues": 7, "handSize": 8, "queueLengthLimit": 0}}}}});
        assert_eq!(
            rendered(strategy.validate(&spec)),
            vec![
                "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
                "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
                "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: 0: must be positive",
                "spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (7)",
            ]
        );
        let missing = json!({"spec": {"type": "Limited"}});
        assert_eq!(
            rendered(strategy.validate(&missing)),
            vec!["spec.limited: Required value: must not be empty when type is Limited"]
        );
    }

    #[test]
    fn flow_schema_precedence_defaults_and_rules() {
        let strategy = FlowSchemaStrategy::new(Flavor::Kubernetes);
        let mut fs = json!({"spec": {"priorityLevelConfiguration": {"name": "x"},
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "g"}}]}]}});
        strategy.default_fields(&mut fs);
        assert_eq!(fs["spec"]["matchingPrecedence"], 1000);
        assert_eq!(
            rendered(strategy.validate(&fs)),
            vec![
                "spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty"
            ]
        );
        let far = json!({"spec": {"priorityLevelConfiguration": {"name": "x"},
            "matchingPrecedence": 10001}});
        assert_eq!(
            rendered(strategy.validate(&far)),
            vec![
                "spec.matchingPrecedence: Invalid value: 10001: must be between 1 and 10000, inclusive"
            ]
        );
    }

    #[test]
    fn entropy_of_deals() {
        assert_eq!(entropy_bits(64, 6), 36);
        assert!(entropy_bits(10_000_000, 6) > MAX_HASH_BITS);
    }
}

//! Rules every controller with a pod template shares (Deployment, ReplicaSet, StatefulSet,
//! DaemonSet, Job, ReplicationController): the selector is required, valid, not empty,
//! matches the template's labels and, once set, may not change; the template is a valid pod
//! template with the kind's restart policies; the replica counters of the status; and the
//! int-or-percent fields of rolling updates.

use serde_json::Map;
use serde_json::Value;

use super::fields::immutable;
use super::fields::str_at;
use super::pod_spec::validate_pod_spec;
use crate::validation::FieldError;
use crate::validation::label_selector;
use crate::validation::validate_label_selector;
use crate::validation::validate_labels;

/// The selector at `/spec/selector`: required, valid, and not empty (`empty_message` is the
/// kind's wording of that rule).
pub fn validate_selector(obj: &Value, empty_message: &str) -> Vec<FieldError> {
    let Some(selector) = obj.pointer("/spec/selector").filter(|s| !s.is_null()) else {
        return vec![FieldError::required("spec.selector", "")];
    };
    let mut errs = validate_label_selector(Some(selector), "spec.selector");
    if label_selector::is_empty(selector) {
        errs.push(FieldError::invalid(
            "spec.selector",
            selector.clone(),
            empty_message,
        ));
    }
    errs
}

/// The pod template at `/spec/template` (path `spec.template`): its labels, its pod spec,
/// a restart policy among `restart_policies`, and a match with the selector (when there is a
/// non-empty one).
pub fn validate_template(obj: &Value, restart_policies: &[&str]) -> Vec<FieldError> {
    let Some(template) = obj.pointer("/spec/template").filter(|t| t.is_object()) else {
        return vec![FieldError::required("spec.template", "")];
    };
    let mut errs = template_matches_selector(obj.pointer("/spec/selector"), template);
    errs.extend(validate_template_at(
        template,
        "spec.template",
        restart_policies,
    ));
    errs
}

/// `spec.template.metadata.labels` against a `metav1.LabelSelector`.
fn template_matches_selector(selector: Option<&Value>, template: &Value) -> Vec<FieldError> {
    let Some(selector) = selector.filter(|s| s.is_object() && !label_selector::is_empty(s)) else {
        return Vec::new();
    };
    let labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if label_selector::matches(selector, &labels) {
        Vec::new()
    } else {
        vec![mismatch(labels)]
    }
}

/// `spec.selector` may not change (Deployment, ReplicaSet, DaemonSet).
pub fn immutable_selector(new: &Value, old: &Value) -> Vec<FieldError> {
    immutable(new, old, "/spec/selector", "spec.selector")
        .into_iter()
        .collect()
}

/// upstream's "`selector` does not match template `labels`".
pub fn mismatch(labels: Map<String, Value>) -> FieldError {
    FieldError::invalid(
        "spec.template.metadata.labels",
        Value::Object(labels),
        "`selector` does not match template `labels`",
    )
}

/// A pod template at `path`: labels, pod spec, and a restart policy among `allowed` (an
/// invalid value is reported once, by the pod spec rules).
pub fn validate_template_at(template: &Value, path: &str, allowed: &[&str]) -> Vec<FieldError> {
    let mut errs = validate_labels(
        template.pointer("/metadata/labels"),
        &format!("{path}.metadata.labels"),
    );
    let spec = template.get("spec").cloned().unwrap_or(Value::Null);
    let spec_path = format!("{path}.spec");
    errs.extend(validate_pod_spec(&spec, &spec_path));
    let policy = str_at(&spec, "/restartPolicy");
    let known = super::pod_spec::RESTART_POLICIES.contains(&policy);
    if known && !allowed.contains(&policy) {
        errs.push(FieldError::not_supported(
            format!("{spec_path}.restartPolicy"),
            policy,
            allowed,
        ));
    }
    errs
}

/// A ReplicaSet-style template may not set `activeDeadlineSeconds` (Deployment,
/// ReplicaSet, DaemonSet).
pub fn no_active_deadline(obj: &Value) -> Option<FieldError> {
    let v = obj.pointer("/spec/template/spec/activeDeadlineSeconds")?;
    Some(FieldError::invalid(
        "spec.template.spec.activeDeadlineSeconds",
        v.clone(),
        "must not be specified",
    ))
}

/// A template of a kind whose pods run on (StatefulSet, ReplicationController) may not set
/// `activeDeadlineSeconds`; `kind` names the kind in upstream's wording.
pub fn active_deadline_not_supported(obj: &Value, kind: &str) -> Option<FieldError> {
    obj.pointer("/spec/template/spec/activeDeadlineSeconds")?;
    Some(FieldError::forbidden(
        "spec.template.spec.activeDeadlineSeconds",
        format!("activeDeadlineSeconds in {kind} is not Supported"),
    ))
}

/// The status counters `fields` are non-negative and each of `at_most` (counter, bound) is at
/// most its bound, worded `cannot be greater than <message>`.
pub fn validate_status_counts(
    obj: &Value,
    fields: &[&str],
    at_most: &[(&str, &str, &str)],
) -> Vec<FieldError> {
    let mut errs = super::fields::nonnegative(obj, "/status", "status", fields);
    for (field, bound, message) in at_most {
        let value = super::fields::int_at(obj, &format!("/status/{field}")).unwrap_or(0);
        let limit = super::fields::int_at(obj, &format!("/status/{bound}")).unwrap_or(0);
        if value > limit {
            errs.push(FieldError::invalid(
                format!("status.{field}"),
                value,
                format!("cannot be greater than {message}"),
            ));
        }
    }
    errs
}

/// The replica counters of a replicated workload's status: `fields` are non-negative, each
/// of `bounded` is at most `status.replicas` (worded `cannot be greater than
/// <replicas_message>`), and `availableReplicas` at most `readyReplicas` (worded with
/// `ready_message`), in that order.
pub fn validate_replica_counts(
    obj: &Value,
    fields: &[&str],
    bounded: &[&str],
    replicas_message: &str,
    ready_message: &str,
) -> Vec<FieldError> {
    let at_most: Vec<(&str, &str, &str)> = bounded
        .iter()
        .map(|field| (*field, "replicas", replicas_message))
        .collect();
    let mut errs = validate_status_counts(obj, fields, &at_most);
    errs.extend(validate_status_counts(
        obj,
        &[],
        &[("availableReplicas", "readyReplicas", ready_message)],
    ));
    errs
}

/// The status counters of a ReplicaSet or ReplicationController (upstream's
/// `ValidateReplicaSetStatus` and `ValidateReplicationControllerStatus` are the same).
pub fn validate_replica_status(obj: &Value) -> Vec<FieldError> {
    validate_replica_counts(
        obj,
        &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
        ],
        &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
        "the number of replicas",
        "readyReplicas",
    )
}

/// upstream's `ValidatePositiveIntOrPercent` (and, with `at_most_100`, `IsNotMoreThan100Percent`)
/// of the int-or-string at `pointer`; returns the errors and whether the value is zero.
fn int_or_percent(
    obj: &Value,
    pointer: &str,
    path: &str,
    at_most_100: bool,
) -> (Vec<FieldError>, bool) {
    match obj.pointer(pointer) {
        Some(Value::Number(n)) => {
            let v = n.as_i64().unwrap_or(0);
            let errs = if v < 0 {
                vec![FieldError::invalid(
                    path,
                    v,
                    "must be greater than or equal to 0",
                )]
            } else {
                Vec::new()
            };
            (errs, v == 0)
        }
        Some(Value::String(s)) => {
            let Some(pct) = s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) else {
                return (
                    vec![FieldError::invalid(
                        path,
                        s.as_str(),
                        "must be an integer or percentage (e.g '5%')",
                    )],
                    false,
                );
            };
            let mut errs = Vec::new();
            if pct < 0 {
                errs.push(FieldError::invalid(
                    path,
                    s.as_str(),
                    "must be greater than or equal to 0",
                ));
            }
            if at_most_100 && pct > 100 {
                errs.push(FieldError::invalid(
                    path,
                    s.as_str(),
                    "must not be greater than 100%",
                ));
            }
            (errs, pct == 0)
        }
        _ => (Vec::new(), false),
    }
}

/// `maxUnavailable` (at most 100%) and `maxSurge` (at most 100% with `surge_at_most_100`)
/// of the rolling update at `pointer` (path `path`) as int-or-percent: their errors in that
/// order, and whether each is zero.
pub fn unavailable_and_surge(
    obj: &Value,
    pointer: &str,
    path: &str,
    surge_at_most_100: bool,
) -> (Vec<FieldError>, bool, bool) {
    let (mut errs, unavailable_zero) = int_or_percent(
        obj,
        &format!("{pointer}/maxUnavailable"),
        &format!("{path}.maxUnavailable"),
        true,
    );
    let (surge_errs, surge_zero) = int_or_percent(
        obj,
        &format!("{pointer}/maxSurge"),
        &format!("{path}.maxSurge"),
        surge_at_most_100,
    );
    errs.extend(surge_errs);
    (errs, unavailable_zero, surge_zero)
}

/// The rolling update at `pointer` (path `path`): `maxUnavailable` and `maxSurge` as
/// int-or-percent, and not both zero.
pub fn validate_rolling_update(obj: &Value, pointer: &str, path: &str) -> Vec<FieldError> {
    let (mut errs, unavailable_zero, surge_zero) = unavailable_and_surge(obj, pointer, path, false);
    if unavailable_zero && surge_zero {
        let value = obj
            .pointer(&format!("{pointer}/maxUnavailable"))
            .cloned()
            .unwrap_or(Value::Null);
        errs.push(FieldError::invalid(
            format!("{path}.maxUnavailable"),
            value,
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(selector: Value, labels: Value, restart: &str) -> Value {
        json!({"spec": {
            "selector": selector,
            "template": {"metadata": {"labels": labels}, "spec": {
                "restartPolicy": restart, "dnsPolicy": "ClusterFirst",
                "containers": [{"name": "c", "image": "i", "imagePullPolicy": "Always"}]
            }}
        }})
    }

    fn strings(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    // R-VER-151
    #[test]
    fn selector_is_required_valid_and_not_empty() {
        let o = json!({"spec": {}});
        assert_eq!(
            strings(validate_selector(&o, "x")),
            ["spec.selector: Required value"]
        );
        let o = obj(json!({}), json!({"a": "b"}), "Always");
        assert_eq!(
            strings(validate_selector(
                &o,
                "empty selector is invalid for deployment"
            )),
            ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"]
        );
        let o = obj(json!({"matchLabels": {"a": "b c"}}), json!({}), "Always");
        assert_eq!(validate_selector(&o, "x").len(), 1);
    }

    #[test]
    fn template_labels_must_match_the_selector() {
        let o = obj(
            json!({"matchLabels": {"app": "x"}}),
            json!({"app": "y"}),
            "Always",
        );
        assert_eq!(
            strings(validate_template(&o, &["Always"])),
            [
                r#"spec.template.metadata.labels: Invalid value: {"app":"y"}: `selector` does not match template `labels`"#
            ]
        );
        let o = obj(
            json!({"matchLabels": {"app": "x"}}),
            json!({"app": "x"}),
            "Always",
        );
        assert!(validate_template(&o, &["Always"]).is_empty());
    }

    #[test]
    fn restart_policy_is_limited_per_kind() {
        let o = obj(
            json!({"matchLabels": {"app": "x"}}),
            json!({"app": "x"}),
            "Never",
        );
        assert_eq!(
            strings(validate_template(&o, &["Always"])),
            [
                r#"spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always""#
            ]
        );
        let o = json!({"spec": {}});
        assert_eq!(
            strings(validate_template(&o, &["Always"])),
            ["spec.template: Required value"]
        );
    }

    #[test]
    fn rolling_update_numbers() {
        let o = json!({"r": {"maxUnavailable": "110%", "maxSurge": -1}});
        assert_eq!(
            strings(validate_rolling_update(&o, "/r", "r")),
            [
                r#"r.maxUnavailable: Invalid value: "110%": must not be greater than 100%"#,
                "r.maxSurge: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
        let o = json!({"r": {"maxUnavailable": 0, "maxSurge": "0%"}});
        assert_eq!(
            strings(validate_rolling_update(&o, "/r", "r")),
            ["r.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"]
        );
        let o = json!({"r": {"maxUnavailable": "x", "maxSurge": 1}});
        assert_eq!(
            strings(validate_rolling_update(&o, "/r", "r")),
            [
                r#"r.maxUnavailable: Invalid value: "x": must be an integer or percentage (e.g '5%')"#
            ]
        );
    }
}

//! Pod: the pod spec defaults and rules, the status a new pod starts with (`Pending` and
//! its QoS class), and upstream's update rule (only images, a lower activeDeadlineSeconds,
//! added tolerations, removed scheduling gates and a negative grace period turned to 1 may
//! change), and graceful deletion (the grace period a delete gives a pod).

use serde_json::Value;
use serde_json::json;

use super::defaults::default_pod_spec;
use super::fields::array_at;
use super::fields::int_at;
use super::pod_spec::validate_pod_spec;
use crate::registry::Strategy;
use crate::request::FieldLabels;
use crate::request::METADATA_NAME;
use crate::request::METADATA_NAMESPACE;
use crate::request::SelectableField;
use crate::validation::FieldError;
use crate::validation::parse_quantity_nanos;

/// upstream's list of the pod spec fields an update may change.
const UPDATE_FORBIDDEN: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

const fn field(label: &'static str, pointer: &'static [&'static str]) -> SelectableField {
    SelectableField {
        label,
        pointers: pointer,
    }
}

/// The string fields Kubernetes' core/v1 Pod field label conversion accepts (a node agent
/// lists its pods by `spec.nodeName`, a scheduler the unscheduled ones by `spec.nodeName=`).
const SELECTABLE: &[SelectableField] = &[
    METADATA_NAME,
    METADATA_NAMESPACE,
    field("spec.nodeName", &["/spec/nodeName"]),
    field("spec.restartPolicy", &["/spec/restartPolicy"]),
    field("spec.schedulerName", &["/spec/schedulerName"]),
    field("spec.serviceAccountName", &["/spec/serviceAccountName"]),
    field("status.phase", &["/status/phase"]),
    field("status.podIP", &["/status/podIP"]),
    field("status.nominatedNodeName", &["/status/nominatedNodeName"]),
];

/// The strategy of `v1` Pod.
#[derive(Debug, Default)]
pub struct PodStrategy;

impl Strategy for PodStrategy {
    fn field_labels(&self) -> FieldLabels {
        FieldLabels::Only(SELECTABLE)
    }

    fn default_fields(&self, obj: &mut Value) {
        default_pod_spec(obj, "/spec");
    }

    /// upstream's `PrepareForCreate`: the status is `{phase: Pending, qosClass}`.
    fn prepare_for_create(&self, obj: &mut Value) {
        let qos = qos_class(obj.get("spec").unwrap_or(&Value::Null));
        if let Value::Object(m) = obj {
            m.insert(
                "status".to_owned(),
                json!({"phase": "Pending", "qosClass": qos}),
            );
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_pod_spec(obj.get("spec").unwrap_or(&Value::Null), "spec")
    }

    /// Kubernetes' `CheckGracefulDelete` of pods: the requested period, else the pod's
    /// `terminationGracePeriodSeconds` (0 when unset); 0 for a pod never bound to a node or
    /// already terminated; negative periods count as 1 second.
    fn graceful_period(&self, obj: &Value, requested: Option<i64>) -> Option<i64> {
        let mut period = requested.unwrap_or_else(|| {
            obj.pointer("/spec/terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0)
        });
        let unbound = obj
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        let phase = obj.pointer("/status/phase").and_then(Value::as_str);
        if unbound || matches!(phase, Some("Failed" | "Succeeded")) {
            period = 0;
        }
        Some(if period < 0 { 1 } else { period })
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = active_deadline_update(new, old);
        let (Some(new_spec), Some(old_spec)) = (new.get("spec"), old.get("spec")) else {
            return errs;
        };
        if &munged(new_spec, old_spec) != old_spec {
            errs.push(FieldError::forbidden("spec", UPDATE_FORBIDDEN));
        }
        errs
    }
}

/// The new spec with every change upstream allows put back to the old value: if it then
/// differs from the old spec, something else changed.
fn munged(new: &Value, old: &Value) -> Value {
    let mut m = new.clone();
    for list in ["containers", "initContainers"] {
        let old_list = array_at(old, &format!("/{list}"));
        if let Some(Value::Array(cs)) = m.get_mut(list)
            && cs.len() == old_list.len()
        {
            for (c, o) in cs.iter_mut().zip(old_list) {
                if let (Value::Object(c), Some(image)) = (c, o.get("image")) {
                    c.insert("image".to_owned(), image.clone());
                }
            }
        }
    }
    let Value::Object(spec) = &mut m else {
        return m;
    };
    let mut restore = |field: &str, allowed: bool| {
        if allowed {
            match old.get(field) {
                Some(v) => spec.insert(field.to_owned(), v.clone()),
                None => spec.remove(field),
            };
        }
    };
    restore("activeDeadlineSeconds", true);
    let old_tolerations = array_at(old, "/tolerations");
    let new_tolerations = array_at(new, "/tolerations");
    restore(
        "tolerations",
        old_tolerations.iter().all(|t| new_tolerations.contains(t)),
    );
    let old_gates = array_at(old, "/schedulingGates");
    restore(
        "schedulingGates",
        array_at(new, "/schedulingGates")
            .iter()
            .all(|g| old_gates.contains(g)),
    );
    let old_grace = int_at(old, "/terminationGracePeriodSeconds");
    restore(
        "terminationGracePeriodSeconds",
        old_grace.is_some_and(|g| g < 0)
            && int_at(new, "/terminationGracePeriodSeconds") == Some(1),
    );
    m
}

/// upstream's rules for changing `spec.activeDeadlineSeconds`.
fn active_deadline_update(new: &Value, old: &Value) -> Vec<FieldError> {
    const PATH: &str = "spec.activeDeadlineSeconds";
    let (n, o) = (
        int_at(new, "/spec/activeDeadlineSeconds"),
        int_at(old, "/spec/activeDeadlineSeconds"),
    );
    match (n, o) {
        (Some(n), Some(o)) if n > o => vec![FieldError::invalid(
            PATH,
            n,
            "must be less than or equal to previous value",
        )],
        (None, Some(_)) => vec![FieldError::invalid(
            PATH,
            Value::Null,
            "must not update from a positive integer to nil value",
        )],
        _ => Vec::new(),
    }
}

/// upstream's `GetPodQOS` over cpu and memory: no requests or limits at all is
/// `BestEffort`; limits for both on every container equal to the requests is
/// `Guaranteed`; anything else is `Burstable`.
pub fn qos_class(spec: &Value) -> &'static str {
    let mut any = false;
    let mut guaranteed = true;
    for list in ["initContainers", "containers"] {
        for c in array_at(spec, &format!("/{list}")) {
            for resource in ["cpu", "memory"] {
                let quantity = |kind: &str| {
                    c.pointer(&format!("/resources/{kind}/{resource}"))
                        .and_then(Value::as_str)
                        .and_then(parse_quantity_nanos)
                        .filter(|q| *q != 0)
                };
                let (request, limit) = (quantity("requests"), quantity("limits"));
                any |= request.is_some() || limit.is_some();
                if limit.is_none() || request.is_some_and(|r| Some(r) != limit) {
                    guaranteed = false;
                }
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(containers: Value) -> Value {
        let mut p = json!({"metadata": {"name": "p"}, "spec": {"containers": containers}});
        PodStrategy.default_fields(&mut p);
        p
    }

    #[test]
    fn a_new_pod_is_pending_with_its_qos_class() {
        let mut p = pod(json!([{"name": "a", "image": "i"}]));
        p["status"] = json!({"phase": "Running"});
        PodStrategy.prepare_for_create(&mut p);
        assert_eq!(
            p["status"],
            json!({"phase": "Pending", "qosClass": "BestEffort"})
        );
        let full = json!({"limits": {"cpu": "1", "memory": "1Gi"}});
        let g = pod(json!([{"name": "a", "image": "i", "resources": full}]));
        assert_eq!(qos_class(&g["spec"]), "Guaranteed");
        let b = pod(json!([{"name": "a", "image": "i", "resources": {"requests": {"cpu": "1"}}}]));
        assert_eq!(qos_class(&b["spec"]), "Burstable");
    }

    #[test]
    fn the_qos_class_compares_quantities_exactly() {
        let equal = json!({
            "requests": {"cpu": "1000m", "memory": "1Gi"},
            "limits": {"cpu": "1", "memory": "1073741824"}
        });
        let g = pod(json!([{"name": "a", "image": "i", "resources": equal}]));
        assert_eq!(qos_class(&g["spec"]), "Guaranteed");
        // Equal as floats, one apart exactly.
        let apart = json!({
            "requests": {"cpu": "9007199254740993", "memory": "1Gi"},
            "limits": {"cpu": "9007199254740992", "memory": "1Gi"}
        });
        let b = pod(json!([{"name": "a", "image": "i", "resources": apart}]));
        assert_eq!(qos_class(&b["spec"]), "Burstable");
    }

    #[test]
    fn an_update_may_change_only_what_upstream_allows() {
        let old = pod(json!([{"name": "a", "image": "nginx:1"}]));
        let mut new = old.clone();
        new["spec"]["containers"][0]["image"] = "nginx:2".into();
        new["spec"]["activeDeadlineSeconds"] = 30.into();
        new["spec"]["tolerations"] = json!([{"key": "k", "operator": "Exists"}]);
        assert!(PodStrategy.validate_update(&new, &old).is_empty());
        let mut bad = old.clone();
        bad["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80}]);
        let errs = PodStrategy.validate_update(&bad, &old);
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            format!("spec: Forbidden: {UPDATE_FORBIDDEN}")
        );
        assert!(errs[0].detail.starts_with(
            "pod updates may not change fields other than `spec.containers[*].image`,"
        ));
    }

    #[test]
    fn active_deadline_may_only_shrink() {
        let mut old = pod(json!([{"name": "a", "image": "i"}]));
        old["spec"]["activeDeadlineSeconds"] = 30.into();
        let mut new = old.clone();
        new["spec"]["activeDeadlineSeconds"] = 60.into();
        assert_eq!(
            PodStrategy.validate_update(&new, &old)[0].to_string(),
            "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"
        );
        if let Some(s) = new["spec"].as_object_mut() {
            s.remove("activeDeadlineSeconds");
        }
        assert_eq!(
            PodStrategy.validate_update(&new, &old)[0].to_string(),
            "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"
        );
    }

    #[test]
    fn tolerations_may_only_be_added_and_grace_only_fixed() {
        let mut old = pod(json!([{"name": "a", "image": "i"}]));
        old["spec"]["tolerations"] = json!([{"key": "k", "operator": "Exists"}]);
        old["spec"]["terminationGracePeriodSeconds"] = (-1).into();
        let mut new = old.clone();
        new["spec"]["tolerations"] = json!([]);
        assert_eq!(PodStrategy.validate_update(&new, &old).len(), 1);
        let mut new = old.clone();
        new["spec"]["terminationGracePeriodSeconds"] = 1.into();
        assert!(PodStrategy.validate_update(&new, &old).is_empty());
        new["spec"]["terminationGracePeriodSeconds"] = 5.into();
        assert_eq!(PodStrategy.validate_update(&new, &old).len(), 1);
    }
}

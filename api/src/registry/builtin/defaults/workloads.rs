//! `SetDefaults_*` of the workload kinds (apps/v1, batch/v1, core/v1 ReplicationController):
//! replicas, update strategies, history limits, deadlines, Job counts and modes, CronJob
//! policies; each also defaults its pod template.

use serde_json::Value;
use serde_json::json;

use super::pod::default_pod_template;
use crate::registry::builtin::fields::default_key;
use crate::registry::builtin::fields::object_mut;

/// apps/v1 Deployment: replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10,
/// progressDeadlineSeconds 600 (R-VER-155..157).
pub fn default_deployment(obj: &mut Value) {
    if let Some(spec) = object_mut(obj, "/spec") {
        default_key(spec, "replicas", 1.into());
        default_key(spec, "revisionHistoryLimit", 10.into());
        default_key(spec, "progressDeadlineSeconds", 600.into());
    }
    if let Some(strategy) = object_mut(obj, "/spec/strategy") {
        default_key(strategy, "type", "RollingUpdate".into());
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
            let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
            if let Value::Object(r) = rolling {
                default_key(r, "maxUnavailable", "25%".into());
                default_key(r, "maxSurge", "25%".into());
            }
        }
    }
    default_pod_template(obj, "/spec/template");
}

/// apps/v1 ReplicaSet: replicas 1.
pub fn default_replica_set(obj: &mut Value) {
    if let Some(spec) = object_mut(obj, "/spec") {
        default_key(spec, "replicas", 1.into());
    }
    default_pod_template(obj, "/spec/template");
}

/// apps/v1 StatefulSet: replicas 1, OrderedReady, RollingUpdate with partition 0
/// (R-VER-158), revisionHistoryLimit 10, PVC retention Retain/Retain.
pub fn default_stateful_set(obj: &mut Value) {
    if let Some(spec) = object_mut(obj, "/spec") {
        default_key(spec, "replicas", 1.into());
        default_key(spec, "podManagementPolicy", "OrderedReady".into());
        default_key(spec, "revisionHistoryLimit", 10.into());
        default_key(
            spec,
            "persistentVolumeClaimRetentionPolicy",
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
        );
    }
    if let Some(strategy) = object_mut(obj, "/spec/updateStrategy") {
        default_key(strategy, "type", "RollingUpdate".into());
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
            let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
            if let Value::Object(r) = rolling {
                default_key(r, "partition", 0.into());
            }
        }
    }
    default_pod_template(obj, "/spec/template");
}

/// apps/v1 DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0 (R-VER-152),
/// revisionHistoryLimit 10.
pub fn default_daemon_set(obj: &mut Value) {
    if let Some(spec) = object_mut(obj, "/spec") {
        default_key(spec, "revisionHistoryLimit", 10.into());
    }
    if let Some(strategy) = object_mut(obj, "/spec/updateStrategy") {
        default_key(strategy, "type", "RollingUpdate".into());
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
            let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
            if let Value::Object(r) = rolling {
                default_key(r, "maxUnavailable", 1.into());
                default_key(r, "maxSurge", 0.into());
            }
        }
    }
    default_pod_template(obj, "/spec/template");
}

/// batch/v1 Job: completions and parallelism 1 (both unset: both 1), backoffLimit 6 (or the
/// largest int32 with per-index limits), NonIndexed, not suspended, the replacement policy,
/// and the template's labels as the Job's when it has none.
pub fn default_job(obj: &mut Value) {
    let template_labels = obj.pointer("/spec/template/metadata/labels").cloned();
    if let Some(spec) = object_mut(obj, "/spec") {
        if !spec.contains_key("completions") && !spec.contains_key("parallelism") {
            spec.insert("completions".to_owned(), 1.into());
        }
        default_key(spec, "parallelism", 1.into());
        let backoff = if spec.contains_key("backoffLimitPerIndex") {
            i64::from(i32::MAX)
        } else {
            6
        };
        default_key(spec, "backoffLimit", backoff.into());
        default_key(spec, "completionMode", "NonIndexed".into());
        default_key(spec, "suspend", false.into());
        let replacement = if spec.contains_key("podFailurePolicy") {
            "Failed"
        } else {
            "TerminatingOrFailed"
        };
        default_key(spec, "podReplacementPolicy", replacement.into());
    }
    default_labels_from_template(obj, template_labels);
    default_pod_template(obj, "/spec/template");
}

/// batch/v1 CronJob: Allow, not suspended, history limits 3 and 1.
pub fn default_cron_job(obj: &mut Value) {
    if let Some(spec) = object_mut(obj, "/spec") {
        default_key(spec, "concurrencyPolicy", "Allow".into());
        default_key(spec, "suspend", false.into());
        default_key(spec, "successfulJobsHistoryLimit", 3.into());
        default_key(spec, "failedJobsHistoryLimit", 1.into());
    }
    default_pod_template(obj, "/spec/jobTemplate/spec/template");
}

/// core/v1 ReplicationController: replicas 1; selector and labels from the template's
/// labels when empty.
pub fn default_replication_controller(obj: &mut Value) {
    let template_labels = obj.pointer("/spec/template/metadata/labels").cloned();
    if let Some(spec) = object_mut(obj, "/spec") {
        default_key(spec, "replicas", 1.into());
        let empty = spec
            .get("selector")
            .and_then(Value::as_object)
            .is_none_or(|m| m.is_empty());
        if let (true, Some(labels)) = (empty, template_labels.clone()) {
            spec.insert("selector".to_owned(), labels);
        }
    }
    default_labels_from_template(obj, template_labels);
    default_pod_template(obj, "/spec/template");
}

/// `metadata.labels` = the template's labels, when the object has none.
fn default_labels_from_template(obj: &mut Value, template_labels: Option<Value>) {
    let Some(labels) = template_labels.filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
    else {
        return;
    };
    if let Some(meta) = object_mut(obj, "/metadata") {
        let empty = meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(|m| m.is_empty());
        if empty {
            meta.insert("labels".to_owned(), labels);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template() -> Value {
        json!({"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}})
    }

    // R-VER-155, R-VER-156, R-VER-157
    #[test]
    fn deployment_defaults() {
        let mut d = json!({"spec": {"template": template()}});
        default_deployment(&mut d);
        let s = &d["spec"];
        assert_eq!(s["replicas"], 1);
        assert_eq!(s["revisionHistoryLimit"], 10);
        assert_eq!(s["progressDeadlineSeconds"], 600);
        assert_eq!(
            s["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(s["template"]["spec"]["restartPolicy"], "Always");
        let mut r = json!({"spec": {"strategy": {"type": "Recreate"}}});
        default_deployment(&mut r);
        assert_eq!(r["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    // R-VER-152, R-VER-158
    #[test]
    fn stateful_set_and_daemon_set_default_to_rolling_updates() {
        let mut s = json!({"spec": {"template": template()}});
        default_stateful_set(&mut s);
        assert_eq!(s["spec"]["podManagementPolicy"], "OrderedReady");
        assert_eq!(
            s["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        assert_eq!(s["spec"]["replicas"], 1);
        assert_eq!(
            s["spec"]["persistentVolumeClaimRetentionPolicy"]["whenScaled"],
            "Retain"
        );
        let mut d = json!({"spec": {"template": template()}});
        default_daemon_set(&mut d);
        assert_eq!(
            d["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        );
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        let mut rs = json!({"spec": {"template": template()}});
        default_replica_set(&mut rs);
        assert_eq!(rs["spec"]["replicas"], 1);
    }

    #[test]
    fn job_and_cron_job_defaults() {
        let mut j = json!({"spec": {"template": template()}});
        default_job(&mut j);
        let s = &j["spec"];
        assert_eq!(
            (s["completions"].clone(), s["parallelism"].clone()),
            (json!(1), json!(1))
        );
        assert_eq!(s["backoffLimit"], 6);
        assert_eq!(s["completionMode"], "NonIndexed");
        assert_eq!(s["suspend"], false);
        assert_eq!(s["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(j["metadata"]["labels"], json!({"app": "a"}));
        let mut p = json!({"spec": {"parallelism": 3, "backoffLimitPerIndex": 1}});
        default_job(&mut p);
        assert!(p["spec"].get("completions").is_none());
        assert_eq!(p["spec"]["backoffLimit"], 2_147_483_647);
        let mut c = json!({"spec": {"jobTemplate": {"spec": {"template": template()}}}});
        default_cron_job(&mut c);
        assert_eq!(c["spec"]["concurrencyPolicy"], "Allow");
        assert_eq!(c["spec"]["successfulJobsHistoryLimit"], 3);
        assert_eq!(c["spec"]["failedJobsHistoryLimit"], 1);
        assert_eq!(
            c["spec"]["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"],
            "ClusterFirst"
        );
    }

    #[test]
    fn replication_controller_takes_selector_and_labels_from_its_template() {
        let mut rc = json!({"spec": {"template": template()}});
        default_replication_controller(&mut rc);
        assert_eq!(rc["spec"]["selector"], json!({"app": "a"}));
        assert_eq!(rc["metadata"]["labels"], json!({"app": "a"}));
        assert_eq!(rc["spec"]["replicas"], 1);
    }
}

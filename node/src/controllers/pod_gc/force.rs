//! How pod GC removes a pod, as kube-controller-manager's `markFailedAndDeletePod`: a pod not
//! yet Succeeded or Failed is first patched to phase Failed through the status subresource
//! (with the `DisruptionTarget` condition when its Node is gone), conditional on its uid and
//! resourceVersion; then it is deleted with grace period 0, conditional on its uid.

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use serde_json::Value;
use serde_json::json;

use super::select::PodView;
use crate::controllers::client::ControllerError;
use crate::controllers::client::InProcessClient;

/// The condition a pod of a deleted Node gets before it is removed.
pub fn node_gone_condition() -> Value {
    json!({
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "DeletionByPodGC",
        "message": "PodGC: node no longer exists",
    })
}

/// `conditions` with `condition` set in place of one of its type, or appended: the transition
/// time is `now`, kept from the old condition when its status is unchanged.
fn with_condition(conditions: &[Value], condition: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let mut condition = condition.clone();
    condition["lastTransitionTime"] = json!(now.to_rfc3339_opts(SecondsFormat::Secs, true));
    let mut updated = conditions.to_vec();
    match updated.iter_mut().find(|c| c["type"] == condition["type"]) {
        Some(old) => {
            if old["status"] == condition["status"] && !old["lastTransitionTime"].is_null() {
                condition["lastTransitionTime"] = old["lastTransitionTime"].clone();
            }
            *old = condition;
        }
        None => updated.push(condition),
    }
    updated
}

/// The merge patch that marks `pod` Failed, with `condition` if given.
fn failed_patch(pod: &PodView, condition: Option<&Value>, now: DateTime<Utc>) -> Value {
    let mut patch = json!({
        "metadata": {"uid": pod.uid, "resourceVersion": pod.resource_version},
        "status": {"phase": "Failed"},
    });
    if let Some(condition) = condition {
        patch["status"]["conditions"] = json!(with_condition(&pod.conditions, condition, now));
    }
    patch
}

/// Marks `pod` Failed (with `condition`) unless it has finished, then deletes it with grace
/// period 0; a pod already gone is fine.
pub async fn mark_failed_and_delete(
    client: &InProcessClient,
    pod: &PodView,
    condition: Option<&Value>,
    now: DateTime<Utc>,
) -> Result<(), ControllerError> {
    let path = format!("/api/v1/namespaces/{}/pods/{}", pod.namespace, pod.name);
    tracing::info!(namespace = %pod.namespace, pod = %pod.name, "pod GC is force deleting a pod");
    if !pod.finished() {
        let patch = failed_patch(pod, condition, now);
        if client
            .merge_patch(&format!("{path}/status"), &patch)
            .await?
            .is_none()
        {
            return Ok(());
        }
    }
    let options = json!({
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": pod.uid},
    });
    client.delete_with(&path, &options).await.map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The patch is conditional on uid and resourceVersion; the condition replaces one of its
    // type and keeps its transition time when the status is unchanged.
    #[test]
    fn the_failed_patch_sets_the_condition_in_place() {
        let now = DateTime::parse_from_rfc3339("2026-02-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let object = json!({
            "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
            "spec": {"nodeName": "n1"},
            "status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "DisruptionTarget", "status": "True",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"},
            ]},
        });
        let pod = PodView::of(&object).unwrap();
        let patch = failed_patch(&pod, Some(&node_gone_condition()), now);
        assert_eq!(patch["metadata"]["uid"], "u1");
        assert_eq!(patch["metadata"]["resourceVersion"], "7");
        assert_eq!(patch["status"]["phase"], "Failed");
        let conditions = patch["status"]["conditions"].as_array().unwrap();
        assert_eq!(conditions.len(), 2);
        assert_eq!(conditions[1]["reason"], "DeletionByPodGC");
        assert_eq!(conditions[1]["lastTransitionTime"], "2026-01-01T00:00:00Z");

        let fresh = with_condition(&[], &node_gone_condition(), now);
        assert_eq!(fresh[0]["lastTransitionTime"], "2026-02-01T00:00:00Z");
        assert!(failed_patch(&pod, None, now)["status"]["conditions"].is_null());
    }
}

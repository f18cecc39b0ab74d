//! `pods/<name>/eviction`: POST of a `policy/v1` Eviction deletes the pod if its
//! PodDisruptionBudget allows it (upstream's `EvictionREST`, spec R-RES-008).
//!
//! Pods that are Pending, Succeeded, Failed or already being deleted go at once. Otherwise
//! the budgets of the pod's namespace whose (non-empty) selector selects it decide: none,
//! the pod goes; more than one, 500 as upstream; one, its healthy pods are counted live
//! ([`Budget`]) and, when a disruption is allowed, its status records it (one fewer allowed,
//! the pod under `disruptedPods`) by compare-and-swap before the pod is deleted with the
//! Eviction's DeleteOptions (read by the handler); when none is allowed, 429. A dry run
//! checks everything and writes nothing.

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use k8s_openapi::api::policy::v1::Eviction;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::Parent;
use super::disruption::Budget;
use super::disruption::is_ready;
use super::parent::stored;
use crate::error::ApiError;
use crate::registry::DeleteOptions;
use crate::registry::Store;
use crate::registry::WriteOptions;
use crate::request::ListOptions;
use crate::storage::Revision;
use crate::storage::Storage;
use crate::validation::label_selector;

/// Upstream's refusal of an eviction a budget does not allow.
const REFUSED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";
/// Upstream's answer for a pod under several budgets.
const SEVERAL_BUDGETS: &str = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";
/// Attempts of a budget update that races another eviction.
const RETRY_ATTEMPTS: usize = 5;

/// The items of a list body.
async fn items(
    storage: &dyn Storage,
    store: &Store,
    namespace: &str,
) -> Result<Vec<Value>, ApiError> {
    let listed = store
        .list(storage, Some(namespace), &ListOptions::default())
        .await?;
    let list = stored(&listed)?;
    Ok(match list.get("items") {
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    })
}

/// Whether the budget `pdb` selects `pod`: an empty or absent selector selects nothing here
/// (upstream: "it should match nothing, not everything").
fn selects(pdb: &Value, pod: &Value) -> bool {
    let Some(selector) = pdb.pointer("/spec/selector").filter(|s| s.is_object()) else {
        return false;
    };
    let empty = Map::new();
    let labels = pod
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    !label_selector::is_empty(selector) && label_selector::matches(selector, labels)
}

/// Upstream's `canIgnorePDB`: pods that are not running, or already going, need no budget.
fn can_ignore_budget(pod: &Value) -> bool {
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default();
    matches!(phase, "Succeeded" | "Failed" | "Pending")
        || pod.pointer("/metadata/deletionTimestamp").is_some()
}

fn refused(pdb: &str, budget: Budget) -> ApiError {
    ApiError::TooManyRequests {
        message: REFUSED.to_owned(),
        causes: vec![(
            "DisruptionBudget".to_owned(),
            format!(
                "The disruption budget {pdb} needs {} healthy pods and has {} currently",
                budget.desired_healthy, budget.current_healthy
            ),
        )],
    }
}

/// Checks that `eviction` is about the pod `parent` (400 otherwise), before its
/// DeleteOptions are read.
pub(crate) fn check_name(parent: &Parent<'_>, eviction: &Eviction) -> Result<(), ApiError> {
    if eviction.metadata.name.as_deref().unwrap_or_default() != parent.name {
        return Err(ApiError::BadRequest(
            "name in URL does not match name in Eviction object".to_owned(),
        ));
    }
    Ok(())
}

/// Evicts the pod `parent` at `now`, deleting it with `options` when its budget allows:
/// 404 when the pod is absent, 429 when its budget allows no disruption, 500 under several
/// budgets; the preconditions give 409 as on a delete. Only `write.dry_run` is used.
pub(crate) async fn evict(
    parent: &Parent<'_>,
    options: &DeleteOptions,
    now: DateTime<Utc>,
    write: WriteOptions,
) -> Result<(), ApiError> {
    let write = WriteOptions {
        dry_run: write.dry_run,
        admitted: write.admitted,
        ..WriteOptions::default()
    };
    let (storage, pods, ns, name) = (parent.storage, parent.store, parent.namespace, parent.name);
    let delete = || pods.delete(storage, ns, name, options, now, write.clone());
    let mut attempt = 0;
    loop {
        attempt += 1;
        let pod = parent.read().await?;
        if can_ignore_budget(&pod) {
            return delete().await.map(drop);
        }
        let budgets = parent
            .registry
            .builtin_store("policy", "v1", "poddisruptionbudgets")
            .ok_or(ApiError::UnknownResource)?;
        let mut matching: Vec<Value> = items(storage, budgets, ns)
            .await?
            .into_iter()
            .filter(|pdb| selects(pdb, &pod))
            .collect();
        if matching.len() > 1 {
            return Err(ApiError::StatusFailure {
                code: 500,
                message: SEVERAL_BUDGETS.to_owned(),
            });
        }
        let Some(pdb) = matching.pop() else {
            return delete().await.map(drop);
        };
        let pdb_name = pdb
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let selected: Vec<Value> = items(storage, pods, ns)
            .await?
            .into_iter()
            .filter(|p| selects(&pdb, p))
            .collect();
        let budget = Budget::of(&pdb, &selected).map_err(ApiError::Internal)?;
        let allowed = budget.disruptions_allowed();
        // An unready pod does not count as healthy: taking it leaves the budget as it is.
        if !is_ready(&pod)
            && budget.current_healthy >= budget.desired_healthy
            && budget.desired_healthy > 0
        {
            return delete().await.map(drop);
        }
        if allowed == 0 {
            return Err(refused(&pdb_name, budget));
        }
        let revision: Option<Revision> = pdb
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .and_then(|rv| rv.parse().ok());
        let generation = pdb
            .pointer("/metadata/generation")
            .cloned()
            .unwrap_or(json!(0));
        let now = now.to_rfc3339_opts(SecondsFormat::Secs, true);
        let record = |obj: &mut Value| -> Result<(), ApiError> {
            let status = obj
                .as_object_mut()
                .map(|m| m.entry("status").or_insert_with(|| json!({})))
                .and_then(Value::as_object_mut)
                .ok_or_else(|| ApiError::Internal("the stored budget is not an object".into()))?;
            status.insert("observedGeneration".to_owned(), generation.clone());
            status.insert("expectedPods".to_owned(), budget.expected.into());
            status.insert("desiredHealthy".to_owned(), budget.desired_healthy.into());
            status.insert("currentHealthy".to_owned(), budget.current_healthy.into());
            status.insert("disruptionsAllowed".to_owned(), (allowed - 1).into());
            let disrupted = status.entry("disruptedPods").or_insert_with(|| json!({}));
            if let Value::Object(m) = disrupted {
                m.insert(name.to_owned(), now.clone().into());
            }
            Ok(())
        };
        match budgets
            .guaranteed_update(storage, ns, &pdb_name, revision, write.dry_run, record)
            .await
        {
            Ok(_) => return delete().await.map(drop),
            Err(ApiError::Conflict { .. }) if attempt < RETRY_ATTEMPTS => continue,
            Err(ApiError::Conflict { .. }) => {
                return Err(ApiError::TooManyRequests {
                    message: REFUSED.to_owned(),
                    causes: vec![(
                        "DisruptionBudget".to_owned(),
                        format!(
                            "The disruption budget {pdb_name} is still being processed by the server."
                        ),
                    )],
                });
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_select_by_non_empty_selectors_only() {
        let pod = json!({"metadata": {"labels": {"app": "a"}}});
        let pdb = |selector: Value| json!({"spec": {"selector": selector}});
        assert!(selects(&pdb(json!({"matchLabels": {"app": "a"}})), &pod));
        assert!(!selects(&pdb(json!({"matchLabels": {"app": "b"}})), &pod));
        assert!(!selects(&pdb(json!({})), &pod));
        assert!(!selects(&json!({"spec": {}}), &pod));
        assert!(can_ignore_budget(&json!({"status": {"phase": "Pending"}})));
        assert!(!can_ignore_budget(&json!({"status": {"phase": "Running"}})));
        assert!(!can_ignore_budget(&json!({})));
    }
}

//! The cleanup of a deleted CRD (apiextensions-apiserver's CRD finalizer): a CRD marked for
//! deletion that still carries the cleanup finalizer is reported `Terminating` /
//! `InstanceDeletionInProgress`; if it was established, every instance is deleted through
//! the API (a `deletecollection` per namespace holding some, on the collection of its storage
//! version, or the first served one), and the CRD waits until none is left. Then the
//! finalizer is removed through `status` with the final `Terminating` condition
//! (`InstanceDeletionCompleted`, or `NeverEstablished`, or `OverlappingBuiltInResource` for
//! the kinds whose storage a CRD of that name would share), and the store removes the CRD.
//! Kubernetes' failures are reported in its words and retried: `InstanceDeletionFailed` when
//! the instances cannot be listed or deleted, `InstanceDeletionCheck` when none remaining
//! cannot be confirmed (the listing after the deletes fails, or instances are still there a
//! minute after the delete). Once reported, `InstanceDeletionCheck` stays while the cleanup
//! goes on (Kubernetes reports it between minute-long polls), so a CRD whose instances are
//! held does not flip between two conditions on every look.

use std::collections::BTreeSet;

use apiary_api::Flavor;
use apiary_api::registry::builtin::custom_resource_definition_lifecycle as lifecycle;
use chrono::DateTime;
use chrono::TimeDelta;
use chrono::Utc;
use lifecycle::Condition;
use serde_json::Value;
use serde_json::json;

use super::super::client::ControllerError;
use super::super::client::InProcessClient;
use super::super::client::LIST_PAGE;
use super::write_status;

/// A terminating CRD whose instances are being deleted.
pub const IN_PROGRESS: Condition<'static> = Condition {
    kind: lifecycle::TERMINATING,
    status: "True",
    reason: "InstanceDeletionInProgress",
    message: "CustomResource deletion is in progress",
};

/// Every instance is gone.
const COMPLETED: Condition<'static> = Condition {
    kind: lifecycle::TERMINATING,
    status: "False",
    reason: "InstanceDeletionCompleted",
    message: "removed all instances",
};

/// A CRD never established has no instances to delete.
const NEVER_ESTABLISHED: Condition<'static> = Condition {
    kind: lifecycle::TERMINATING,
    status: "False",
    reason: "NeverEstablished",
    message: "resource was never established",
};

/// A CRD named like a built-in kind whose instances are that kind's: they stay.
const OVERLAPPING: Condition<'static> = Condition {
    kind: lifecycle::TERMINATING,
    status: "False",
    reason: "OverlappingBuiltInResource",
    message: "instances overlap with built-in resources in storage",
};

/// The reason of a failure to list or delete the instances.
const FAILED: &str = "InstanceDeletionFailed";

/// The reason of a failure to confirm that no instance remains.
const CHECK: &str = "InstanceDeletionCheck";

/// How long after the delete the instances are waited for before the CRD reports that none
/// remaining cannot be confirmed (Kubernetes polls a minute).
const CONFIRM_WITHIN: TimeDelta = TimeDelta::minutes(1);

/// The message of instances still there when [`CONFIRM_WITHIN`] has passed (Kubernetes'
/// poll timing out).
const TIMED_OUT: &str =
    "could not confirm zero CustomResources remaining: timed out waiting for the condition";

/// The most pages of instances one listing reads (at [`LIST_PAGE`] each).
const MAX_PAGES: usize = 10_000;

/// What one pass did with a terminating CRD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The finalizer is removed (or the CRD changed meanwhile: the next pass looks again).
    Done,
    /// Instances remain (held by their finalizers): look again later.
    Waiting,
}

/// Why the instances could not be deleted: the reason and message of the `Terminating`
/// condition that says so.
#[derive(Debug)]
struct Failure {
    reason: &'static str,
    message: String,
}

impl Failure {
    fn failed(message: String) -> Self {
        Self {
            reason: FAILED,
            message,
        }
    }
}

/// Whether `crd` is marked for deletion and still carries the cleanup finalizer.
pub fn pending(crd: &Value, flavor: Flavor) -> bool {
    let finalizer = lifecycle::cleanup_finalizer(flavor);
    crd.pointer("/metadata/deletionTimestamp").is_some()
        && crd
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| f.iter().any(|x| x.as_str() == Some(finalizer.as_str())))
}

/// `crd` without the cleanup finalizer, with the final `condition` set at `now`.
pub fn finalized(crd: &Value, flavor: Flavor, condition: &Condition<'_>, now: &str) -> Value {
    let finalizer = lifecycle::cleanup_finalizer(flavor);
    let mut done = crd.clone();
    if let Some(list) = done
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        list.retain(|f| f.as_str() != Some(finalizer.as_str()));
    }
    lifecycle::set(&mut done, condition, now);
    done
}

/// Text at `pointer` of `value`, empty when absent.
fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether a CRD of `group` and `plural` would share the storage of a built-in kind.
fn overlaps_built_in(group: &str, plural: &str, flavor: Flavor) -> bool {
    let domain = flavor.group_domain();
    (group == format!("apiregistration.{domain}") && plural == "apiservices")
        || (group == format!("apiextensions.{domain}") && plural == "customresourcedefinitions")
}

/// The version whose endpoints reach `crd`'s instances: the storage version if served, or
/// else the first served one.
fn served_version(crd: &Value) -> Option<&str> {
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array)?;
    let served = |v: &&Value| v.get("served").and_then(Value::as_bool) == Some(true);
    versions
        .iter()
        .filter(served)
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .or_else(|| versions.iter().find(served))
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
}

/// The namespaces holding instances in `collection` (`""` for cluster-scoped ones) and how
/// many instances there are; why they could not be listed otherwise.
async fn instances(
    client: &InProcessClient,
    collection: &str,
) -> Result<(BTreeSet<String>, usize), String> {
    let mut namespaces = BTreeSet::new();
    let mut count = 0;
    let mut token: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let uri = match &token {
            Some(token) => format!("{collection}?limit={LIST_PAGE}&continue={token}"),
            None => format!("{collection}?limit={LIST_PAGE}"),
        };
        let page = match client.get(&uri).await {
            Ok(Some(page)) => page,
            Ok(None) => {
                return Err("the server could not find the requested resource".to_owned());
            }
            Err(error) => return Err(error.to_string()),
        };
        for item in page
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            count += 1;
            namespaces.insert(text(item, "/metadata/namespace").to_owned());
        }
        token = Some(text(&page, "/metadata/continue").to_owned()).filter(|t| !t.is_empty());
        if token.is_none() {
            return Ok((namespaces, count));
        }
    }
    Err(format!("more than {MAX_PAGES} pages"))
}

/// Deletes every instance of `crd` (a `deletecollection` per namespace holding some); whether
/// some remain afterwards, or why that is not known.
async fn delete_instances(client: &InProcessClient, crd: &Value) -> Result<bool, Failure> {
    let group = text(crd, "/spec/group");
    let plural = text(crd, "/spec/names/plural");
    let Some(version) = served_version(crd) else {
        return Err(Failure::failed(format!(
            "could not list instances: unable to find a custom resource client for {plural}.{group}: no version is served"
        )));
    };
    let collection = format!("/apis/{group}/{version}/{plural}");
    let (namespaces, count) = instances(client, &collection)
        .await
        .map_err(|e| Failure::failed(format!("could not list instances: {e}")))?;
    if count == 0 {
        return Ok(false);
    }
    let options = json!({"kind": "DeleteOptions", "apiVersion": "v1"});
    let mut errors = Vec::new();
    for namespace in &namespaces {
        let path = match namespace.as_str() {
            "" => collection.clone(),
            namespace => format!("/apis/{group}/{version}/namespaces/{namespace}/{plural}"),
        };
        if let Err(error) = client.delete_with(&path, &options).await {
            errors.push(error.to_string());
        }
    }
    match errors.len() {
        0 => {}
        1 => {
            let message = format!("could not issue all deletes: {}", errors.concat());
            return Err(Failure::failed(message));
        }
        _ => {
            let message = format!("could not issue all deletes: [{}]", errors.join(", "));
            return Err(Failure::failed(message));
        }
    }
    let (_, left) = instances(client, &collection).await.map_err(|e| Failure {
        reason: CHECK,
        message: format!("could not confirm zero CustomResources remaining: {e}"),
    })?;
    Ok(left > 0)
}

/// Whether instances still there at `now` have been waited for long enough: a minute since
/// the CRD's `deletionTimestamp`.
fn waited_too_long(crd: &Value, now: DateTime<Utc>) -> bool {
    DateTime::parse_from_rfc3339(text(crd, "/metadata/deletionTimestamp"))
        .is_ok_and(|deleted| now.signed_duration_since(deleted) >= CONFIRM_WITHIN)
}

/// `crd` with the `Terminating` condition of its cleanup as a pass at `now` starts it:
/// `InstanceDeletionInProgress`, unless `InstanceDeletionCheck` is already reported.
fn in_progress(crd: &Value, now: &str) -> Value {
    let mut current = crd.clone();
    let checking = lifecycle::find(crd, lifecycle::TERMINATING)
        .and_then(|c| c.get("reason"))
        .and_then(Value::as_str)
        == Some(CHECK);
    if !checking {
        lifecycle::set(&mut current, &IN_PROGRESS, now);
    }
    current
}

/// Writes `condition` (at `now`) to `crd` unless it already says so; a failed write is only
/// logged (the next pass reports again).
async fn report(
    client: &InProcessClient,
    flavor: Flavor,
    crd: &Value,
    condition: &Condition<'_>,
    now: &str,
) {
    if lifecycle::is_equivalent(crd, condition) {
        return;
    }
    let mut reported = crd.clone();
    lifecycle::set(&mut reported, condition, now);
    if let Err(error) = write_status(client, flavor, &reported).await {
        tracing::warn!(crd = %text(crd, "/metadata/name"), %error, reason = condition.reason,
            "reporting the instance deletion failed");
    }
}

/// One pass over the terminating `crd` at `now`.
pub async fn clean_up(
    client: &InProcessClient,
    flavor: Flavor,
    crd: &Value,
    now: DateTime<Utc>,
) -> Result<Outcome, ControllerError> {
    let stamp = lifecycle::timestamp(now);
    let mut current = in_progress(crd, &stamp);
    if current != *crd {
        match write_status(client, flavor, &current).await? {
            Some(written) => current = written,
            None => return Ok(Outcome::Done),
        }
    }
    let group = text(&current, "/spec/group");
    let plural = text(&current, "/spec/names/plural");
    let last = if overlaps_built_in(group, plural, flavor) {
        OVERLAPPING
    } else if lifecycle::is_true(&current, lifecycle::ESTABLISHED) {
        match delete_instances(client, &current).await {
            Ok(true) => {
                if waited_too_long(&current, now) {
                    let check = Condition {
                        kind: lifecycle::TERMINATING,
                        status: "True",
                        reason: CHECK,
                        message: TIMED_OUT,
                    };
                    report(client, flavor, &current, &check, &stamp).await;
                }
                return Ok(Outcome::Waiting);
            }
            Ok(false) => COMPLETED,
            Err(failure) => {
                let condition = Condition {
                    kind: lifecycle::TERMINATING,
                    status: "True",
                    reason: failure.reason,
                    message: &failure.message,
                };
                report(client, flavor, &current, &condition, &stamp).await;
                return Err(ControllerError::Exchange {
                    method: http::Method::DELETE,
                    path: format!("/apis/{group}/*/{plural}"),
                    reason: failure.message,
                });
            }
        }
    } else {
        NEVER_ESTABLISHED
    };
    let done = finalized(&current, flavor, &last, &stamp);
    write_status(client, flavor, &done).await?;
    tracing::info!(crd = %text(&current, "/metadata/name"), reason = last.reason,
        "custom resource definition finalized");
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The finalizer goes with the final condition; other finalizers stay; the built-in
    // storages a CRD could name are recognized; the endpoints are the storage version's when
    // it is served.
    #[test]
    fn finalizing_leaves_the_other_finalizers() {
        let crd = json!({
            "metadata": {"name": "a.b", "deletionTimestamp": "t0",
                "finalizers": ["x/y", "customresourcecleanup.apiextensions.k8s.io"]},
            "spec": {"versions": [
                {"name": "v1", "served": true, "storage": false},
                {"name": "v2", "served": true, "storage": true},
            ]},
        });
        assert!(pending(&crd, Flavor::Kubernetes));
        assert!(!pending(&crd, Flavor::Platform));
        let done = finalized(&crd, Flavor::Kubernetes, &COMPLETED, "t1");
        assert_eq!(done["metadata"]["finalizers"], json!(["x/y"]));
        assert!(!pending(&done, Flavor::Kubernetes));
        let condition = lifecycle::find(&done, "Terminating").expect("terminating");
        assert_eq!(condition["status"], "False");
        assert_eq!(condition["reason"], "InstanceDeletionCompleted");
        assert_eq!(condition["message"], "removed all instances");
        assert_eq!(served_version(&crd), Some("v2"));
        let mut unserved = crd.clone();
        unserved["spec"]["versions"][1]["served"] = json!(false);
        assert_eq!(served_version(&unserved), Some("v1"));
        unserved["spec"]["versions"][0]["served"] = json!(false);
        assert_eq!(served_version(&unserved), None);
        assert!(overlaps_built_in(
            "apiregistration.platform.io",
            "apiservices",
            Flavor::Platform
        ));
        assert!(overlaps_built_in(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            Flavor::Kubernetes
        ));
        assert!(!overlaps_built_in(
            "example.com",
            "apiservices",
            Flavor::Kubernetes
        ));
    }

    // crd_finalizer.go's conditions: each pass starts `InstanceDeletionInProgress`, but an
    // `InstanceDeletionCheck` reported stays; instances are waited for a minute after the
    // delete before the check is reported.
    #[test]
    fn a_reported_check_stays_and_comes_after_a_minute() {
        let crd = json!({"metadata": {"name": "a.b", "deletionTimestamp": "2026-01-01T00:00:00Z"},
            "status": {"conditions": [{"type": "Terminating", "status": "True",
                "reason": "InstanceDeletionPending", "message": "pending"}]}});
        let started = in_progress(&crd, "2026-01-01T00:00:01Z");
        assert!(lifecycle::is_equivalent(&started, &IN_PROGRESS));
        let mut checking = crd.clone();
        checking["status"]["conditions"][0]["reason"] = json!(CHECK);
        assert_eq!(in_progress(&checking, "2026-01-01T00:00:01Z"), checking);
        let at = |t: &str| DateTime::parse_from_rfc3339(t).expect("time").to_utc();
        assert!(!waited_too_long(&crd, at("2026-01-01T00:00:59Z")));
        assert!(waited_too_long(&crd, at("2026-01-01T00:01:00Z")));
        assert!(!waited_too_long(&json!({}), at("2026-01-01T00:01:00Z")));
    }
}

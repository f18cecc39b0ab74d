//! The cleanup of a deleted CRD (apiextensions-apiserver's CRD finalizer): a CRD marked for
//! deletion that still carries the cleanup finalizer is reported `Terminating` /
//! `InstanceDeletionInProgress`; if it was established, every instance is deleted through
//! the API (a `deletecollection` per namespace holding some, on the collection of its storage
//! version, or the first served one), and the CRD waits until none is left. Then the
//! finalizer is removed through `status` with the final `Terminating` condition
//! (`InstanceDeletionCompleted`, or `NeverEstablished`, or `OverlappingBuiltInResource` for
//! the kinds whose storage a CRD of that name would share), and the store removes the CRD.
//! A failure is reported as `InstanceDeletionFailed` and retried.

use std::collections::BTreeSet;

use apiary_api::Flavor;
use apiary_api::registry::builtin::custom_resource_definition_lifecycle as lifecycle;
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
/// many instances there are; the failure message otherwise.
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
                return Err(
                    "could not list instances: the server could not find the requested resource"
                        .to_owned(),
                );
            }
            Err(error) => return Err(format!("could not list instances: {error}")),
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
    Err(format!(
        "could not list instances: more than {} pages",
        MAX_PAGES
    ))
}

/// Deletes every instance of `crd` (a `deletecollection` per namespace holding some); whether
/// some remain afterwards, or the failure message.
async fn delete_instances(client: &InProcessClient, crd: &Value) -> Result<bool, String> {
    let group = text(crd, "/spec/group");
    let plural = text(crd, "/spec/names/plural");
    let Some(version) = served_version(crd) else {
        return Err(format!(
            "could not list instances: unable to find a custom resource client for {plural}.{group}: no version is served"
        ));
    };
    let collection = format!("/apis/{group}/{version}/{plural}");
    let (namespaces, count) = instances(client, &collection).await?;
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
        1 => return Err(format!("could not issue all deletes: {}", errors.concat())),
        _ => {
            return Err(format!(
                "could not issue all deletes: [{}]",
                errors.join(", ")
            ));
        }
    }
    let (_, left) = instances(client, &collection).await?;
    Ok(left > 0)
}

/// One pass over the terminating `crd` at `now`.
pub async fn clean_up(
    client: &InProcessClient,
    flavor: Flavor,
    crd: &Value,
    now: &str,
) -> Result<Outcome, ControllerError> {
    let mut current = crd.clone();
    lifecycle::set(&mut current, &IN_PROGRESS, now);
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
            Ok(true) => return Ok(Outcome::Waiting),
            Ok(false) => COMPLETED,
            Err(message) => {
                let failed = Condition {
                    kind: lifecycle::TERMINATING,
                    status: "True",
                    reason: "InstanceDeletionFailed",
                    message: &message,
                };
                let mut reported = current.clone();
                lifecycle::set(&mut reported, &failed, now);
                if let Err(error) = write_status(client, flavor, &reported).await {
                    tracing::warn!(crd = %text(&current, "/metadata/name"), %error,
                        "reporting the failed instance deletion failed");
                }
                return Err(ControllerError::Exchange {
                    method: http::Method::DELETE,
                    path: format!("/apis/{group}/*/{plural}"),
                    reason: message,
                });
            }
        }
    } else {
        NEVER_ESTABLISHED
    };
    let done = finalized(&current, flavor, &last, now);
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
}

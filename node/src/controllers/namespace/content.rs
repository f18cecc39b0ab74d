//! The namespace controller's deletion of one resource type's content in a terminating
//! namespace, as Kubernetes' `deleteAllContentForGroupVersionResource`: a `deletecollection`
//! (or, where the type has none, a list and a delete of each object) with Background
//! propagation, then a list of what remains: objects held by finalizers are expected and
//! counted per finalizer; others are an error unless pods are still terminating gracefully.

use std::collections::BTreeMap;

use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use super::super::client::ControllerError;
use super::super::client::InProcessClient;
use super::discovery::Resource;
use super::discovery::status_message;

/// Kubernetes' estimate, in seconds, of the time finalizers take to let go of an object.
pub const FINALIZER_ESTIMATE_SECONDS: i64 = 15;

/// A pod's grace period when its spec names none.
const DEFAULT_POD_GRACE_SECONDS: i64 = 30;

/// What remains of one resource type's content.
#[derive(Debug, Default)]
pub struct Remaining {
    /// Seconds the remaining content is expected to take to go.
    pub estimate: i64,
    /// How many objects remain.
    pub objects: usize,
    /// Per finalizer, how many of them it holds.
    pub finalizers: BTreeMap<String, usize>,
}

/// The options of every delete: Background propagation, as the namespace controller's.
fn background() -> Value {
    json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"})
}

/// Whether the server does not serve `verb` for the type after all (405, or 404 for a type
/// that vanished).
fn unsupported(error: &ControllerError) -> bool {
    matches!(
        error,
        ControllerError::Status { status, .. } if *status == StatusCode::METHOD_NOT_ALLOWED
    )
}

/// Deletes the content of `resource` in `namespace`; what remains, or why it failed (with
/// the estimate known so far).
pub async fn delete_content(
    client: &InProcessClient,
    resource: &Resource,
    namespace: &str,
) -> Result<Remaining, (Remaining, String)> {
    let path = resource.collection(namespace);
    let fail = |estimate: i64, error: &ControllerError| {
        (
            Remaining {
                estimate,
                ..Remaining::default()
            },
            status_message(error),
        )
    };
    let estimate = if resource.group.is_empty() && resource.resource == "pods" {
        pod_grace_estimate(client, &path)
            .await
            .map_err(|e| fail(0, &e))?
    } else {
        0
    };
    let mut collected = false;
    if resource.supports("deletecollection") {
        match client.delete_with(&path, &background()).await {
            Ok(Some(_)) => collected = true,
            Ok(None) => {}
            Err(error) if unsupported(&error) => {}
            Err(error) => return Err(fail(estimate, &error)),
        }
    }
    if !resource.supports("list") {
        return Ok(Remaining {
            estimate,
            ..Remaining::default()
        });
    }
    if !collected {
        let items = match client.list(&path).await {
            Ok(items) => items,
            Err(error) if unsupported(&error) => Vec::new(),
            Err(error) => return Err(fail(estimate, &error)),
        };
        for item in &items {
            let Some(name) = item.pointer("/metadata/name").and_then(Value::as_str) else {
                continue;
            };
            match client
                .delete_with(&format!("{path}/{name}"), &background())
                .await
            {
                Ok(_) => {}
                Err(error) if unsupported(&error) => {}
                Err(error) => return Err(fail(estimate, &error)),
            }
        }
    }
    let items = match client.list(&path).await {
        Ok(items) => items,
        Err(error) if unsupported(&error) => Vec::new(),
        Err(error) => return Err(fail(estimate, &error)),
    };
    if items.is_empty() || estimate > 0 {
        return Ok(Remaining {
            estimate,
            ..Remaining::default()
        });
    }
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    for item in &items {
        let names = item
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array);
        for name in names.into_iter().flatten().filter_map(Value::as_str) {
            *finalizers.entry(name.to_owned()).or_default() += 1;
        }
    }
    if finalizers.is_empty() {
        return Err((
            Remaining {
                estimate,
                objects: items.len(),
                finalizers,
            },
            format!(
                "unexpected items still remain in namespace: {namespace} for gvr: {}",
                gvr_text(resource)
            ),
        ));
    }
    Ok(Remaining {
        estimate: FINALIZER_ESTIMATE_SECONDS,
        objects: items.len(),
        finalizers,
    })
}

/// The type as Go prints a `GroupVersionResource`.
fn gvr_text(resource: &Resource) -> String {
    format!(
        "{}/{}, Resource={}",
        resource.group, resource.version, resource.resource
    )
}

/// The longest grace period of the pods at `path` that have not finished (Kubernetes'
/// `estimateGracefulTerminationForPods`).
async fn pod_grace_estimate(client: &InProcessClient, path: &str) -> Result<i64, ControllerError> {
    let pods = client.list(path).await?;
    Ok(pods
        .iter()
        .filter(|pod| {
            !matches!(
                pod.pointer("/status/phase").and_then(Value::as_str),
                Some("Succeeded" | "Failed")
            )
        })
        .map(|pod| {
            pod.pointer("/spec/terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(DEFAULT_POD_GRACE_SECONDS)
        })
        .max()
        .unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_printed_as_go_prints_them() {
        let r = Resource {
            group: "apps".into(),
            version: "v1".into(),
            resource: "deployments".into(),
            verbs: Vec::new(),
        };
        assert_eq!(gvr_text(&r), "apps/v1, Resource=deployments");
    }
}

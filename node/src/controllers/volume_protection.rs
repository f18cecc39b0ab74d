//! `pvc-protection` and `pv-protection`: remove the `<domain>/pvc-protection` and
//! `<domain>/pv-protection` finalizers the `StorageObjectInUseProtection` admission plugin
//! puts on claims and volumes, once a deleted one is no longer in use, as
//! kube-controller-manager's protection controllers do: a claim is in use while a pod
//! scheduled to a node and not finished mounts it (by name, or as its generic ephemeral
//! volume `<pod>-<volume>`); a volume while it is `Bound`. Each pass lists the claims (or
//! volumes) and removes the finalizer of the deleted ones no longer in use, with a
//! conditional update (a conflict is retried by the next pass).

use std::time::Duration;

use apiary_api::auth::controller_user;
use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::changes::Interest;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge_paced;

/// The claim protection controller's `--controllers` name.
pub const CLAIMS: &str = "pvc-protection";
/// The volume protection controller's `--controllers` name.
pub const VOLUMES: &str = "pv-protection";

/// How long after a change of the store the next pass waits (a pass lists every claim).
const PACE: Duration = Duration::from_secs(1);

/// Which of the two protection controllers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolumeProtection {
    /// PersistentVolumeClaims, as `pvc-protection-controller`.
    Claims,
    /// PersistentVolumes, as `pv-protection-controller`.
    Volumes,
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn finalizers(object: &Value) -> impl Iterator<Item = &str> {
    (object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array))
    .into_iter()
    .flatten()
    .filter_map(Value::as_str)
}

/// Whether `pod` keeps the claim `claim` of its namespace in use.
fn uses_claim(pod: &Value, claim: &str) -> bool {
    let phase = text(pod, "/status/phase");
    if text(pod, "/spec/nodeName").is_empty() || phase == "Succeeded" || phase == "Failed" {
        return false;
    }
    let pod_name = text(pod, "/metadata/name");
    (pod.pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .any(|v| {
        text(v, "/persistentVolumeClaim/claimName") == claim
            || (v.get("ephemeral").is_some() && format!("{pod_name}-{}", text(v, "/name")) == claim)
    })
}

impl VolumeProtection {
    fn account(self) -> &'static str {
        match self {
            Self::Claims => "pvc-protection-controller",
            Self::Volumes => "pv-protection-controller",
        }
    }

    /// One pass over the deleted claims or volumes still holding the finalizer.
    async fn pass(
        self,
        client: &InProcessClient,
        context: &ControllerContext,
    ) -> Result<Option<DateTime<Utc>>, ControllerError> {
        let domain = context.flavor.label_domain();
        let (collection, finalizer) = match self {
            Self::Claims => (
                "/api/v1/persistentvolumeclaims",
                format!("{domain}/pvc-protection"),
            ),
            Self::Volumes => (
                "/api/v1/persistentvolumes",
                format!("{domain}/pv-protection"),
            ),
        };
        for object in client.list(collection).await? {
            let deleting = object.pointer("/metadata/deletionTimestamp").is_some();
            if !deleting || !finalizers(&object).any(|f| f == finalizer) {
                continue;
            }
            let name = text(&object, "/metadata/name");
            let path = match self {
                Self::Claims => {
                    let namespace = text(&object, "/metadata/namespace");
                    let pods =
                        (client.list(&format!("/api/v1/namespaces/{namespace}/pods"))).await?;
                    if pods.iter().any(|pod| uses_claim(pod, name)) {
                        continue;
                    }
                    format!("/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}")
                }
                Self::Volumes => {
                    if text(&object, "/status/phase") == "Bound" {
                        continue;
                    }
                    format!("/api/v1/persistentvolumes/{name}")
                }
            };
            let mut released = object.clone();
            let kept: Vec<&str> = finalizers(&object).filter(|f| *f != finalizer).collect();
            released["metadata"]["finalizers"] = json!(kept);
            client.update(&path, &released).await?;
            tracing::info!(%path, "removed the protection finalizer of an unused object");
        }
        Ok(None)
    }
}

#[async_trait::async_trait]
impl Controller for VolumeProtection {
    fn name(&self) -> &'static str {
        match self {
            Self::Claims => CLAIMS,
            Self::Volumes => VOLUMES,
        }
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::new(
            context.api.clone(),
            controller_user(context.flavor, self.account()),
        );
        let this = *self;
        let changes = (context.changes).of(Interest::resources(&[
            "persistentvolumeclaims",
            "persistentvolumes",
            "pods",
        ]));
        converge_paced(self.name(), &context, &stop, PACE, changes, || {
            this.pass(&client, &context)
        })
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_running_scheduled_pods_use_their_claims() {
        let pod = |node: &str, phase: &str| {
            json!({"metadata": {"name": "p"},
                   "spec": {"nodeName": node, "volumes": [
                       {"name": "data", "persistentVolumeClaim": {"claimName": "c"}},
                       {"name": "scratch", "ephemeral": {}}]},
                   "status": {"phase": phase}})
        };
        assert!(uses_claim(&pod("n", "Running"), "c"));
        assert!(
            uses_claim(&pod("n", "Pending"), "p-scratch"),
            "the generic ephemeral claim"
        );
        assert!(!uses_claim(&pod("", "Pending"), "c"), "not scheduled");
        assert!(!uses_claim(&pod("n", "Succeeded"), "c"), "finished");
        assert!(!uses_claim(&pod("n", "Running"), "other"));
    }
}

//! `rbac-bootstrap` (R-ACC-184..186): puts the default RBAC policy
//! ([`apiary_api::auth::rbac::policy`]) in place each time this replica starts leading, as
//! kube-apiserver's `rbac/bootstrap-roles` start-up hook does: missing defaults are created;
//! stored ones are reconciled (what they lack is added, what they have beyond the default is
//! kept), except those annotated autoupdate `"false"`; a binding whose role changed is
//! recreated. It acts as the server's loopback user (`system:masters`), since it writes roles
//! no other identity may grant. A pass that fails (no namespace yet, a conflict with a
//! concurrent write) is retried after [`RETRY`] from a fresh read of the store.

use std::collections::BTreeMap;

use apiary_api::Flavor;
use apiary_api::auth::rbac::policy::Reconciled;
use apiary_api::auth::rbac::policy::default_policy;
use apiary_api::auth::rbac::policy::rbac_group;
use apiary_api::auth::rbac::policy::reconcile;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::RETRY;

/// The controller's `--controllers` name.
pub const NAME: &str = "rbac-bootstrap";

/// The default policy's reconciler.
#[derive(Debug, Clone, Copy, Default)]
pub struct RbacBootstrap;

#[async_trait::async_trait]
impl Controller for RbacBootstrap {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::loopback(context.api.clone());
        loop {
            let outcome = tokio::select! {
                () = stop.cancelled() => return,
                outcome = reconcile_defaults(&client, context.flavor) => outcome,
            };
            match outcome {
                Ok(changes) => {
                    tracing::info!(changes, "default RBAC policy in place");
                    break;
                }
                Err(error) => {
                    tracing::warn!(controller = NAME, %error, "pass failed; retrying");
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(RETRY) => {}
            }
        }
        stop.cancelled().await;
    }
}

/// One object's identity within its kind: namespace (empty for cluster objects) and name.
type Key = (String, String);

fn key(object: &Value) -> Key {
    let meta = &object["metadata"];
    let text = |field: &str| meta[field].as_str().unwrap_or_default().to_owned();
    (text("namespace"), text("name"))
}

/// One pass: creates the missing defaults of `flavor` and reconciles the stored ones; how many
/// objects it wrote. Every object is tried; the first failure is returned after the others.
pub async fn reconcile_defaults(
    client: &InProcessClient,
    flavor: Flavor,
) -> Result<usize, ControllerError> {
    let policy = default_policy(flavor);
    let base = format!("/apis/{}/v1", rbac_group(flavor));
    let mut written = 0;
    let mut first_error = None;
    for (resource, defaults) in [
        ("clusterroles", &policy.cluster_roles),
        ("clusterrolebindings", &policy.cluster_role_bindings),
        ("roles", &policy.roles),
        ("rolebindings", &policy.role_bindings),
    ] {
        let stored: BTreeMap<Key, Value> = client
            .list(&format!("{base}/{resource}"))
            .await?
            .into_iter()
            .map(|object| (key(&object), object))
            .collect();
        for wanted in defaults {
            let (namespace, name) = key(wanted);
            let collection = if namespace.is_empty() {
                format!("{base}/{resource}")
            } else {
                format!("{base}/namespaces/{namespace}/{resource}")
            };
            let outcome = match stored.get(&(namespace, name.clone())) {
                None => client.create(&collection, wanted).await.map(|()| true),
                Some(existing) => {
                    let path = format!("{collection}/{name}");
                    apply(client, &collection, &path, existing, wanted, flavor).await
                }
            };
            match outcome {
                Ok(wrote) => written += usize::from(wrote),
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok(written),
    }
}

/// Reconciles the stored `existing` at `path` with `wanted`; whether it wrote.
async fn apply(
    client: &InProcessClient,
    collection: &str,
    path: &str,
    existing: &Value,
    wanted: &Value,
    flavor: Flavor,
) -> Result<bool, ControllerError> {
    let mut existing = existing.clone();
    for field in ["apiVersion", "kind"] {
        existing[field] = wanted[field].clone();
    }
    match reconcile(&existing, wanted, flavor) {
        Reconciled::Unchanged | Reconciled::Protected => Ok(false),
        Reconciled::Update(object) => client.update(path, &object).await.map(|()| true),
        Reconciled::Recreate(object) => {
            let uid = existing["metadata"]["uid"].as_str().unwrap_or_default();
            client.delete(path, uid).await?;
            client.create(collection, &object).await.map(|()| true)
        }
    }
}

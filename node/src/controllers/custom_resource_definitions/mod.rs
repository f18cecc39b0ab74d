//! The CustomResourceDefinition controllers (issue 21), the work apiextensions-apiserver does
//! in its own controllers, run here on the leader and acting as the server's loopback user:
//! `crd-naming` accepts a CRD's names ([`naming`]), `crd-establishing` establishes a CRD whose
//! names are accepted ([`establishing`]), and `crd-finalizer` deletes the instances of a
//! deleted CRD and then releases it ([`cleanup`]). Each pass lists the CRDs; every status
//! change is written through the CRD's `status` subresource, conditional on its
//! `resourceVersion` (a conflict waits for the next pass, which the change itself brings).

pub mod cleanup;
pub mod establishing;
pub mod naming;

use apiary_api::Flavor;
use apiary_api::registry::builtin::custom_resource_definition_lifecycle as lifecycle;
use apiary_raft::mvcc::Revision;
use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::changes::Interest;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge_paced;

/// What the naming and establishing passes read: the definitions.
fn definitions(context: &ControllerContext) -> watch::Receiver<Revision> {
    (context.changes).of(Interest::resources(&["customresourcedefinitions"]))
}

/// The naming controller's `--controllers` name.
pub const NAMING: &str = "crd-naming";

/// The establishing controller's `--controllers` name.
pub const ESTABLISHING: &str = "crd-establishing";

/// The cleanup (finalizer) controller's `--controllers` name.
pub const FINALIZER: &str = "crd-finalizer";

/// How long the cleanup waits before it looks again at instances held by their finalizers
/// (Kubernetes polls every 5 seconds); any change of the store brings the look forward.
const RECHECK: chrono::TimeDelta = chrono::TimeDelta::seconds(5);

/// How long after a change of the store a pass waits for more: every pass reads every CRD
/// (their schemas can be large), so a store that changes without pause costs each controller
/// one pass a second, as the garbage collector's.
const PACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The CRD collection of `flavor`.
fn collection(flavor: Flavor) -> String {
    format!(
        "/apis/apiextensions.{}/v1/customresourcedefinitions",
        flavor.group_domain()
    )
}

/// Every CRD, oldest first (by `creationTimestamp`, then name): the older of two CRDs asking
/// for the same name gets it.
async fn crds(client: &InProcessClient, flavor: Flavor) -> Result<Vec<Value>, ControllerError> {
    let mut crds = client.list(&collection(flavor)).await?;
    let key = |crd: &Value| {
        let text = |p: &str| {
            crd.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        (text("/metadata/creationTimestamp"), text("/metadata/name"))
    };
    crds.sort_by_key(key);
    Ok(crds)
}

/// Writes `crd` through its `status` subresource, conditional on its `resourceVersion`; the
/// CRD as it now is, or `None` when it changed meanwhile (409) or is gone.
pub async fn write_status(
    client: &InProcessClient,
    flavor: Flavor,
    crd: &Value,
) -> Result<Option<Value>, ControllerError> {
    let name = crd
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let path = format!("{}/{name}", collection(flavor));
    let mut body = crd.clone();
    body["apiVersion"] = format!("apiextensions.{}/v1", flavor.group_domain()).into();
    body["kind"] = "CustomResourceDefinition".into();
    match client.update(&format!("{path}/status"), &body).await {
        Ok(()) => client.get(&path).await,
        Err(ControllerError::Status { status, .. }) if status == http::StatusCode::CONFLICT => {
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// The naming controller.
#[derive(Debug, Clone, Copy, Default)]
pub struct CrdNaming;

#[async_trait::async_trait]
impl Controller for CrdNaming {
    fn name(&self) -> &'static str {
        NAMING
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::loopback(context.api.clone());
        converge_paced(
            NAMING,
            &context,
            &stop,
            PACE,
            definitions(&context),
            || async { name_all(&client, &context).await.map(|()| None) },
        )
        .await;
    }
}

/// One naming pass: each CRD in turn, each seeing the names the earlier ones were given.
async fn name_all(
    client: &InProcessClient,
    context: &ControllerContext,
) -> Result<(), ControllerError> {
    let now = lifecycle::timestamp(context.clock.now());
    let mut crds = crds(client, context.flavor).await?;
    for i in 0..crds.len() {
        let Some(named) = crds.get(i).and_then(|crd| naming::name(crd, &crds, &now)) else {
            continue;
        };
        if let Some(written) = write_status(client, context.flavor, &named).await?
            && let Some(slot) = crds.get_mut(i)
        {
            *slot = written;
        }
    }
    Ok(())
}

/// The establishing controller.
#[derive(Debug, Clone, Copy, Default)]
pub struct CrdEstablishing;

#[async_trait::async_trait]
impl Controller for CrdEstablishing {
    fn name(&self) -> &'static str {
        ESTABLISHING
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::loopback(context.api.clone());
        converge_paced(
            ESTABLISHING,
            &context,
            &stop,
            PACE,
            definitions(&context),
            || async {
                let now = lifecycle::timestamp(context.clock.now());
                for crd in crds(&client, context.flavor).await? {
                    if let Some(established) = establishing::establish(&crd, &now) {
                        write_status(&client, context.flavor, &established).await?;
                    }
                }
                Ok(None)
            },
        )
        .await;
    }
}

/// The cleanup controller (Kubernetes' CRD finalizer).
#[derive(Debug, Clone, Copy, Default)]
pub struct CrdFinalizer;

#[async_trait::async_trait]
impl Controller for CrdFinalizer {
    fn name(&self) -> &'static str {
        FINALIZER
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::loopback(context.api.clone());
        converge_paced(
            FINALIZER,
            &context,
            &stop,
            PACE,
            context.changes.all(),
            || clean_up_all(&client, &context),
        )
        .await;
    }
}

/// One cleanup pass over every terminating CRD; when to look again at those whose instances
/// are still going. A failure with one CRD does not stop the others.
async fn clean_up_all(
    client: &InProcessClient,
    context: &ControllerContext,
) -> Result<Option<DateTime<Utc>>, ControllerError> {
    let now = context.clock.now();
    let mut next = None;
    let mut failure = None;
    for crd in crds(client, context.flavor).await? {
        if !cleanup::pending(&crd, context.flavor) {
            continue;
        }
        match cleanup::clean_up(client, context.flavor, &crd, now).await {
            Ok(cleanup::Outcome::Done) => {}
            Ok(cleanup::Outcome::Waiting) => next = Some(now + RECHECK),
            Err(error) => failure = Some(error),
        }
    }
    match failure {
        Some(error) => Err(error),
        None => Ok(next),
    }
}

//! `namespace` (issue 19 item 2; R-RES-061): empties terminating namespaces, as
//! kube-controller-manager's namespace controller, acting as the `namespace-controller`
//! ServiceAccount. Each pass lists the namespaces; for each one with `deletionTimestamp` that
//! still carries the flavor's finalizer in `spec.finalizers` it discovers every served
//! namespaced resource type ([`discovery`]), deletes their content ([`content`]), reports
//! progress in the namespace's conditions ([`conditions`]) through `status`, and once nothing
//! remains removes the flavor's finalizer through `finalize`, after which the store removes
//! the namespace when no other finalizer holds it.

pub mod conditions;
pub mod content;
pub mod discovery;

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::PoisonError;

use apiary_api::auth::controller_user;
use chrono::DateTime;
use chrono::Duration;
use chrono::SecondsFormat;
use chrono::Utc;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge;
use conditions::Progress;

/// The controller's `--controllers` name.
pub const NAME: &str = "namespace";

/// The ServiceAccount it acts as (kube-controller-manager's).
pub const ACCOUNT: &str = "namespace-controller";

/// Attempts at writing a namespace whose `resourceVersion` moved meanwhile.
const CONFLICT_ATTEMPTS: usize = 3;

/// The namespace controller.
#[derive(Debug, Clone, Copy, Default)]
pub struct NamespaceController;

#[async_trait::async_trait]
impl Controller for NamespaceController {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::new(
            context.api.clone(),
            controller_user(context.flavor, ACCOUNT),
        );
        let waiting = Mutex::new(HashMap::new());
        converge(NAME, &context, &stop, || {
            sync_all(&client, &context, &waiting)
        })
        .await;
    }
}

/// Per namespace (`uid` and `resourceVersion`), when to look again at content expected to go
/// by itself. Only a hint kept in memory: a new leader starts without it and looks at once.
type Waiting = Mutex<HashMap<(String, String), DateTime<Utc>>>;

/// One pass: works on every terminating namespace; the time to look again when content
/// is expected to go by itself (finalizers, graceful pod termination). As in Kubernetes, a
/// namespace whose content is waiting for that is looked at again after half the estimate
/// plus a second, or at once when the namespace itself changes.
async fn sync_all(
    client: &InProcessClient,
    context: &ControllerContext,
    waiting: &Waiting,
) -> Result<Option<DateTime<Utc>>, ControllerError> {
    let finalizer = context.flavor.namespace_finalizer();
    let namespaces = client.list("/api/v1/namespaces").await?;
    let mut next: Option<DateTime<Utc>> = None;
    let mut failure = None;
    let mut still_waiting = HashMap::new();
    let earlier = std::mem::take(&mut *waiting.lock().unwrap_or_else(PoisonError::into_inner));
    for namespace in namespaces
        .iter()
        .filter(|ns| ns.pointer("/metadata/deletionTimestamp").is_some())
        .filter(|ns| holds(ns, finalizer))
    {
        let text = |p: &str| {
            namespace
                .pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let key = (
            text("/metadata/uid").to_owned(),
            text("/metadata/resourceVersion").to_owned(),
        );
        if let Some(due) = earlier.get(&key).filter(|due| **due > context.clock.now()) {
            next = Some(next.map_or(*due, |n| n.min(*due)));
            still_waiting.insert(key, *due);
            continue;
        }
        match sync(client, context, namespace).await {
            Ok(0) => {}
            Ok(estimate) => {
                let due = context.clock.now() + Duration::seconds(estimate / 2 + 1);
                next = Some(next.map_or(due, |n| n.min(due)));
                // The namespace as the pass left it (its conditions may have been written).
                let path = format!("/api/v1/namespaces/{}", text("/metadata/name"));
                if let Ok(Some(now)) = client.get(&path).await
                    && let Some(version) = now
                        .pointer("/metadata/resourceVersion")
                        .and_then(Value::as_str)
                {
                    still_waiting.insert((key.0, version.to_owned()), due);
                }
            }
            Err(error) => failure = Some(error),
        }
    }
    *waiting.lock().unwrap_or_else(PoisonError::into_inner) = still_waiting;
    match failure {
        Some(error) => Err(error),
        None => Ok(next),
    }
}

/// Whether `namespace`'s `spec.finalizers` lists `finalizer`.
fn holds(namespace: &Value, finalizer: &str) -> bool {
    namespace
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|x| x.as_str() == Some(finalizer)))
}

/// Empties one terminating namespace; the seconds its remaining content is expected to
/// take (0: it is empty and the finalizer is removed).
async fn sync(
    client: &InProcessClient,
    context: &ControllerContext,
    namespace: &Value,
) -> Result<i64, ControllerError> {
    let name = namespace
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let discovered = discovery::discover(client).await?;
    let mut progress = Progress {
        discovery_failure: discovered.discovery_failure(),
        parse_failures: discovered.unparsable.clone(),
        ..Progress::default()
    };
    let mut estimate = 0;
    for resource in &discovered.resources {
        let remaining = match content::delete_content(client, resource, name).await {
            Ok(remaining) => remaining,
            Err((remaining, message)) => {
                progress.content_failures.push(message);
                remaining
            }
        };
        estimate = estimate.max(remaining.estimate);
        if remaining.objects > 0 {
            let key = format!("{}.{}", resource.resource, resource.group);
            progress.remaining.insert(key, remaining.objects);
            for (finalizer, n) in remaining.finalizers {
                *progress.finalizers.entry(finalizer).or_default() += n;
            }
        }
    }
    report(client, context, name, &progress).await;
    let failed = !progress.content_failures.is_empty()
        || progress.discovery_failure.is_some()
        || !progress.parse_failures.is_empty();
    if failed {
        return Err(ControllerError::Exchange {
            method: http::Method::DELETE,
            path: format!("/api/v1/namespaces/{name}"),
            reason: "some content could not be deleted; see the namespace's conditions".into(),
        });
    }
    if estimate > 0 {
        return Ok(estimate);
    }
    finalize(client, context, name).await?;
    tracing::info!(namespace = %name, "namespace emptied and finalized");
    Ok(0)
}

/// Writes the conditions `progress` gives through `status`, when they change; a failure is
/// only logged (the next pass writes them again), as in Kubernetes.
async fn report(
    client: &InProcessClient,
    context: &ControllerContext,
    name: &str,
    progress: &Progress,
) {
    let path = format!("/api/v1/namespaces/{name}");
    let now = context
        .clock
        .now()
        .to_rfc3339_opts(SecondsFormat::Secs, true);
    for _ in 0..CONFLICT_ATTEMPTS {
        let mut namespace = match client.get(&path).await {
            Ok(Some(namespace)) => namespace,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(namespace = %name, %error, "reading the namespace failed");
                return;
            }
        };
        if !progress.update(&mut namespace, &now) {
            return;
        }
        match client.update(&format!("{path}/status"), &namespace).await {
            Ok(()) => return,
            Err(ControllerError::Status { status, .. }) if status == http::StatusCode::CONFLICT => {
            }
            Err(error) => {
                tracing::warn!(namespace = %name, %error, "updating the namespace's conditions failed");
                return;
            }
        }
    }
}

/// Removes the flavor's finalizer from the namespace's `spec.finalizers` through `finalize`
/// (the others stay, sorted as Kubernetes leaves them); a namespace already gone is fine.
async fn finalize(
    client: &InProcessClient,
    context: &ControllerContext,
    name: &str,
) -> Result<(), ControllerError> {
    let path = format!("/api/v1/namespaces/{name}");
    let finalizer = context.flavor.namespace_finalizer();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let Some(mut namespace) = client.get(&path).await? else {
            return Ok(());
        };
        if !holds(&namespace, finalizer) {
            return Ok(());
        }
        let mut rest: Vec<String> = namespace
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|f| *f != finalizer)
            .map(str::to_owned)
            .collect();
        rest.sort();
        rest.dedup();
        namespace["spec"]["finalizers"] = rest.into();
        match client.update(&format!("{path}/finalize"), &namespace).await {
            Ok(()) => return Ok(()),
            Err(ControllerError::Status { status, .. })
                if status == http::StatusCode::CONFLICT && attempt < CONFLICT_ATTEMPTS => {}
            Err(error) => return Err(error),
        }
    }
}

//! `resourcequota`: keeps every ResourceQuota's status true, as kube-controller-manager's
//! resource quota controller does, as the `resourcequota-controller` ServiceAccount of the
//! system namespace. Each pass lists the quotas and, for each, counts what its namespace holds
//! through the evaluators the `ResourceQuota` admission plugin charges with
//! ([`apiary_api::admission::resource_quota`]), then writes `status.hard` = `spec.hard` and
//! `status.used` when either differs from what is stored: a new quota gets its status at the
//! first pass after it is created, a deleted object frees its usage at the first pass after
//! it is gone, and a full recount runs every [`RESYNC_SECONDS`] even when nothing changed.

use std::collections::HashMap;
use std::time::Duration;

use apiary_api::admission::resource_quota::ResourceList;
use apiary_api::admission::resource_quota::ScopeSelector;
use apiary_api::admission::resource_quota::evaluators_for;
use apiary_api::admission::resource_quota::usage_of;
use apiary_api::auth::controller_user;
use chrono::DateTime;
use chrono::Utc;
use http::StatusCode;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge_paced;

/// The controller's `--controllers` name.
pub const NAME: &str = "resourcequota";

/// The ServiceAccount the controller acts as.
pub const ACCOUNT: &str = "resourcequota-controller";

/// How long after a change of the store the next pass waits (a pass lists what the
/// namespaces with quotas hold).
const PACE: Duration = Duration::from_millis(500);

/// How often, in seconds, every quota is recounted when nothing changed (Kubernetes'
/// `--resource-quota-sync-period`).
pub const RESYNC_SECONDS: i64 = 300;

/// The resource quota controller.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResourceQuotaController;

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// What one pass has read: the objects of each (namespace, group, plural) and the served
/// version of each group.
#[derive(Default)]
struct Reads {
    objects: HashMap<(String, String, String), Vec<Value>>,
    versions: HashMap<String, Option<String>>,
}

impl Reads {
    /// The collection path of `plural` of `group` in `namespace`, `None` for a group not
    /// served.
    async fn path(
        &mut self,
        client: &InProcessClient,
        namespace: &str,
        group: &str,
        plural: &str,
    ) -> Result<Option<String>, ControllerError> {
        if group.is_empty() {
            return Ok(Some(format!("/api/v1/namespaces/{namespace}/{plural}")));
        }
        if !self.versions.contains_key(group) {
            let discovered = client.get(&format!("/apis/{group}")).await?;
            let version = discovered
                .as_ref()
                .map(|d| text(d, "/preferredVersion/groupVersion").to_owned())
                .filter(|v| !v.is_empty());
            self.versions.insert(group.to_owned(), version);
        }
        Ok((self.versions.get(group).cloned().flatten())
            .map(|gv| format!("/apis/{gv}/namespaces/{namespace}/{plural}")))
    }

    /// The objects of `plural` of `group` in `namespace`.
    async fn objects(
        &mut self,
        client: &InProcessClient,
        namespace: &str,
        group: &str,
        plural: &str,
    ) -> Result<&[Value], ControllerError> {
        let key = (namespace.to_owned(), group.to_owned(), plural.to_owned());
        if !self.objects.contains_key(&key) {
            let listed = match self.path(client, namespace, group, plural).await? {
                Some(path) => client.list(&path).await?,
                None => Vec::new(),
            };
            self.objects.insert(key.clone(), listed);
        }
        Ok(self
            .objects
            .get(&key)
            .map(Vec::as_slice)
            .unwrap_or_default())
    }
}

/// `status.used` of `quota` from what its namespace holds now.
async fn count(
    client: &InProcessClient,
    reads: &mut Reads,
    quota: &Value,
    hard: &ResourceList,
    now: DateTime<Utc>,
) -> Result<ResourceList, ControllerError> {
    let namespace = text(quota, "/metadata/namespace");
    let selectors = ScopeSelector::of_quota(quota);
    let mut used = ResourceList::default();
    for ((group, plural), (evaluator, names)) in evaluators_for(hard) {
        let objects = reads.objects(client, namespace, &group, &plural).await?;
        used.add(&usage_of(&evaluator, &names, &selectors, objects, now));
    }
    Ok(used.mask(|name| hard.contains(name)))
}

/// One pass over every quota.
async fn pass(
    client: &InProcessClient,
    context: &ControllerContext,
) -> Result<Option<DateTime<Utc>>, ControllerError> {
    let now = context.clock.now();
    let mut reads = Reads::default();
    let mut due = now.checked_add_signed(chrono::Duration::seconds(RESYNC_SECONDS));
    for quota in client.list("/api/v1/resourcequotas").await? {
        if quota.pointer("/metadata/deletionTimestamp").is_some() {
            continue;
        }
        let hard = ResourceList::from_json(quota.pointer("/spec/hard"));
        let used = count(client, &mut reads, &quota, &hard, now).await?;
        let stored_hard = ResourceList::from_json(quota.pointer("/status/hard"));
        let stored_used = ResourceList::from_json(quota.pointer("/status/used"));
        let has_status = quota.pointer("/status/hard").is_some();
        if has_status && stored_hard.same_amounts(&hard) && stored_used.same_amounts(&used) {
            continue;
        }
        let mut updated = quota.clone();
        updated["status"] = serde_json::json!({"hard": hard.to_json(), "used": used.to_json()});
        let path = format!(
            "/api/v1/namespaces/{}/resourcequotas/{}/status",
            text(&quota, "/metadata/namespace"),
            text(&quota, "/metadata/name")
        );
        match client.update(&path, &updated).await {
            Ok(()) => tracing::debug!(%path, "updated the quota's status"),
            // Admission charged the quota meanwhile: count it again soon.
            Err(ControllerError::Status { status, .. }) if status == StatusCode::CONFLICT => {
                due = now.checked_add_signed(chrono::Duration::seconds(1));
            }
            Err(error) => return Err(error),
        }
    }
    Ok(due)
}

#[async_trait::async_trait]
impl Controller for ResourceQuotaController {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::new(
            context.api.clone(),
            controller_user(context.flavor, ACCOUNT),
        );
        converge_paced(NAME, &context, &stop, PACE, context.changes.all(), || {
            pass(&client, &context)
        })
        .await;
    }
}

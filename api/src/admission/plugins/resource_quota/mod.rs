//! `ResourceQuota`: a namespace's ResourceQuotas bound what its writes may consume, as
//! kube-apiserver's quota plugin does. A write a quota covers is judged against the quota's
//! `status` (what the `resourcequota` controller last counted) and, when admitted, charged:
//! the quota's `status.used` is raised by a compare-and-swap on the stored quota before the
//! write goes on, so two writes racing for the last unit cannot both win (a conflict reads the
//! quota again and judges once more, a bounded number of times). The in-memory copy of the
//! quotas only tells which writes a quota concerns; those are judged on the stored quotas, so
//! a write right after a charge on this replica sees it. Dry runs are judged, never charged.
//! The configuration's `limitedResources` refuse consuming a resource in a namespace without
//! a quota covering it.
//!
//! - evaluator.rs (with pods.rs): what each resource costs; shared with the controller.
//! - check.rs: one write against the quotas; resources.rs: resource lists; scopes.rs: scopes.
//! - quotas.rs: the quotas in memory; config.rs: the plugin's configuration.

mod check;
mod config;
mod evaluator;
mod pods;
mod quotas;
mod resources;
mod scopes;

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

pub use self::check::Quota;
use self::check::Refusal;
use self::check::check;
pub use self::config::QuotaConfig;
pub use self::evaluator::Evaluator;
use self::evaluator::Write;
use self::quotas::PREFIX;
use self::quotas::QuotaCache;
pub use self::resources::ResourceList;
pub use self::scopes::ScopeSelector;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::group::GroupResource;
use crate::registry::StoredJson;
use crate::storage::ReadConsistency;
use crate::storage::Storage;
use crate::storage::StorageError;

/// The plugin's name.
pub const NAME: &str = "ResourceQuota";

/// How many times a charge that lost a race for a quota is judged again (Kubernetes' 3).
const RETRIES: usize = 3;

/// The ResourceQuota admission plugin.
pub struct ResourceQuota {
    storage: Arc<dyn Storage>,
    quotas: QuotaCache,
    config: QuotaConfig,
}

impl ResourceQuota {
    /// The plugin enforcing `storage`'s quotas with `config`.
    pub fn new(storage: Arc<dyn Storage>, config: QuotaConfig) -> Self {
        Self {
            quotas: QuotaCache::new(storage.clone()),
            storage,
            config,
        }
    }

    /// Judges `write` against the stored quotas of its namespace (the copy in memory may lag
    /// behind the last charge) and charges what it changes, unless it is a dry run, judging
    /// again the quotas whose swap lost a race.
    async fn charge(
        &self,
        attributes: &Attributes<'_>,
        evaluator: &Evaluator,
        write: &Write<'_>,
    ) -> Result<(), ApiError> {
        let prefix = format!("{PREFIX}{}/", attributes.namespace);
        let mut consistency = ReadConsistency::Any;
        let mut only: Option<BTreeSet<String>> = None;
        let mut lost = None;
        for _ in 0..=RETRIES {
            let page = (self.storage.list(&prefix, None, 0, consistency).await)
                .map_err(|e| ApiError::Internal(format!("error resolving quota: {e}")))?;
            let mut stored = Vec::new();
            for item in page.items {
                let object = (StoredJson::from_stored(item.value.clone()))
                    .and_then(|json| json.to_value())
                    .map_err(|e| ApiError::Internal(format!("reading {}: {e}", item.key)))?;
                let quota = Quota::from_object(&object);
                if only
                    .as_ref()
                    .is_none_or(|names| names.contains(&quota.name))
                {
                    stored.push((item, object, quota));
                }
            }
            let quotas: Vec<Quota> = stored.iter().map(|(_, _, q)| q.clone()).collect();
            let changed = check(&quotas, evaluator, write, &self.config.limited, Utc::now())
                .map_err(|r| refusal(attributes, r))?;
            if attributes.dry_run {
                return Ok(());
            }
            let mut failed = BTreeSet::new();
            for (index, used) in changed {
                let Some((item, object, quota)) = stored.get(index) else {
                    continue;
                };
                let mut object = object.clone();
                object["status"]["used"] = used.to_json();
                let bytes = StoredJson::to_stored(&object)
                    .map_err(|e| ApiError::Internal(format!("encoding {}: {e}", item.key)))?;
                match self
                    .storage
                    .update(&item.key, bytes, item.mod_revision)
                    .await
                {
                    Ok(_) => {}
                    Err(e @ StorageError::Conflict { .. }) => {
                        failed.insert(quota.name.clone());
                        lost = Some((e, quota.name.clone()));
                    }
                    Err(e) => {
                        return Err(ApiError::from_storage(e, &quotas_resource(), &quota.name));
                    }
                }
            }
            if failed.is_empty() {
                return Ok(());
            }
            only = Some(failed);
            consistency = ReadConsistency::Linearizable;
        }
        Err(match lost {
            Some((error, name)) => ApiError::from_storage(error, &quotas_resource(), &name),
            None => ApiError::Internal("resource quota evaluation did not finish".to_owned()),
        })
    }
}

fn quotas_resource() -> GroupResource {
    GroupResource::new("", "resourcequotas")
}

/// The answer to a refusal.
fn refusal(attributes: &Attributes<'_>, refusal: Refusal) -> ApiError {
    match refusal {
        Refusal::Forbidden(reason) => attributes.forbidden(reason),
        Refusal::Internal(message) => ApiError::Internal(message),
    }
}

#[async_trait::async_trait]
impl Plugin for ResourceQuota {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let resource = attributes.resource;
        let namespace_create = attributes.operation == Operation::Create
            && resource.group.is_empty()
            && resource.plural == "namespaces";
        let Some(object) = object else {
            return Ok(());
        };
        if attributes.namespace.is_empty() || namespace_create || is_ignored(resource) {
            return Ok(());
        }
        let quotas =
            (self.quotas.of(attributes.namespace).await).map_err(|e| attributes.forbidden(e))?;
        if quotas.is_empty() && self.config.limited.is_empty() {
            return Ok(());
        }
        let evaluator = Evaluator::of(&resource.group, &resource.plural);
        let write = Write {
            operation: attributes.operation,
            subresource: attributes.subresource,
            object,
            old,
        };
        let cached = check(
            &quotas,
            &evaluator,
            &write,
            &self.config.limited,
            Utc::now(),
        );
        if cached.is_ok_and(|changed| changed.is_empty()) {
            return Ok(());
        }
        self.charge(attributes, &evaluator, &write).await
    }
}

/// Whether quota ignores the resource (kube-apiserver's default ignored resources).
fn is_ignored(resource: &crate::registry::ResourceType) -> bool {
    resource.group.is_empty() && resource.plural == "events"
}

/// Usage of `objects` by `evaluator` for the quota resources `names` with `selectors`: every
/// name zero, plus what each object matching the scopes costs of it (Kubernetes'
/// `CalculateUsageStats`).
pub fn usage_of(
    evaluator: &Evaluator,
    names: &[String],
    selectors: &[ScopeSelector],
    objects: &[Value],
    now: DateTime<Utc>,
) -> ResourceList {
    let mut total = ResourceList::default();
    for name in names {
        total.set_zero(name.clone());
    }
    for object in objects {
        if selectors.iter().all(|s| evaluator.matches_scope(s, object)) {
            let usage = evaluator.usage(object, now);
            total.add(&usage.mask(|n| names.iter().any(|x| x == n)));
        }
    }
    total
}

/// The evaluators a quota with `hard` needs, each with the names of `hard` it measures.
pub fn evaluators_for(hard: &ResourceList) -> BTreeMap<(String, String), (Evaluator, Vec<String>)> {
    let mut found: BTreeMap<(String, String), (Evaluator, Vec<String>)> = BTreeMap::new();
    for name in hard.names() {
        let Some(evaluator) = Evaluator::for_quota_resource(name) else {
            continue;
        };
        let (group, plural) = evaluator.group_resource();
        let key = (group.to_owned(), plural.to_owned());
        found
            .entry(key)
            .or_insert_with(|| (evaluator, Vec::new()))
            .1
            .push(name.to_owned());
    }
    found
}

#[cfg(test)]
mod tests;

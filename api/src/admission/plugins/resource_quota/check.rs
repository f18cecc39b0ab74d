//! One write judged against the quotas of its namespace (Kubernetes' `CheckRequest`): which
//! quotas it is charged to, the refusals (`exceeded quota`, `failed quota`, `status unknown`,
//! `insufficient quota`), and the new `status.used` of each quota it changes.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::config::LimitedResource;
use super::evaluator::Evaluator;
use super::evaluator::Write;
use super::resources::ResourceList;
use super::scopes::ScopeSelector;
use super::scopes::print;
use crate::admission::Operation;

/// A quota as the check reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    /// The quota's name.
    pub name: String,
    /// `status.hard`: what the controller last saw of `spec.hard`.
    pub hard: ResourceList,
    /// `status.used`.
    pub used: ResourceList,
    /// Its scopes and scope selector expressions.
    pub selectors: Vec<ScopeSelector>,
}

impl Quota {
    /// The view of the ResourceQuota `object`.
    pub fn from_object(object: &Value) -> Self {
        Self {
            name: (object.pointer("/metadata/name").and_then(Value::as_str))
                .unwrap_or("")
                .to_owned(),
            hard: ResourceList::from_json(object.pointer("/status/hard")),
            used: ResourceList::from_json(object.pointer("/status/used")),
            selectors: ScopeSelector::of_quota(object),
        }
    }
}

/// Why a write is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A 403 with this reason.
    Forbidden(String),
    /// A failure Kubernetes answers with a 500 and this message.
    Internal(String),
}

/// Judges `write` (of the resource `group`/`plural`, measured by `evaluator`) against
/// `quotas` and the configuration's `limited` resources: the new `status.used` of each quota
/// the write changes (by index in `quotas`), or why it is refused.
pub fn check(
    quotas: &[Quota],
    evaluator: &Evaluator,
    write: &Write<'_>,
    limited: &[LimitedResource],
    now: DateTime<Utc>,
) -> Result<BTreeMap<usize, ResourceList>, Refusal> {
    let unchanged = BTreeMap::new();
    if !evaluator.handles(write) {
        return Ok(unchanged);
    }
    let object = write.object;
    let (group, plural) = evaluator.group_resource();
    let limited_scopes: Vec<&ScopeSelector> = (limited.iter())
        .flat_map(|l| l.match_scopes.iter())
        .filter(|s| evaluator.matches_scope(s, object))
        .collect();
    let own_limits: Vec<&LimitedResource> = (limited.iter())
        .filter(|l| l.api_group == group && l.resource == plural)
        .collect();
    let mut limited_names = BTreeSet::new();
    if !own_limits.is_empty() {
        let usage = evaluator.usage(object, now);
        for limit in own_limits {
            for (name, q) in usage.iter() {
                if q.nanos() > 0
                    && limit
                        .match_contains
                        .iter()
                        .any(|c| name.contains(c.as_str()))
                {
                    limited_names.insert(name.to_owned());
                }
            }
        }
    }

    let mut interesting = Vec::new();
    let mut restricted_names = BTreeSet::new();
    let mut restricted_scopes: Vec<&ScopeSelector> = Vec::new();
    for (index, quota) in quotas.iter().enumerate() {
        restricted_scopes
            .extend((quota.selectors.iter()).filter(|s| evaluator.matches_scope(s, object)));
        if !evaluator.matches(&quota.hard, &quota.selectors, object) {
            continue;
        }
        let restricted: Vec<String> = (quota.hard.names())
            .filter(|n| evaluator.covers(n))
            .map(str::to_owned)
            .collect();
        (evaluator.constraints(&restricted, object))
            .map_err(|e| Refusal::Forbidden(format!("failed quota: {}: {e}", quota.name)))?;
        if restricted.iter().any(|r| !quota.used.contains(r)) {
            return Err(Refusal::Forbidden(format!(
                "status unknown for quota: {}, resources: {}",
                quota.name,
                restricted.join(",")
            )));
        }
        interesting.push(index);
        restricted_names.extend(restricted);
    }

    let input = evaluator.usage(object, now);
    let negative = input.negative();
    if !negative.is_empty() {
        return Err(Refusal::Forbidden(format!(
            "quota usage is negative for resource(s): {}",
            negative.join(",")
        )));
    }
    let mut deltas: BTreeMap<usize, ResourceList> =
        (interesting.iter()).map(|i| (*i, input.clone())).collect();
    let mut uncharged = match write.operation {
        Operation::Create if interesting.is_empty() => input.clone(),
        _ => ResourceList::default(),
    };
    if write.operation == Operation::Update {
        let Some(old) = write.old else {
            return Err(Refusal::Forbidden(
                "unable to get previous usage since prior version of object was not found"
                    .to_owned(),
            ));
        };
        let delta = input.minus_non_negative(&evaluator.usage(old, now));
        if interesting.is_empty() {
            uncharged = delta.clone();
        }
        for index in &interesting {
            let quota = &quotas[*index];
            if evaluator.matches(&quota.hard, &quota.selectors, old) {
                deltas.insert(*index, delta.clone());
            }
        }
    }
    deltas = (deltas.into_iter())
        .map(|(index, delta)| (index, delta.without_zeros()))
        .filter(|(_, delta)| !delta.is_empty())
        .collect();
    if deltas.is_empty() && (!interesting.is_empty() || uncharged.without_zeros().is_empty()) {
        return Ok(unchanged);
    }

    let uncovered: Vec<&str> = (limited_names.iter())
        .filter(|n| !restricted_names.contains(*n))
        .map(String::as_str)
        .collect();
    if !uncovered.is_empty() {
        return Err(Refusal::Forbidden(format!(
            "insufficient quota to consume: {}",
            uncovered.join(",")
        )));
    }
    let uncovered_scopes: Vec<ScopeSelector> = (limited_scopes.into_iter())
        .filter(|l| !restricted_scopes.iter().any(|r| r.scope == l.scope))
        .cloned()
        .collect();
    if !uncovered_scopes.is_empty() {
        return Err(Refusal::Internal(format!(
            "insufficient quota to match these scopes: {}",
            print(&uncovered_scopes)
        )));
    }

    let mut changed = BTreeMap::new();
    for (index, delta) in deltas {
        let quota = &quotas[index];
        let requested = delta.mask(|n| quota.hard.contains(n));
        let mut used = quota.used.clone();
        used.add(&requested);
        if write.subresource != "status" {
            let exceeded = used.mask(|n| requested.contains(n)).exceeding(&quota.hard);
            if !exceeded.is_empty() {
                let only = |list: &ResourceList| list.mask(|n| exceeded.iter().any(|e| e == n));
                return Err(Refusal::Forbidden(format!(
                    "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                    quota.name,
                    only(&requested),
                    only(&quota.used),
                    only(&quota.hard)
                )));
            }
        }
        if !used.same_amounts(&quota.used) {
            changed.insert(index, used);
        }
    }
    Ok(changed)
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;

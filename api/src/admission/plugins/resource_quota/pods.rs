//! What a pod costs a quota, as Kubernetes' pod evaluator measures it: its object count,
//! and while it is not finished its compute resources (the requests and limits of its
//! containers, init containers and sidecars, with its overhead), the pod scopes it matches,
//! and the "must specify" constraint on cpu and memory quotas.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::super::quantity::Quantity;
use super::resources::ResourceList;
use super::scopes::ScopeSelector;

/// The object count name of pods.
pub const COUNT: &str = "count/pods";

/// The resources the pod evaluator covers besides prefixed and extended ones.
const RESOURCES: [&str; 11] = [
    COUNT,
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
];

/// The resources a quota on which requires every container to state them.
const REQUIRED: [&str; 6] = [
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// The most containers of one kind read from one pod.
const MAX_CONTAINERS: usize = 1024;

/// Whether a resource name has no domain of its own or Kubernetes' (`IsNativeResource`).
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// Whether a quota's resource name is an extended resource's request (`requests.<name>`).
fn is_extended_quota_name(name: &str) -> bool {
    !is_native(name) && name.starts_with("requests.")
}

/// Whether the pod evaluator covers the quota resource `name`.
pub fn covers(name: &str) -> bool {
    RESOURCES.contains(&name)
        || name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
        || is_extended_quota_name(name)
}

fn containers<'a>(pod: &'a Value, list: &str) -> impl Iterator<Item = &'a Value> + 'a {
    (pod.pointer(&format!("/spec/{list}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .take(MAX_CONTAINERS)
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The pod's requests or limits (`field`): its containers' summed, raised to what each init
/// container needs with the sidecars started before it, plus the overhead (Kubernetes'
/// `PodRequests` / `PodLimits`); a pod-level value of cpu or memory replaces the aggregate.
fn aggregate(pod: &Value, field: &str) -> ResourceList {
    let own = |c: &Value| ResourceList::from_json(c.pointer(&format!("/resources/{field}")));
    let mut total = ResourceList::default();
    for container in containers(pod, "containers") {
        total.add(&own(container));
    }
    let (mut sidecars, mut init_peak) = (ResourceList::default(), ResourceList::default());
    for init in containers(pod, "initContainers") {
        let mut needs = own(init);
        if text(init, "/restartPolicy") == "Always" {
            total.add(&needs);
            sidecars.add(&needs);
            needs = sidecars.clone();
        } else {
            needs.add(&sidecars);
        }
        init_peak.max(&needs);
    }
    total.max(&init_peak);
    let overhead = ResourceList::from_json(pod.pointer("/spec/overhead"));
    if field == "requests" {
        total.add(&overhead);
    } else {
        let present = overhead.mask(|name| total.contains(name));
        total.add(&present);
    }
    let pod_level = ResourceList::from_json(pod.pointer(&format!("/spec/resources/{field}")));
    for (name, q) in pod_level.iter() {
        if name == "cpu" || name == "memory" {
            total.set(name, q);
        }
    }
    total
}

/// What containers with `requests` and `limits` cost (`podComputeUsageHelper`).
fn compute_usage(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut usage = ResourceList::default();
    usage.set("pods", Quantity::count(1));
    for resource in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(q) = requests.get(resource) {
            usage.set(resource, q);
            usage.set(format!("requests.{resource}"), q);
        }
        if let Some(q) = limits.get(resource) {
            usage.set(format!("limits.{resource}"), q);
        }
    }
    for (name, q) in requests.iter() {
        if name.starts_with("hugepages-") {
            usage.set(name, q);
            usage.set(format!("requests.{name}"), q);
        } else if !is_native(name) && !name.starts_with("requests.") {
            usage.set(format!("requests.{name}"), q);
        }
    }
    usage
}

/// Whether the pod is charged for compute resources: not finished, and not past the grace
/// period of its deletion (`QuotaV1Pod`).
fn charged(pod: &Value, now: DateTime<Utc>) -> bool {
    if matches!(text(pod, "/status/phase"), "Failed" | "Succeeded") {
        return false;
    }
    let deleted = DateTime::parse_from_rfc3339(text(pod, "/metadata/deletionTimestamp"));
    let grace = pod
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64);
    let Ok(at) = deleted else {
        return true;
    };
    let ends = grace
        .and_then(chrono::Duration::try_seconds)
        .and_then(|grace| at.with_timezone(&Utc).checked_add_signed(grace));
    ends.is_none_or(|ends| ends >= now)
}

/// What the pod costs (`PodUsageFunc`).
pub fn usage(pod: &Value, now: DateTime<Utc>) -> ResourceList {
    let mut usage = ResourceList::default();
    usage.set(COUNT, Quantity::count(1));
    if charged(pod, now) {
        let compute = compute_usage(&aggregate(pod, "requests"), &aggregate(pod, "limits"));
        usage.add(&compute);
    }
    usage
}

/// Whether no container and not the pod itself requests or limits cpu or memory.
fn is_best_effort(pod: &Value) -> bool {
    let states = |resources: Option<&Value>| {
        ["requests", "limits"].into_iter().any(|field| {
            let list = ResourceList::from_json(resources.and_then(|r| r.get(field)));
            ["cpu", "memory"]
                .into_iter()
                .any(|name| list.get(name).is_some_and(|q| q.nanos() > 0))
        })
    };
    let any_container = ["containers", "initContainers"]
        .into_iter()
        .any(|list| containers(pod, list).any(|c| states(c.get("resources"))));
    !any_container && !states(pod.pointer("/spec/resources"))
}

/// Whether an affinity term names other namespaces.
fn cross_namespace(term: &Value) -> bool {
    term.get("namespaces")
        .and_then(Value::as_array)
        .is_some_and(|n| !n.is_empty())
        || term.get("namespaceSelector").is_some_and(|s| !s.is_null())
}

fn uses_cross_namespace_affinity(pod: &Value) -> bool {
    ["podAffinity", "podAntiAffinity"].into_iter().any(|kind| {
        let affinity = pod.pointer(&format!("/spec/affinity/{kind}"));
        let required = (affinity
            .and_then(|a| a.get("requiredDuringSchedulingIgnoredDuringExecution")))
        .and_then(Value::as_array);
        let preferred = (affinity
            .and_then(|a| a.get("preferredDuringSchedulingIgnoredDuringExecution")))
        .and_then(Value::as_array);
        required.into_iter().flatten().any(cross_namespace)
            || (preferred.into_iter().flatten())
                .any(|weighted| weighted.get("podAffinityTerm").is_some_and(cross_namespace))
    })
}

/// Whether the pod matches the scope selector (`podMatchesScopeFunc`).
pub fn matches_scope(selector: &ScopeSelector, pod: &Value) -> bool {
    let terminating = pod
        .pointer("/spec/activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|s| s >= 0);
    match selector.scope.as_str() {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => is_best_effort(pod),
        "NotBestEffort" => !is_best_effort(pod),
        "PriorityClass" => {
            let class = Some(text(pod, "/spec/priorityClassName")).filter(|c| !c.is_empty());
            selector.holds_for(class)
        }
        "CrossNamespacePodAffinity" => uses_cross_namespace_affinity(pod),
        _ => false,
    }
}

/// The refusal of a pod whose containers do not state a cpu or memory resource one of
/// `required` (the quota's pod resources) covers: `must specify <resource> for:
/// <containers>; ...` (Kubernetes' `Constraints`).
pub fn constraints(required: &[String], pod: &Value) -> Result<(), String> {
    let required: BTreeSet<&str> = (required.iter())
        .map(String::as_str)
        .filter(|r| REQUIRED.contains(r))
        .collect();
    if required.is_empty() {
        return Ok(());
    }
    let mut missing: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for container in containers(pod, "containers").chain(containers(pod, "initContainers")) {
        let resources = container.get("resources");
        let own = |field: &str| ResourceList::from_json(resources.and_then(|r| r.get(field)));
        let stated = compute_usage(&own("requests"), &own("limits"));
        for &resource in &required {
            if !stated.contains(resource) {
                missing
                    .entry(resource)
                    .or_default()
                    .insert(text(container, "/name"));
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = (missing.iter())
        .map(|(resource, names)| {
            let names: Vec<&str> = names.iter().copied().collect();
            format!("{resource} for: {}", names.join(","))
        })
        .collect();
    Err(format!("must specify {}", parts.join("; ")))
}

#[cfg(test)]
#[path = "pods_tests.rs"]
mod tests;

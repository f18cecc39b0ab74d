//! The quota evaluators, shared by the admission plugin and the `resourcequota` controller:
//! for each resource, which quota resources it is charged to, which writes change its usage,
//! the scopes it matches and what one object costs (Kubernetes' `pkg/quota/v1/evaluator/core`
//! and the generic object count evaluator every other resource gets).

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::super::quantity::Quantity;
use super::pods;
use super::resources::ResourceList;
use super::scopes::ScopeSelector;
use crate::admission::Operation;

/// `<class>.storageclass.storage.k8s.io/<resource>`: a claim resource by storage class.
const STORAGE_CLASS: &str = ".storageclass.storage.k8s.io/";

/// Where a claim's storage class was written before `spec.storageClassName` (it wins).
const BETA_CLASS: &str = "/metadata/annotations/volume.beta.kubernetes.io~1storage-class";

/// The core resources whose object count is also charged to their plural alone.
const ALIASED: [&str; 4] = [
    "configmaps",
    "secrets",
    "replicationcontrollers",
    "resourcequotas",
];

/// How one resource is measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evaluator {
    /// Pods: count and compute resources, with scopes.
    Pods,
    /// Services: count, load balancers and node ports.
    Services,
    /// PersistentVolumeClaims: count and storage, also by storage class.
    Claims,
    /// Any other resource: its object count `count/<plural>[.<group>]` (and the legacy name of
    /// configmaps, secrets, replicationcontrollers and resourcequotas).
    Count {
        /// The API group (empty: core).
        group: String,
        /// The resource's plural.
        plural: String,
    },
}

/// A write as an evaluator judges it.
#[derive(Debug, Clone, Copy)]
pub struct Write<'a> {
    /// What is done.
    pub operation: Operation,
    /// The subresource written, empty for the object.
    pub subresource: &'a str,
    /// The object written.
    pub object: &'a Value,
    /// The object before an update.
    pub old: Option<&'a Value>,
}

/// `count/<plural>` for the core group, `count/<plural>.<group>` for others.
pub fn count_name(group: &str, plural: &str) -> String {
    match group {
        "" => format!("count/{plural}"),
        group => format!("count/{plural}.{group}"),
    }
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

impl Evaluator {
    /// The evaluator of the resource `plural` of `group`.
    pub fn of(group: &str, plural: &str) -> Self {
        match (group, plural) {
            ("", "pods") => Self::Pods,
            ("", "services") => Self::Services,
            ("", "persistentvolumeclaims") => Self::Claims,
            _ => Self::Count {
                group: group.to_owned(),
                plural: plural.to_owned(),
            },
        }
    }

    /// The evaluator a quota resource name is charged by, `None` for a name none measures.
    pub fn for_quota_resource(name: &str) -> Option<Self> {
        if let Some(counted) = name.strip_prefix("count/") {
            let (plural, group) = counted.split_once('.').unwrap_or((counted, ""));
            return Some(Self::of(group, plural));
        }
        if pods::covers(name) {
            return Some(Self::Pods);
        }
        if name.starts_with("services") {
            return Some(Self::Services).filter(|e| e.covers(name));
        }
        if Self::Claims.covers(name) {
            return Some(Self::Claims);
        }
        ALIASED.contains(&name).then(|| Self::of("", name))
    }

    /// The group and plural the evaluator measures.
    pub fn group_resource(&self) -> (&str, &str) {
        match self {
            Self::Pods => ("", "pods"),
            Self::Services => ("", "services"),
            Self::Claims => ("", "persistentvolumeclaims"),
            Self::Count { group, plural } => (group, plural),
        }
    }

    /// Whether the evaluator measures the quota resource `name` (`MatchingResources`).
    pub fn covers(&self, name: &str) -> bool {
        match self {
            Self::Pods => pods::covers(name),
            Self::Services => matches!(
                name,
                "services" | "count/services" | "services.loadbalancers" | "services.nodeports"
            ),
            Self::Claims => {
                matches!(
                    name,
                    "persistentvolumeclaims" | "count/persistentvolumeclaims" | "requests.storage"
                ) || ["persistentvolumeclaims", "requests.storage"]
                    .iter()
                    .any(|r| name.ends_with(&format!("{STORAGE_CLASS}{r}")))
            }
            Self::Count { group, plural } => {
                name == count_name(group, plural)
                    || (group.is_empty() && plural == name && ALIASED.contains(&name))
            }
        }
    }

    /// Whether the write changes the usage the evaluator measures (`Handles`).
    pub fn handles(&self, write: &Write<'_>) -> bool {
        let (operation, subresource) = (write.operation, write.subresource);
        match self {
            Self::Pods => match subresource {
                "" => operation == Operation::Create,
                "resize" => operation == Operation::Update,
                _ => false,
            },
            Self::Services => matches!(operation, Operation::Create | Operation::Update),
            Self::Claims => match subresource {
                "" => matches!(operation, Operation::Create | Operation::Update),
                "status" => write.old.is_some_and(|old| {
                    let allocated = "/status/allocatedResources/storage";
                    old.pointer(allocated) != write.object.pointer(allocated)
                        || text(old, "/spec/volumeAttributesClassName")
                            != text(write.object, "/spec/volumeAttributesClassName")
                }),
                _ => false,
            },
            Self::Count { .. } => subresource.is_empty() && operation == Operation::Create,
        }
    }

    /// Whether `object` matches the scope selector (`MatchingScopes` for one selector;
    /// resources without scopes match none).
    pub fn matches_scope(&self, selector: &ScopeSelector, object: &Value) -> bool {
        match self {
            Self::Pods => pods::matches_scope(selector, object),
            Self::Claims if selector.scope == "VolumeAttributesClass" => {
                let classes: Vec<&str> = [
                    "/spec/volumeAttributesClassName",
                    "/status/currentVolumeAttributesClassName",
                    "/status/modifyVolumeStatus/targetVolumeAttributesClassName",
                ]
                .iter()
                .map(|p| text(object, p))
                .filter(|c| !c.is_empty())
                .collect();
                if classes.is_empty() {
                    return selector.holds_for(None);
                }
                classes.into_iter().any(|c| selector.holds_for(Some(c)))
            }
            _ => false,
        }
    }

    /// Whether the quota `hard` with `selectors` applies to `object`: it limits a resource
    /// the evaluator measures and the object matches every scope (`generic.Matches`).
    pub fn matches(
        &self,
        hard: &ResourceList,
        selectors: &[ScopeSelector],
        object: &Value,
    ) -> bool {
        hard.names().any(|name| self.covers(name))
            && selectors.iter().all(|s| self.matches_scope(s, object))
    }

    /// What `object` costs (`Usage`); `now` decides whether a deleted pod is past its grace.
    pub fn usage(&self, object: &Value, now: DateTime<Utc>) -> ResourceList {
        let mut usage = ResourceList::default();
        let one = Quantity::count(1);
        match self {
            Self::Pods => return pods::usage(object, now),
            Self::Services => {
                usage.set("count/services", one);
                usage.set("services", one);
                let ports = (object.pointer("/spec/ports").and_then(Value::as_array))
                    .map_or(0, |ports| ports.len());
                let (balancers, node_ports) = match text(object, "/spec/type") {
                    "NodePort" => (0, ports),
                    "LoadBalancer" => {
                        let suppressed = object.pointer("/spec/allocateLoadBalancerNodePorts")
                            == Some(&Value::Bool(false));
                        let explicit = (object.pointer("/spec/ports").and_then(Value::as_array))
                            .map_or(0, |ports| {
                                (ports.iter())
                                    .filter(|p| {
                                        p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0
                                    })
                                    .count()
                            });
                        (1, if suppressed { explicit } else { ports })
                    }
                    _ => (0, 0),
                };
                let count = |n: usize| Quantity::count(i64::try_from(n).unwrap_or(i64::MAX));
                usage.set("services.loadbalancers", count(balancers));
                usage.set("services.nodeports", count(node_ports));
            }
            Self::Claims => {
                usage.set("persistentvolumeclaims", one);
                usage.set("count/persistentvolumeclaims", one);
                let class = match text(object, BETA_CLASS) {
                    "" => text(object, "/spec/storageClassName"),
                    annotated => annotated,
                };
                if !class.is_empty() {
                    usage.set(format!("{class}{STORAGE_CLASS}persistentvolumeclaims"), one);
                }
                let request = Quantity::parse(text(object, "/spec/resources/requests/storage"));
                let allocated = Quantity::parse(text(object, "/status/allocatedResources/storage"));
                let storage = match (request, allocated) {
                    (Some(r), Some(a)) if a.nanos() > r.nanos() => Some(a.whole()),
                    (Some(r), _) => Some(r.whole()),
                    (None, _) => None,
                };
                if let Some(storage) = storage {
                    usage.set("requests.storage", storage);
                    if !class.is_empty() {
                        usage.set(format!("{class}{STORAGE_CLASS}requests.storage"), storage);
                    }
                }
            }
            Self::Count { group, plural } => {
                usage.set(count_name(group, plural), one);
                if group.is_empty() && ALIASED.contains(&plural.as_str()) {
                    usage.set(plural.clone(), one);
                }
            }
        }
        usage
    }

    /// The refusal of an object that does not state what the quota resources `required`
    /// need (`Constraints`: pods' cpu and memory).
    pub fn constraints(&self, required: &[String], object: &Value) -> Result<(), String> {
        match self {
            Self::Pods => pods::constraints(required, object),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
#[path = "evaluator_tests.rs"]
mod tests;

//! `LimitRanger`: the LimitRanges of a namespace applied to its new pods (each container
//! without a request or limit of a resource gets the `Container` item's `defaultRequest` /
//! `default`, noted in the `<domain>/limit-ranger` annotation) and enforced on new pods and
//! on claims (`min`, `max`, `maxLimitRequestRatio` per `Container` and `Pod`; `min`/`max` of
//! a `PersistentVolumeClaim`'s storage request), with Kubernetes' messages.

use std::sync::Arc;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::default_storage_class::is_claim;
use super::objects::ObjectCache;
use super::pods::is_pod;
use super::quantity::Quantity;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::storage::Storage;

/// A resource list (`requests`, `limits`, a LimitRange item's `min`, ...), by resource name.
type Resources = Vec<(String, Quantity)>;

fn resources(value: Option<&Value>) -> Resources {
    (value.and_then(Value::as_object).into_iter().flatten())
        .filter_map(|(name, q)| Some((name.clone(), Quantity::parse(q.as_str()?)?)))
        .collect()
}

fn find(list: &Resources, name: &str) -> Option<Quantity> {
    list.iter().find(|(n, _)| n == name).map(|(_, q)| *q)
}

/// Adds `more` into `list` (a resource new to it keeps its own format).
fn add_into(list: &mut Resources, more: &Resources) {
    for (name, q) in more {
        match list.iter_mut().find(|(n, _)| n == name) {
            Some((_, total)) => *total = total.plus(*q),
            None => list.push((name.clone(), *q)),
        }
    }
}

/// Raises every resource of `list` to at least `other`'s.
fn max_into(list: &mut Resources, other: &Resources) {
    for (name, q) in other {
        match list.iter_mut().find(|(n, _)| n == name) {
            Some((_, current)) if q.nanos() > current.nanos() => *current = *q,
            Some(_) => {}
            None => list.push((name.clone(), *q)),
        }
    }
}

/// Applies and enforces LimitRanges.
pub struct LimitRanger {
    ranges: ObjectCache,
    /// `<domain>/limit-ranger`.
    annotation: String,
}

impl LimitRanger {
    /// The plugin reading `storage`'s LimitRanges.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor) -> Self {
        Self {
            ranges: ObjectCache::new(storage, "core", "limitranges"),
            annotation: format!("{}/limit-ranger", flavor.label_domain()),
        }
    }

    /// The LimitRanges of the write's namespace, when the write is one the plugin judges:
    /// a pod's create, a claim's create or update, not of an object being deleted.
    async fn ranges_for(
        &self,
        attributes: &Attributes<'_>,
        old: Option<&Value>,
    ) -> Result<Vec<Arc<Value>>, ApiError> {
        let judged = match attributes.operation {
            Operation::Create => is_pod(attributes) || is_claim(attributes),
            Operation::Update => is_claim(attributes),
            _ => false,
        };
        if !judged || old.is_some_and(|o| o.pointer("/metadata/deletionTimestamp").is_some()) {
            return Ok(Vec::new());
        }
        (self.ranges.list_in(attributes.namespace).await).map_err(|e| attributes.forbidden(e))
    }
}

/// The items of `range` of `kind`.
fn items<'a>(range: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    (range
        .pointer("/spec/limits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter(move |item| item.get("type").and_then(Value::as_str) == Some(kind))
}

/// Sets the defaults of `range`'s `Container` items on every container lacking them; the
/// annotation text of what was set.
fn apply_defaults(range: &Value, pod: &mut Value) -> Vec<String> {
    let (mut requests, mut limits) = (Map::new(), Map::new());
    for item in items(range, "Container") {
        for (field, into) in [("defaultRequest", &mut requests), ("default", &mut limits)] {
            if let Some(values) = item.get(field).and_then(Value::as_object) {
                into.extend(values.clone());
            }
        }
    }
    let mut notes = Vec::new();
    for (list, what) in [
        ("containers", "container"),
        ("initContainers", "init container"),
    ] {
        let containers = pod
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut);
        for container in containers.into_iter().flatten() {
            let name = container
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let Some(container) = container.as_object_mut() else {
                continue;
            };
            let own = container.entry("resources").or_insert_with(|| json!({}));
            for (field, defaults, word) in [
                ("requests", &requests, "request"),
                ("limits", &limits, "limit"),
            ] {
                let Some(own) = own.as_object_mut() else {
                    continue;
                };
                let present = own.entry(field).or_insert_with(|| json!({}));
                let Some(present) = present.as_object_mut() else {
                    continue;
                };
                let mut set: Vec<&str> = Vec::new();
                for (resource, value) in defaults {
                    if !present.contains_key(resource) {
                        present.insert(resource.clone(), value.clone());
                        set.push(resource);
                    }
                }
                if !set.is_empty() {
                    set.sort_unstable();
                    notes.push(format!("{} {word} for {what} {name}", set.join(", ")));
                }
            }
        }
    }
    notes
}

/// `min`: the request must exist and both request and limit reach it.
fn min_check(
    kind: &str,
    name: &str,
    min: Quantity,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let (r, l) = (find(req, name), find(lim, name));
    let [rv, lv, ev] = Quantity::comparable([r, l, Some(min)]);
    match r {
        None => Some(format!(
            "minimum {name} usage per {kind} is {min}.  No request is specified"
        )),
        Some(r) if rv < ev => Some(format!(
            "minimum {name} usage per {kind} is {min}, but request is {r}"
        )),
        _ => match l {
            Some(l) if lv < ev => Some(format!(
                "minimum {name} usage per {kind} is {min}, but limit is {l}"
            )),
            _ => None,
        },
    }
}

/// `max`: the limit must exist and neither limit nor request exceed it.
fn max_check(
    kind: &str,
    name: &str,
    max: Quantity,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let (r, l) = (find(req, name), find(lim, name));
    let [rv, lv, ev] = Quantity::comparable([r, l, Some(max)]);
    match l {
        None => Some(format!(
            "maximum {name} usage per {kind} is {max}.  No limit is specified"
        )),
        Some(l) if lv > ev => Some(format!(
            "maximum {name} usage per {kind} is {max}, but limit is {l}"
        )),
        _ => match r {
            Some(r) if rv > ev => Some(format!(
                "maximum {name} usage per {kind} is {max}, but request is {r}"
            )),
            _ => None,
        },
    }
}

/// `max` of a claim: on its request only.
fn max_request_check(kind: &str, name: &str, max: Quantity, req: &Resources) -> Option<String> {
    let r = find(req, name);
    let [rv, ev] = Quantity::comparable([r, Some(max)]);
    match r {
        None => Some(format!(
            "maximum {name} usage per {kind} is {max}.  No request is specified"
        )),
        Some(r) if rv > ev => Some(format!(
            "maximum {name} usage per {kind} is {max}, but request is {r}"
        )),
        _ => None,
    }
}

/// `maxLimitRequestRatio`: limit over request at most the ratio.
fn ratio_check(
    kind: &str,
    name: &str,
    ratio: Quantity,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let (r, l) = (find(req, name), find(lim, name));
    let [rv, lv, _] = Quantity::comparable([r, l, Some(ratio)]);
    let prefix = format!("{name} max limit to request ratio per {kind} is {ratio}, but");
    if r.is_none() || rv == 0 {
        return Some(format!("{prefix} no request is specified or request is 0"));
    }
    if l.is_none() || lv == 0 {
        return Some(format!("{prefix} no limit is specified or limit is 0"));
    }
    let observed = lv as f64 / rv as f64;
    let (scaled, allowed) = if ratio.milli_fits() {
        (observed * 1000.0, ratio.milli_value() as f64)
    } else {
        (observed, ratio.value() as f64)
    };
    (scaled > allowed).then(|| format!("{prefix} provided ratio is {observed:.6}"))
}

/// Every check of `item` (a `kind` item) on one set of requests and limits.
fn check_item(
    item: &Value,
    kind: &str,
    req: &Resources,
    lim: &Resources,
    errors: &mut Vec<String>,
) {
    for (name, q) in resources(item.get("min")) {
        errors.extend(min_check(kind, &name, q, req, lim));
    }
    for (name, q) in resources(item.get("max")) {
        errors.extend(max_check(kind, &name, q, req, lim));
    }
    for (name, q) in resources(item.get("maxLimitRequestRatio")) {
        errors.extend(ratio_check(kind, &name, q, req, lim));
    }
}

/// A container's requests and limits.
fn container_resources(container: &Value) -> (Resources, Resources) {
    (
        resources(container.pointer("/resources/requests")),
        resources(container.pointer("/resources/limits")),
    )
}

/// The pod's requests and limits as one: the containers' sums, raised to what any init
/// container needs (sidecars, `restartPolicy: Always`, add up and run beside the rest).
fn pod_resources(pod: &Value) -> (Resources, Resources) {
    let list = |field: &str| {
        pod.pointer(&format!("/spec/{field}"))
            .and_then(Value::as_array)
    };
    let (mut requests, mut limits) = (Resources::new(), Resources::new());
    for container in list("containers").into_iter().flatten() {
        let (r, l) = container_resources(container);
        add_into(&mut requests, &r);
        add_into(&mut limits, &l);
    }
    let (mut sidecar_r, mut sidecar_l) = (Resources::new(), Resources::new());
    let (mut init_r, mut init_l) = (Resources::new(), Resources::new());
    for container in list("initContainers").into_iter().flatten() {
        let (r, l) = container_resources(container);
        if container.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            add_into(&mut requests, &r);
            add_into(&mut limits, &l);
            add_into(&mut sidecar_r, &r);
            add_into(&mut sidecar_l, &l);
            max_into(&mut init_r, &sidecar_r);
            max_into(&mut init_l, &sidecar_l);
        } else {
            let (mut needed_r, mut needed_l) = (r, l);
            add_into(&mut needed_r, &sidecar_r);
            add_into(&mut needed_l, &sidecar_l);
            max_into(&mut init_r, &needed_r);
            max_into(&mut init_l, &needed_l);
        }
    }
    max_into(&mut requests, &init_r);
    max_into(&mut limits, &init_l);
    (requests, limits)
}

/// What `range` refuses of `pod`.
fn pod_errors(range: &Value, pod: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    for item in items(range, "Container") {
        for list in ["containers", "initContainers"] {
            let containers = pod
                .pointer(&format!("/spec/{list}"))
                .and_then(Value::as_array);
            for container in containers.into_iter().flatten() {
                let (req, lim) = container_resources(container);
                check_item(item, "Container", &req, &lim, &mut errors);
            }
        }
    }
    for item in items(range, "Pod") {
        let (req, lim) = pod_resources(pod);
        check_item(item, "Pod", &req, &lim, &mut errors);
    }
    errors
}

/// What `range` refuses of `claim`'s storage request.
fn claim_errors(range: &Value, claim: &Value) -> Vec<String> {
    let requests = resources(claim.pointer("/spec/resources/requests"));
    let mut errors = Vec::new();
    for item in items(range, "PersistentVolumeClaim") {
        for (name, q) in resources(item.get("min")) {
            errors.extend(min_check(
                "PersistentVolumeClaim",
                &name,
                q,
                &requests,
                &Vec::new(),
            ));
        }
        for (name, q) in resources(item.get("max")) {
            errors.extend(max_request_check(
                "PersistentVolumeClaim",
                &name,
                q,
                &requests,
            ));
        }
    }
    errors
}

/// Kubernetes' aggregate of errors: one alone, several as `[a, b]`.
fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[async_trait::async_trait]
impl Plugin for LimitRanger {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(pod) = object.filter(|_| is_pod(attributes)) else {
            return Ok(());
        };
        for range in self.ranges_for(attributes, old).await? {
            let notes = apply_defaults(&range, pod);
            if notes.is_empty() {
                continue;
            }
            let text = format!("LimitRanger plugin set: {}", notes.join("; "));
            if let Some(metadata) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
                let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
                if !annotations.is_object() {
                    *annotations = json!({});
                }
                annotations[&self.annotation] = json!(text);
            }
        }
        Ok(())
    }

    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(object) = object else {
            return Ok(());
        };
        for range in self.ranges_for(attributes, old).await? {
            let errors = if is_pod(attributes) {
                pod_errors(&range, object)
            } else {
                claim_errors(&range, object)
            };
            if !errors.is_empty() {
                return Err(attributes.forbidden(aggregate(&errors)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "limit_ranger_tests.rs"]
mod tests;

//! Reconciling one stored default object with its default (R-ACC-185, R-ACC-186), as
//! kube-apiserver's start-up hook and `kubectl auth reconcile` do without removing anything:
//! an object annotated `rbac.authorization.<label domain>/autoupdate: "false"` is left alone;
//! otherwise missing labels and annotations are added (stored values win), a role gains the
//! rules it lacks (each missing permission as its own rule; extra rules stay, so an
//! aggregated role keeps its aggregated rules) and the aggregation selectors it lacks, and a
//! binding gains the subjects it lacks (extra subjects stay). A binding whose `roleRef`
//! differs must be recreated, since `roleRef` cannot change.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::autoupdate_annotation;
use crate::flavor::Flavor;

/// What reconciliation does to a stored default object.
#[derive(Debug, Clone, PartialEq)]
pub enum Reconciled {
    /// It already holds everything the default has.
    Unchanged,
    /// It is annotated autoupdate `"false"`: left as it is.
    Protected,
    /// It is replaced by this object (the stored one with what it lacked added).
    Update(Value),
    /// The binding refers to another role: it is deleted and this object created.
    Recreate(Value),
}

/// How the stored default object `existing` is reconciled with its default `wanted`.
pub fn reconcile(existing: &Value, wanted: &Value, flavor: Flavor) -> Reconciled {
    let annotation = autoupdate_annotation(flavor);
    let annotations = existing.pointer("/metadata/annotations");
    if annotations
        .and_then(|a| a.get(&annotation))
        .and_then(Value::as_str)
        == Some("false")
    {
        return Reconciled::Protected;
    }
    let mut result = existing.clone();
    for field in ["labels", "annotations"] {
        merge_map(&mut result["metadata"], &wanted["metadata"], field);
    }
    if wanted.get("roleRef").is_some() {
        add_missing(&mut result, wanted, "subjects");
        if existing.get("roleRef") != wanted.get("roleRef") {
            result["roleRef"] = wanted["roleRef"].clone();
            return Reconciled::Recreate(for_creation(result));
        }
    } else {
        reconcile_aggregation(&mut result, wanted);
        let held = items(existing, "rules");
        let missing: Vec<Value> = items(wanted, "rules")
            .iter()
            .flat_map(breakdown)
            .filter(|atom| !held.iter().any(|rule| covers(rule, atom)))
            .collect();
        if !missing.is_empty() {
            let mut rules = held;
            rules.extend(missing);
            result["rules"] = Value::Array(rules);
        }
    }
    if result == *existing {
        Reconciled::Unchanged
    } else {
        Reconciled::Update(result)
    }
}

/// Adds the entries of `wanted.field` missing from `target.field`; stored values win.
fn merge_map(target: &mut Value, wanted: &Value, field: &str) {
    let Some(wanted) = wanted.get(field).and_then(Value::as_object) else {
        return;
    };
    if !target[field].is_object() {
        target[field] = Value::Object(Map::new());
    }
    if let Some(target) = target[field].as_object_mut() {
        for (key, value) in wanted {
            target.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
}

fn items(object: &Value, field: &str) -> Vec<Value> {
    object
        .get(field)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Appends the entries of `wanted.field` that `target.field` does not have.
fn add_missing(target: &mut Value, wanted: &Value, field: &str) {
    let mut held = items(target, field);
    let before = held.len();
    for item in items(wanted, field) {
        if !held.contains(&item) {
            held.push(item);
        }
    }
    if held.len() != before {
        target[field] = Value::Array(held);
    }
}

/// Sets the default's aggregation rule on a role without one, or adds the selectors it lacks.
fn reconcile_aggregation(target: &mut Value, wanted: &Value) {
    let Some(rule) = wanted.get("aggregationRule") else {
        return;
    };
    if target.get("aggregationRule").is_none_or(Value::is_null) {
        target["aggregationRule"] = rule.clone();
    } else {
        add_missing(&mut target["aggregationRule"], rule, "clusterRoleSelectors");
    }
}

/// The object `stored` stripped of what the server sets, to be created afresh.
fn for_creation(mut stored: Value) -> Value {
    if let Some(meta) = stored["metadata"].as_object_mut() {
        for field in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "managedFields",
        ] {
            meta.remove(field);
        }
    }
    stored
}

fn strings<'a>(rule: &'a Value, field: &str) -> Vec<&'a str> {
    rule.get(field)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `rule` as rules of one verb on one URL, or one verb on one resource of one group (and one
/// name when it names objects).
fn breakdown(rule: &Value) -> Vec<Value> {
    let verbs = strings(rule, "verbs");
    let urls = strings(rule, "nonResourceURLs");
    let mut atoms = Vec::new();
    for verb in &verbs {
        for url in &urls {
            atoms.push(json!({"nonResourceURLs": [url], "verbs": [verb]}));
        }
        for group in strings(rule, "apiGroups") {
            for resource in strings(rule, "resources") {
                let atom = json!({"apiGroups": [group], "resources": [resource], "verbs": [verb]});
                let names = strings(rule, "resourceNames");
                for name in &names {
                    let mut named = atom.clone();
                    named["resourceNames"] = json!([name]);
                    atoms.push(named);
                }
                if names.is_empty() {
                    atoms.push(atom);
                }
            }
        }
    }
    atoms
}

fn has(list: &[&str], item: &str) -> bool {
    list.iter().any(|x| *x == "*" || *x == item)
}

/// Whether the resource `owner` (`*`, `<resource>`, `*/<subresource>`) covers `resource`.
fn resource_covered(owner: &str, resource: &str) -> bool {
    if owner == "*" || owner == resource {
        return true;
    }
    match (owner.strip_prefix("*/"), resource.split_once('/')) {
        (Some(sub), Some((_, wanted))) => sub == wanted,
        _ => false,
    }
}

/// Whether `rule` allows everything the one-permission rule `atom` allows.
fn covers(rule: &Value, atom: &Value) -> bool {
    let Some(verb) = strings(atom, "verbs").first().copied() else {
        return true;
    };
    if !has(&strings(rule, "verbs"), verb) {
        return false;
    }
    if let Some(url) = strings(atom, "nonResourceURLs").first() {
        return strings(rule, "nonResourceURLs").iter().any(|owner| {
            *owner == "*"
                || owner == url
                || owner
                    .strip_suffix('*')
                    .is_some_and(|prefix| url.starts_with(prefix))
        });
    }
    let (Some(group), Some(resource)) = (
        strings(atom, "apiGroups").first().copied(),
        strings(atom, "resources").first().copied(),
    ) else {
        return true;
    };
    let names = strings(rule, "resourceNames");
    has(&strings(rule, "apiGroups"), group)
        && strings(rule, "resources")
            .iter()
            .any(|owner| resource_covered(owner, resource))
        && (names.is_empty()
            || strings(atom, "resourceNames")
                .first()
                .is_some_and(|n| names.contains(n)))
}

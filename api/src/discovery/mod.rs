//! Discovery documents (spec 002 "API versions and groups"), generated from the registry:
//! `/api` (APIVersions), `/api/v1` and `/apis/<group>/<version>` (APIResourceList), `/apis`
//! (APIGroupList), `/apis/<group>` (APIGroup); and `/version`.
//!
//! Only the legacy (unaggregated) documents are served, with `Content-Type:
//! application/json`: clients that ask for aggregated discovery in `Accept` fall back to them
//! when the response is not of the aggregated type.

mod version;

use std::collections::BTreeMap;

use serde_json::Value;
use serde_json::json;

pub use version::version_info;

use crate::error::ApiError;
use crate::registry::Registry;
use crate::registry::ResourceType;
use crate::registry::subresource_verbs;
use crate::request::RequestInfo;

fn resource_entry(r: &ResourceType) -> Value {
    let mut entry = json!({
        "name": r.plural,
        "singularName": r.singular,
        "namespaced": r.is_namespaced(),
        "kind": r.kind,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        entry["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        entry["categories"] = json!(r.categories);
    }
    entry
}

/// The `APIResourceList` of `group`/`version` (empty group: core), if anything is served
/// there.
pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for r in registry
        .stores()
        .map(|s| s.resource())
        .filter(|r| r.group == group && r.version == version)
    {
        resources.push(resource_entry(r));
        for sub in &r.subresources {
            resources.push(json!({
                "name": format!("{}/{sub}", r.plural),
                "singularName": "",
                "namespaced": r.is_namespaced(),
                "kind": r.kind,
                "verbs": subresource_verbs(sub),
            }));
        }
    }
    if resources.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}

/// The `APIVersions` of the core group.
pub fn core_versions(registry: &Registry) -> Value {
    let mut versions: Vec<&str> = registry
        .stores()
        .map(|s| s.resource())
        .filter(|r| r.group.is_empty())
        .map(|r| r.version.as_str())
        .collect();
    versions.dedup();
    json!({"kind": "APIVersions", "versions": versions})
}

/// The named groups and their versions, in table order (the first version is preferred).
fn named_groups(registry: &Registry) -> BTreeMap<&str, Vec<&str>> {
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for r in registry.stores().map(|s| s.resource()) {
        if r.group.is_empty() {
            continue;
        }
        let versions = groups.entry(r.group.as_str()).or_default();
        if !versions.contains(&r.version.as_str()) {
            versions.push(r.version.as_str());
        }
    }
    groups
}

fn group_entry(name: &str, versions: &[&str]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    let preferred = versions.first().cloned().unwrap_or(Value::Null);
    json!({"name": name, "versions": versions, "preferredVersion": preferred})
}

/// The `APIGroupList` of the named groups.
pub fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = named_groups(registry)
        .iter()
        .map(|(name, versions)| group_entry(name, versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// The `APIGroup` of `group`, if served.
pub fn group(registry: &Registry, group: &str) -> Option<Value> {
    let groups = named_groups(registry);
    let versions = groups.get(group)?;
    let mut entry = group_entry(group, versions);
    entry["kind"] = "APIGroup".into();
    entry["apiVersion"] = "v1".into();
    Some(entry)
}

/// The discovery document of a non-resource GET, or 404 for any other path.
pub fn document(registry: &Registry, info: &RequestInfo) -> Result<Value, ApiError> {
    let parts: Vec<&str> = info
        .path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let doc = match parts.as_slice() {
        ["api"] => Some(core_versions(registry)),
        ["api", version] => resource_list(registry, "", version),
        ["apis"] => Some(group_list(registry)),
        ["apis", g] => group(registry, g),
        ["apis", g, version] => resource_list(registry, g, version),
        _ => None,
    };
    doc.ok_or(ApiError::UnknownResource)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flavor::Flavor;

    #[test]
    fn core_documents_come_from_the_table() {
        let registry = Registry::builtin(Flavor::Platform);
        assert_eq!(core_versions(&registry)["versions"], json!(["v1"]));
        let list = resource_list(&registry, "", "v1").expect("core v1");
        let cm = list["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|e| e["name"] == "configmaps"))
            .expect("configmaps listed");
        assert_eq!(cm["kind"], "ConfigMap");
        assert_eq!(cm["namespaced"], true);
        assert_eq!(cm["shortNames"], json!(["cm"]));
        let finalize = list["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|e| e["name"] == "namespaces/finalize"))
            .expect("namespaces/finalize listed");
        assert_eq!(finalize["verbs"], json!(["update"]));
        assert!(resource_list(&registry, "", "v2").is_none());
        let pods = list["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|e| e["name"] == "pods"))
            .expect("pods listed");
        assert_eq!(pods["categories"], json!(["all"]));
        let names: Vec<&str> = list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["name"].as_str())
            .collect();
        assert!(names.contains(&"pods/status"));
        assert!(
            !names.contains(&"pods/exec") && !names.contains(&"serviceaccounts/token"),
            "subresources not served yet stay out of discovery"
        );
        assert_eq!(
            group(&registry, "rbac.authorization.platform.io")
                .map(|g| g["preferredVersion"]["groupVersion"].clone()),
            Some(json!("rbac.authorization.platform.io/v1"))
        );
        assert_eq!(
            group(&registry, "autoscaling").map(|g| g["versions"].clone()),
            Some(json!([{"groupVersion": "autoscaling/v2", "version": "v2"}])),
            "autoscaling/v1 waits for the HPA conversion"
        );
        assert!(group(&registry, "rbac.authorization.k8s.io").is_none());
    }
}

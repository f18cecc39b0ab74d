//! The legacy (unaggregated) discovery documents, generated from the served rows:
//! `/api` (APIVersions), `/api/<v>` and `/apis/<g>/<v>` (APIResourceList), `/apis`
//! (APIGroupList) and `/apis/<g>` (APIGroup).
//!
//! The registry keeps its stores in Kubernetes' priority order (groups as upstream's `/apis`
//! lists them, versions GA before beta before alpha, newest first), so order of first
//! appearance is the discovery order and the first version of a group is its preferred one.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use serde_json::json;
use sha2::Digest;
use sha2::Sha256;

use crate::flavor::Flavor;
use crate::registry::ResourceType;
use crate::registry::subresource_kind;
use crate::registry::subresource_verbs;

/// The `storageVersionHash` of a resource stored as `group`/`version` `kind`: the first 8
/// bytes of SHA-256 over `<group>/<version>/<kind>`, in standard base64, as Kubernetes
/// computes it. Clients only compare it for equality (a change means a storage migration).
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = Sha256::digest(format!("{group}/{version}/{kind}").as_bytes());
    STANDARD.encode(&digest[..8])
}

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
    // The hash names the storage version: a row that shares another's storage (events.k8s.io
    // events, autoscaling/v1 HPAs) has its home's hash, as upstream.
    let home = &r.storage;
    entry["storageVersionHash"] =
        storage_version_hash(&home.group, &home.version, &home.kind).into();
    entry
}

/// The served subresources' entries: `status` and `finalize` answer the parent kind; the
/// others name their own kind, with its `group` and `version` when they differ from the
/// parent's (`deployments/scale`: `autoscaling` `v1` Scale), as upstream lists them.
fn subresource_entries(r: &ResourceType, flavor: Flavor) -> impl Iterator<Item = Value> + '_ {
    r.subresources.iter().map(move |sub| {
        let mut entry = json!({
            "name": format!("{}/{sub}", r.plural),
            "singularName": "",
            "namespaced": r.is_namespaced(),
            "kind": r.kind,
            "verbs": subresource_verbs(sub),
        });
        if let Some((group, version, kind)) = subresource_kind(sub, flavor) {
            if group != r.group || version != r.version {
                entry["group"] = group.into();
                entry["version"] = version.into();
            }
            entry["kind"] = kind.into();
        }
        entry
    })
}

/// The `APIResourceList` of `group`/`version` (empty group: core) in `flavor`, if anything is
/// served there.
pub fn resource_list(
    served: &[ResourceType],
    flavor: Flavor,
    group: &str,
    version: &str,
) -> Option<Value> {
    let mut resources = Vec::new();
    for r in served
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        resources.push(resource_entry(r));
        resources.extend(subresource_entries(r, flavor));
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

/// The served versions of `group` (empty: core), in priority order.
pub fn versions<'a>(served: &'a [ResourceType], group: &str) -> Vec<&'a str> {
    let mut versions: Vec<&str> = Vec::new();
    for r in served.iter().filter(|r| r.group == group) {
        if !versions.contains(&r.version.as_str()) {
            versions.push(&r.version);
        }
    }
    versions
}

/// The served named groups, in priority order.
pub fn named_groups(served: &[ResourceType]) -> Vec<&str> {
    let mut groups: Vec<&str> = Vec::new();
    for r in served.iter().filter(|r| !r.group.is_empty()) {
        if !groups.contains(&r.group.as_str()) {
            groups.push(&r.group);
        }
    }
    groups
}

/// The `APIVersions` of the core group.
pub fn core_versions(served: &[ResourceType]) -> Value {
    json!({"kind": "APIVersions", "versions": versions(served, "")})
}

fn group_entry(served: &[ResourceType], name: &str) -> Value {
    let versions: Vec<Value> = versions(served, name)
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    let preferred = versions.first().cloned().unwrap_or(Value::Null);
    json!({"name": name, "versions": versions, "preferredVersion": preferred})
}

/// The `APIGroupList` of the named groups.
pub fn group_list(served: &[ResourceType]) -> Value {
    let groups: Vec<Value> = named_groups(served)
        .into_iter()
        .map(|g| group_entry(served, g))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// The `APIGroup` of a served named `group`.
pub fn group(served: &[ResourceType], group: &str) -> Value {
    let mut entry = group_entry(served, group);
    entry["kind"] = "APIGroup".into();
    entry["apiVersion"] = "v1".into();
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    // The two values upstream's discovery serves for core v1 ConfigMap and Pod.
    #[test]
    fn storage_version_hash_matches_kubernetes() {
        assert_eq!(storage_version_hash("", "v1", "ConfigMap"), "qFsyl6wFWjQ=");
        assert_eq!(storage_version_hash("", "v1", "Pod"), "xPOwRZ+Yhw8=");
    }

    #[test]
    fn core_documents_come_from_the_table() {
        let registry = crate::registry::Registry::builtin(Flavor::Platform);
        let registry = registry.served_types();
        assert_eq!(core_versions(&registry)["versions"], json!(["v1"]));
        let list = resource_list(&registry, Flavor::Platform, "", "v1").expect("core v1");
        let find = |name: &str| {
            list["resources"]
                .as_array()
                .and_then(|r| r.iter().find(|e| e["name"] == name))
                .cloned()
                .unwrap_or_else(|| panic!("{name} listed"))
        };
        let cm = find("configmaps");
        assert_eq!(cm["kind"], "ConfigMap");
        assert_eq!(cm["namespaced"], true);
        assert_eq!(cm["shortNames"], json!(["cm"]));
        assert_eq!(cm["storageVersionHash"], "qFsyl6wFWjQ=");
        let finalize = find("namespaces/finalize");
        assert_eq!(finalize["verbs"], json!(["update"]));
        assert!(finalize.get("storageVersionHash").is_none());
        assert!(resource_list(&registry, Flavor::Platform, "", "v2").is_none());
        assert_eq!(find("pods")["categories"], json!(["all"]));
        let names: Vec<&str> = list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["name"].as_str())
            .collect();
        assert!(names.contains(&"pods/status"));
        assert!(
            !names.contains(&"pods/exec"),
            "subresources not served yet stay out of discovery"
        );
        let token = find("serviceaccounts/token");
        assert_eq!(
            (&token["group"], &token["version"], &token["kind"]),
            (
                &json!("authentication.platform.io"),
                &json!("v1"),
                &json!("TokenRequest")
            )
        );
        let binding = find("pods/binding");
        assert_eq!(binding["kind"], "Binding");
        assert!(binding.get("group").is_none(), "same group version as pods");
        assert_eq!(
            group(&registry, "rbac.authorization.platform.io")["preferredVersion"]["groupVersion"],
            "rbac.authorization.platform.io/v1"
        );
        assert_eq!(
            group(&registry, "autoscaling")["versions"],
            json!([
                {"groupVersion": "autoscaling/v2", "version": "v2"},
                {"groupVersion": "autoscaling/v1", "version": "v1"}
            ]),
            "autoscaling/v1 is served through the HPA conversion, v2 preferred"
        );
        assert!(!named_groups(&registry).contains(&"rbac.authorization.k8s.io"));
    }
}

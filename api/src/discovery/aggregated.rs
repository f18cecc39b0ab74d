//! Aggregated discovery (`apidiscovery.<domain>/v2` `APIGroupDiscoveryList`): every group,
//! version and resource of `/api` or `/apis` in one document, in the legacy documents'
//! priority order, so a client needs one request instead of one per group version.

use serde_json::Value;
use serde_json::json;

use super::legacy::named_groups;
use super::legacy::versions;
use crate::flavor::Flavor;
use crate::registry::ResourceType;
use crate::registry::subresource_kind;
use crate::registry::subresource_verbs;

/// The `apiVersion` of the aggregated documents in `flavor` (`apidiscovery.k8s.io/v2`).
pub fn api_version(flavor: Flavor) -> String {
    format!("apidiscovery.{}/v2", flavor.group_domain())
}

fn response_kind(r: &ResourceType) -> Value {
    json!({"group": r.group, "version": r.version, "kind": r.kind})
}

fn resource(r: &ResourceType, flavor: Flavor) -> Value {
    let mut entry = json!({
        "resource": r.plural,
        "responseKind": response_kind(r),
        "scope": if r.is_namespaced() { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        entry["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        entry["categories"] = json!(r.categories);
    }
    // `status` and `finalize` answer the parent kind; the others their own.
    let subresources: Vec<Value> = r
        .subresources
        .iter()
        .map(|sub| {
            let kind = match subresource_kind(sub, flavor) {
                Some((group, version, kind)) => {
                    json!({"group": group, "version": version, "kind": kind})
                }
                None => response_kind(r),
            };
            json!({
                "subresource": sub,
                "responseKind": kind,
                "verbs": subresource_verbs(sub),
            })
        })
        .collect();
    if !subresources.is_empty() {
        entry["subresources"] = subresources.into();
    }
    entry
}

/// One `APIGroupDiscovery` (the core group has no name).
fn group(served: &[ResourceType], flavor: Flavor, name: &str) -> Value {
    let versions: Vec<Value> = versions(served, name)
        .into_iter()
        .map(|version| {
            let resources: Vec<Value> = served
                .iter()
                .filter(|r| r.group == name && r.version == version)
                .map(|r| resource(r, flavor))
                .collect();
            json!({"version": version, "resources": resources, "freshness": "Current"})
        })
        .collect();
    let mut metadata = json!({"creationTimestamp": null});
    if !name.is_empty() {
        metadata["name"] = name.into();
    }
    json!({"metadata": metadata, "versions": versions})
}

fn list(flavor: Flavor, items: Vec<Value>) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": api_version(flavor),
        "metadata": {},
        "items": items,
    })
}

/// The aggregated document of `/api`: the core group.
pub fn core(served: &[ResourceType], flavor: Flavor) -> Value {
    list(flavor, vec![group(served, flavor, "")])
}

/// The aggregated document of `/apis`: every served named group.
pub fn named(served: &[ResourceType], flavor: Flavor) -> Value {
    let items = named_groups(served)
        .into_iter()
        .map(|g| group(served, flavor, g))
        .collect();
    list(flavor, items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apps_deployments_in_the_kubernetes_shape() {
        let registry = crate::registry::Registry::builtin(Flavor::Kubernetes);
        let registry = registry.served_types();
        let doc = named(&registry, Flavor::Kubernetes);
        assert_eq!(doc["apiVersion"], "apidiscovery.k8s.io/v2");
        let apps = doc["items"]
            .as_array()
            .and_then(|i| i.iter().find(|g| g["metadata"]["name"] == "apps"))
            .expect("apps");
        assert_eq!(apps["versions"][0]["version"], "v1");
        assert_eq!(apps["versions"][0]["freshness"], "Current");
        let deploy = apps["versions"][0]["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["resource"] == "deployments"))
            .expect("deployments");
        assert_eq!(
            deploy,
            &json!({
                "resource": "deployments",
                "responseKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                "scope": "Namespaced",
                "singularResource": "deployment",
                "verbs": ["create", "delete", "deletecollection", "get", "list", "patch",
                          "update", "watch"],
                "shortNames": ["deploy"],
                "categories": ["all"],
                "subresources": [{
                    "subresource": "scale",
                    "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                    "verbs": ["get", "patch", "update"],
                }, {
                    "subresource": "status",
                    "responseKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                    "verbs": ["get", "patch", "update"],
                }],
            })
        );
        let core = core(&registry, Flavor::Platform);
        assert_eq!(core["apiVersion"], "apidiscovery.platform.io/v2");
        assert_eq!(
            core["items"][0]["metadata"],
            json!({"creationTimestamp": null})
        );
    }
}

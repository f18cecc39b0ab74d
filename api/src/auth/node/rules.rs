//! The `system:node` role's rules for the served release, as the Node authorizer applies
//! them itself to what its graph and name checks do not subdivide (R-ACC-170, R-ACC-173,
//! R-ACC-175): token and access reviews, services, endpoints, nodes and pods, events, CSRs,
//! CSI drivers, runtime classes. Groups are spelled by prefix and named per flavor.

use crate::flavor::Flavor;
use crate::request::RequestInfo;

/// get, list, watch.
const READ: &[&str] = &["get", "list", "watch"];

/// One rule: verbs on resources (`<resource>` or `<resource>/<subresource>`) of one group,
/// named by its domain prefix (`None`: core).
struct Rule {
    group: Option<&'static str>,
    resources: &'static [&'static str],
    verbs: &'static [&'static str],
}

/// `verbs` on `resources` of the group `group` (`None`: core).
const fn rule(
    group: Option<&'static str>,
    resources: &'static [&'static str],
    verbs: &'static [&'static str],
) -> Rule {
    Rule {
        group,
        resources,
        verbs,
    }
}

/// The rules, in Kubernetes' order.
const NODE_RULES: &[Rule] = &[
    // Checking API access: these creates change nothing.
    rule(Some("authentication"), &["tokenreviews"], &["create"]),
    rule(
        Some("authorization"),
        &["subjectaccessreviews", "localsubjectaccessreviews"],
        &["create"],
    ),
    // Services for the environment of containers.
    rule(None, &["services"], READ),
    // Registering the Node and reporting its status (admission limits it to its own).
    rule(None, &["nodes"], &["create", "get", "list", "watch"]),
    rule(None, &["nodes/status"], &["update", "patch"]),
    rule(None, &["nodes"], &["update", "patch"]),
    rule(None, &["events"], &["create", "update", "patch"]),
    rule(None, &["pods"], READ),
    // Mirror pods, pod status and evictions (admission limits them to its own pods).
    rule(None, &["pods"], &["create", "delete"]),
    rule(None, &["pods/status"], &["update", "patch"]),
    rule(None, &["pods/eviction"], &["create"]),
    // Narrowed by the graph before these apply.
    rule(None, &["secrets", "configmaps"], READ),
    rule(
        None,
        &["persistentvolumeclaims", "persistentvolumes"],
        &["get"],
    ),
    rule(None, &["endpoints"], &["get"]),
    // Client certificate rotation.
    rule(
        Some("certificates"),
        &["certificatesigningrequests"],
        &["create", "get", "list", "watch"],
    ),
    rule(
        Some("coordination"),
        &["leases"],
        &["get", "create", "update", "patch", "delete"],
    ),
    rule(Some("storage"), &["volumeattachments"], &["get"]),
    rule(None, &["serviceaccounts/token"], &["create"]),
    rule(
        None,
        &["persistentvolumeclaims/status"],
        &["get", "update", "patch"],
    ),
    rule(Some("storage"), &["csidrivers"], READ),
    rule(
        Some("storage"),
        &["csinodes"],
        &["get", "create", "update", "patch", "delete"],
    ),
    rule(Some("node"), &["runtimeclasses"], READ),
    rule(Some("resource"), &["resourceclaims"], &["get"]),
    rule(
        Some("resource"),
        &["resourceslices"],
        &[
            "get",
            "list",
            "watch",
            "create",
            "update",
            "patch",
            "delete",
            "deletecollection",
        ],
    ),
];

/// Whether the `system:node` rules allow `r` (a resource request; no non-resource path is
/// granted).
pub fn node_rules_allow(flavor: Flavor, r: &RequestInfo) -> bool {
    if !r.is_resource_request {
        return false;
    }
    let resource = if r.subresource.is_empty() {
        r.resource.clone()
    } else {
        format!("{}/{}", r.resource, r.subresource)
    };
    let verb = r.verb.as_str();
    NODE_RULES.iter().any(|rule| {
        let group = rule
            .group
            .map_or(String::new(), |g| format!("{g}.{}", flavor.group_domain()));
        group == r.api_group && rule.verbs.contains(&verb) && rule.resources.contains(&&*resource)
    })
}

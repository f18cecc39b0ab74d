//! The cluster's own kinds: nodes, namespaces, config maps, secrets, service accounts,
//! leases, priority and runtime classes, resource
//! quotas, component statuses, storage versions and migrations, and the dynamic resource
//! allocation kinds. Limit ranges and custom resource definitions have no printer in
//! Kubernetes: they get the default columns.

use std::collections::BTreeSet;

use k8s_openapi::api::apiserverinternal::v1alpha1 as apiserverinternal;
use k8s_openapi::api::coordination::v1 as coordination;
use k8s_openapi::api::coordination::v1beta1 as coordination_beta;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::resource::v1 as resource;
use k8s_openapi::api::scheduling::v1 as scheduling;
use serde_json::Value;

use super::columns::AGE;
use super::columns::Column;
use super::columns::Doc;
use super::columns::NAME;
use super::columns::UNDOCUMENTED;
use super::columns::meta;
use super::columns::schema_of;
use super::format;
use super::format::int;
use super::format::text;
use super::printer::Group;
use super::printer::PrintContext;
use super::printer::Printer;
use super::printer::Row;

/// The printers of this family.
pub(super) const PRINTERS: &[Printer] = &[
    Printer {
        group: Group::Core,
        resources: &["nodes"],
        columns: &[
            NAME,
            Column::string("Status", Doc::Text("The status of the node")),
            Column::string("Roles", Doc::Text("The roles of the node")),
            AGE,
            Column::string(
                "Version",
                Doc::Field(schema_of::<core::NodeSystemInfo>, "kubeletVersion"),
            ),
            Column::string(
                "Internal-IP",
                Doc::Field(schema_of::<core::NodeStatus>, "addresses"),
            )
            .wide(),
            Column::string(
                "External-IP",
                Doc::Field(schema_of::<core::NodeStatus>, "addresses"),
            )
            .wide(),
            Column::string(
                "OS-Image",
                Doc::Field(schema_of::<core::NodeSystemInfo>, "osImage"),
            )
            .wide(),
            Column::string(
                "Kernel-Version",
                Doc::Field(schema_of::<core::NodeSystemInfo>, "kernelVersion"),
            )
            .wide(),
            Column::string(
                "Container-Runtime",
                Doc::Field(schema_of::<core::NodeSystemInfo>, "containerRuntimeVersion"),
            )
            .wide(),
        ],
        row: node_row,
        order: None,
    },
    Printer {
        group: Group::Core,
        resources: &["namespaces"],
        columns: &[
            NAME,
            Column::string("Status", Doc::Text("The status of the namespace")),
            AGE,
        ],
        row: namespace_row,
        order: None,
    },
    Printer {
        group: Group::Core,
        resources: &["configmaps"],
        columns: &[
            NAME,
            Column::string("Data", Doc::Field(schema_of::<core::ConfigMap>, "data")),
            AGE,
        ],
        row: config_map_row,
        order: None,
    },
    Printer {
        group: Group::Core,
        resources: &["secrets"],
        columns: &[
            NAME,
            Column::string("Type", Doc::Field(schema_of::<core::Secret>, "type")),
            Column::string("Data", Doc::Field(schema_of::<core::Secret>, "data")),
            AGE,
        ],
        row: secret_row,
        order: None,
    },
    Printer {
        group: Group::Core,
        resources: &["serviceaccounts"],
        columns: &[
            NAME,
            Column::string(
                "Secrets",
                Doc::Field(schema_of::<core::ServiceAccount>, "secrets"),
            ),
            AGE,
        ],
        row: service_account_row,
        order: None,
    },
    Printer {
        group: Group::Domain("coordination"),
        resources: &["leases"],
        columns: &[
            NAME,
            Column::string(
                "Holder",
                Doc::Field(schema_of::<coordination::LeaseSpec>, "holderIdentity"),
            ),
            AGE,
        ],
        row: lease_row,
        order: None,
    },
    Printer {
        group: Group::Domain("coordination"),
        resources: &["leasecandidates"],
        columns: &[
            NAME,
            Column::string(
                "LeaseName",
                Doc::Field(
                    schema_of::<coordination_beta::LeaseCandidateSpec>,
                    "leaseName",
                ),
            ),
            Column::string("BinaryVersion", UNDOCUMENTED),
            Column::string("EmulationVersion", UNDOCUMENTED),
            AGE,
        ],
        row: lease_candidate_row,
        order: None,
    },
    Printer {
        group: Group::Domain("scheduling"),
        resources: &["priorityclasses"],
        columns: &[
            NAME,
            Column::integer(
                "Value",
                Doc::Field(schema_of::<scheduling::PriorityClass>, "value"),
            ),
            Column::boolean(
                "Global-Default",
                Doc::Field(schema_of::<scheduling::PriorityClass>, "globalDefault"),
            ),
            AGE,
            Column::string(
                "PreemptionPolicy",
                Doc::Field(schema_of::<scheduling::PriorityClass>, "preemptionPolicy"),
            ),
        ],
        row: priority_class_row,
        order: None,
    },
    Printer {
        group: Group::Domain("node"),
        resources: &["runtimeclasses"],
        columns: &[NAME, Column::string("Handler", UNDOCUMENTED), AGE],
        row: runtime_class_row,
        order: None,
    },
    Printer {
        group: Group::Core,
        resources: &["resourcequotas"],
        columns: &[
            NAME,
            Column::string(
                "Request",
                Doc::Text(
                    "Request represents a minimum amount of cpu/memory that a container may \
                     consume.",
                ),
            ),
            Column::string(
                "Limit",
                Doc::Text(
                    "Limits control the maximum amount of cpu/memory that a container may use \
                     independent of contention on the node.",
                ),
            ),
            AGE,
        ],
        row: resource_quota_row,
        order: None,
    },
    Printer {
        group: Group::Core,
        resources: &["componentstatuses"],
        columns: &[
            NAME,
            Column::string("Status", Doc::Text("Status of the component conditions")),
            Column::string("Message", Doc::Text("Message of the component conditions")),
            Column::string("Error", Doc::Text("Error of the component conditions")),
        ],
        row: component_status_row,
        order: None,
    },
    Printer {
        group: Group::Domain("internal.apiserver"),
        resources: &["storageversions"],
        columns: &[
            NAME,
            Column::string(
                "CommonEncodingVersion",
                Doc::Field(
                    schema_of::<apiserverinternal::StorageVersionStatus>,
                    "commonEncodingVersion",
                ),
            ),
            Column::string(
                "StorageVersions",
                Doc::Field(
                    schema_of::<apiserverinternal::StorageVersionStatus>,
                    "storageVersions",
                ),
            ),
            AGE,
        ],
        row: storage_version_row,
        order: None,
    },
    Printer {
        group: Group::Domain("storagemigration"),
        resources: &["storageversionmigrations"],
        columns: &[
            Column::string("Name", meta("name")),
            Column::string("Resource", Doc::Text("Fully qualified resource to migrate")),
        ],
        row: storage_version_migration_row,
        order: None,
    },
    Printer {
        group: Group::Domain("resource"),
        resources: &["deviceclasses", "resourceclaimtemplates"],
        columns: &[NAME, AGE],
        row: name_age_row,
        order: None,
    },
    Printer {
        group: Group::Domain("resource"),
        resources: &["resourceclaims"],
        columns: &[
            NAME,
            Column::string(
                "State",
                Doc::Text("A summary of the current state (allocated, pending, reserved, etc.)."),
            ),
            AGE,
        ],
        row: resource_claim_row,
        order: None,
    },
    Printer {
        group: Group::Domain("resource"),
        resources: &["resourceslices"],
        columns: &[
            NAME,
            Column::string(
                "Node",
                Doc::Field(schema_of::<resource::ResourceSliceSpec>, "nodeName"),
            ),
            Column::string(
                "Driver",
                Doc::Field(schema_of::<resource::ResourceSliceSpec>, "driver"),
            ),
            Column::string(
                "Pool",
                Doc::Field(schema_of::<resource::ResourcePool>, "name"),
            ),
            AGE,
        ],
        row: resource_slice_row,
        order: None,
    },
];

fn name(v: &Value) -> Value {
    text(v, "/metadata/name").into()
}

fn name_age_row(v: &Value, ctx: &PrintContext) -> Row {
    vec![name(v), format::age(v, ctx.now).into()].into()
}

/// The first address of `kind` (`InternalIP`, `ExternalIP`), `<none>` without one.
fn node_address(node: &Value, kind: &str) -> String {
    format::items(node, "/status/addresses")
        .iter()
        .find(|a| text(a, "/type") == kind)
        .map_or_else(|| "<none>".to_owned(), |a| text(a, "/address").to_owned())
}

/// The node's roles: `node-role.<label domain>/<role>` labels and the `<label
/// domain>/role` label's value, sorted.
fn node_roles(node: &Value, ctx: &PrintContext) -> String {
    let domain = ctx.flavor.label_domain();
    let prefix = format!("node-role.{domain}/");
    let role_label = format!("{domain}/role");
    let mut roles = BTreeSet::new();
    for (key, value) in format::map(node, "/metadata/labels").into_iter().flatten() {
        if let Some(role) = key.strip_prefix(&prefix).filter(|r| !r.is_empty()) {
            roles.insert(role.to_owned());
        } else if *key == role_label && value.as_str().is_some_and(|v| !v.is_empty()) {
            roles.insert(value.as_str().unwrap_or_default().to_owned());
        }
    }
    if roles.is_empty() {
        "<none>".to_owned()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    }
}

fn node_row(node: &Value, ctx: &PrintContext) -> Row {
    let ready = format::items(node, "/status/conditions")
        .iter()
        .rfind(|c| text(c, "/type") == "Ready");
    let mut status = vec![match ready {
        Some(c) if text(c, "/status") == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if format::flag(node, "/spec/unschedulable") == Some(true) {
        status.push("SchedulingDisabled");
    }
    let info = |field: &str| {
        format::or(
            text(node, &format!("/status/nodeInfo/{field}")),
            "<unknown>",
        )
    };
    vec![
        name(node),
        status.join(",").into(),
        node_roles(node, ctx).into(),
        format::age(node, ctx.now).into(),
        text(node, "/status/nodeInfo/kubeletVersion").into(),
        node_address(node, "InternalIP").into(),
        node_address(node, "ExternalIP").into(),
        info("osImage").into(),
        info("kernelVersion").into(),
        info("containerRuntimeVersion").into(),
    ]
    .into()
}

fn namespace_row(ns: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(ns),
        text(ns, "/status/phase").into(),
        format::age(ns, ctx.now).into(),
    ]
    .into()
}

fn config_map_row(cm: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(cm),
        (format::count(cm, "/data") + format::count(cm, "/binaryData")).into(),
        format::age(cm, ctx.now).into(),
    ]
    .into()
}

fn secret_row(secret: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(secret),
        text(secret, "/type").into(),
        format::count(secret, "/data").into(),
        format::age(secret, ctx.now).into(),
    ]
    .into()
}

fn service_account_row(sa: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(sa),
        format::count(sa, "/secrets").into(),
        format::age(sa, ctx.now).into(),
    ]
    .into()
}

fn lease_row(lease: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(lease),
        text(lease, "/spec/holderIdentity").into(),
        format::age(lease, ctx.now).into(),
    ]
    .into()
}

fn lease_candidate_row(candidate: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(candidate),
        text(candidate, "/spec/leaseName").into(),
        text(candidate, "/spec/binaryVersion").into(),
        text(candidate, "/spec/emulationVersion").into(),
        format::age(candidate, ctx.now).into(),
    ]
    .into()
}

fn priority_class_row(class: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(class),
        int(class, "/value").into(),
        format::flag(class, "/globalDefault")
            .unwrap_or(false)
            .into(),
        format::age(class, ctx.now).into(),
        text(class, "/preemptionPolicy").into(),
    ]
    .into()
}

fn runtime_class_row(class: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(class),
        text(class, "/handler").into(),
        format::age(class, ctx.now).into(),
    ]
    .into()
}

/// A quantity's text as stored, `0` when absent.
fn quantity(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".to_owned(),
    }
}

fn resource_quota_row(quota: &Value, ctx: &PrintContext) -> Row {
    let used = format::map(quota, "/status/used");
    let (mut requests, mut limits) = (Vec::new(), Vec::new());
    let mut hard: Vec<(&String, &Value)> = format::map(quota, "/status/hard")
        .into_iter()
        .flatten()
        .collect();
    hard.sort_by(|a, b| a.0.cmp(b.0));
    for (resource, limit) in hard {
        let line = format!(
            "{resource}: {}/{}",
            quantity(used.and_then(|u| u.get(resource))),
            quantity(Some(limit))
        );
        match resource.split_once('.') {
            Some(("limits", _)) => limits.push(line),
            _ => requests.push(line),
        }
    }
    vec![
        name(quota),
        requests.join(", ").into(),
        limits.join(", ").into(),
        format::age(quota, ctx.now).into(),
    ]
    .into()
}

fn component_status_row(component: &Value, _: &PrintContext) -> Row {
    let healthy = format::items(component, "/conditions")
        .iter()
        .find(|c| text(c, "/type") == "Healthy");
    let (status, message, error) = healthy.map_or(("Unknown", "", ""), |c| {
        let status = if text(c, "/status") == "True" {
            "Healthy"
        } else {
            "Unhealthy"
        };
        (status, text(c, "/message"), text(c, "/error"))
    });
    vec![name(component), status.into(), message.into(), error.into()].into()
}

fn storage_version_row(version: &Value, ctx: &PrintContext) -> Row {
    let versions: Vec<String> = format::items(version, "/status/storageVersions")
        .iter()
        .map(|v| {
            format!(
                "{}={}",
                text(v, "/apiServerID"),
                text(v, "/encodingVersion")
            )
        })
        .collect();
    vec![
        name(version),
        format::or(text(version, "/status/commonEncodingVersion"), "<unset>").into(),
        format::list_with_more(&versions, versions.len(), 3).into(),
        format::age(version, ctx.now).into(),
    ]
    .into()
}

fn storage_version_migration_row(migration: &Value, _: &PrintContext) -> Row {
    let resource = format!(
        "{}.{}.{}",
        text(migration, "/spec/resource/resource"),
        text(migration, "/spec/resource/version"),
        text(migration, "/spec/resource/group")
    );
    vec![name(migration), resource.into()].into()
}

fn resource_claim_row(claim: &Value, ctx: &PrintContext) -> Row {
    let deleting = claim
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|d| !d.is_null());
    let mut states = Vec::new();
    if deleting {
        states.push("deleted");
    }
    if claim
        .pointer("/status/allocation")
        .is_some_and(Value::is_object)
    {
        states.push("allocated");
        if format::count(claim, "/status/reservedFor") > 0 {
            states.push("reserved");
        }
    } else if !deleting {
        states.push("pending");
    }
    vec![
        name(claim),
        states.join(",").into(),
        format::age(claim, ctx.now).into(),
    ]
    .into()
}

fn resource_slice_row(slice: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(slice),
        text(slice, "/spec/nodeName").into(),
        text(slice, "/spec/driver").into(),
        text(slice, "/spec/pool/name").into(),
        format::age(slice, ctx.now).into(),
    ]
    .into()
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod tests;

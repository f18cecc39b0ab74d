//! The roles of the built-in controllers (R-ACC-194): one ClusterRole
//! `system:controller:<name>` per controller of Kubernetes' controller manager, with its
//! bootstrap-policy rules, and one ClusterRoleBinding of the same name to the controller's
//! ServiceAccount in the system namespace. (The bootstrap token controllers and the cloud
//! provider have namespaced roles instead: [`super::namespace_roles`].)

use serde_json::Value;

use super::CONTROLLER_ROLE_PREFIX;
use super::Subject;
use super::cluster_role;
use super::cluster_role_binding;
use super::component;
use super::rule::READ;
use super::rule::Rule;
use super::rule::events;
use super::rule::rule;
use crate::flavor::Flavor;

const CREATE_DELETE_READ: &[&str] = &["create", "delete", "get", "list", "watch"];
const READ_WRITE_NO_COLLECTION: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];
const READ_UPDATE: &[&str] = &["get", "list", "update", "watch"];
const PATCH_UPDATE: &[&str] = &["patch", "update"];
const UPDATE: &[&str] = &["update"];
const LIST_WATCH: &[&str] = &["list", "watch"];

/// Each controller's short name and rules.
fn controllers(flavor: Flavor) -> Vec<(&'static str, Vec<Rule>)> {
    let signer = |name: &str| format!("{}/{name}", flavor.label_domain());
    let agent = flavor.node_agent();
    let client = component(flavor, "apiserver-client");
    let agent_client = format!("{client}-{agent}");
    let tracking = component(flavor, "apiserver-legacy-service-account-token-tracking");
    vec![
        (
            "attachdetach-controller",
            vec![
                rule(
                    LIST_WATCH,
                    &[""],
                    &["persistentvolumeclaims", "persistentvolumes"],
                ),
                rule(READ, &[""], &["nodes"]),
                rule(PATCH_UPDATE, &[""], &["nodes/status"]),
                rule(LIST_WATCH, &[""], &["pods"]),
                events(),
                rule(CREATE_DELETE_READ, &["storage."], &["volumeattachments"]),
                rule(READ, &["storage."], &["csidrivers"]),
                rule(READ, &["storage."], &["csinodes"]),
            ],
        ),
        (
            "certificate-controller",
            vec![
                rule(
                    &["delete", "get", "list", "watch"],
                    &["certificates."],
                    &["certificatesigningrequests"],
                ),
                rule(
                    UPDATE,
                    &["certificates."],
                    &[
                        "certificatesigningrequests/approval",
                        "certificatesigningrequests/status",
                    ],
                ),
                rule(&["approve"], &["certificates."], &["signers"])
                    .names(&[signer(&agent_client)]),
                rule(&["sign"], &["certificates."], &["signers"]).names(&[
                    signer(&client),
                    signer(&agent_client),
                    signer(&format!("{agent}-serving")),
                    signer("legacy-unknown"),
                ]),
                rule(&["create"], &["authorization."], &["subjectaccessreviews"]),
                events(),
            ],
        ),
        (
            "clusterrole-aggregation-controller",
            vec![rule(
                &["escalate", "get", "list", "patch", "update", "watch"],
                &["rbac.authorization."],
                &["clusterroles"],
            )],
        ),
        (
            "cronjob-controller",
            vec![
                rule(READ_UPDATE, &["batch"], &["cronjobs"]),
                rule(READ_WRITE_NO_COLLECTION, &["batch"], &["jobs"]),
                rule(UPDATE, &["batch"], &["cronjobs/status"]),
                rule(UPDATE, &["batch"], &["cronjobs/finalizers"]),
                rule(&["delete", "list", "watch"], &[""], &["pods"]),
                events(),
            ],
        ),
        (
            "daemon-set-controller",
            vec![
                rule(READ, &["apps", "extensions"], &["daemonsets"]),
                rule(UPDATE, &["apps", "extensions"], &["daemonsets/status"]),
                rule(UPDATE, &["apps", "extensions"], &["daemonsets/finalizers"]),
                rule(LIST_WATCH, &[""], &["nodes"]),
                rule(
                    &["create", "delete", "list", "patch", "watch"],
                    &[""],
                    &["pods"],
                ),
                rule(&["create"], &[""], &["pods/binding"]),
                rule(
                    READ_WRITE_NO_COLLECTION,
                    &["apps"],
                    &["controllerrevisions"],
                ),
                events(),
            ],
        ),
        (
            "deployment-controller",
            vec![
                rule(READ_UPDATE, &["apps", "extensions"], &["deployments"]),
                rule(UPDATE, &["apps", "extensions"], &["deployments/status"]),
                rule(UPDATE, &["apps", "extensions"], &["deployments/finalizers"]),
                rule(
                    READ_WRITE_NO_COLLECTION,
                    &["apps", "extensions"],
                    &["replicasets"],
                ),
                rule(READ_UPDATE, &[""], &["pods"]),
                events(),
            ],
        ),
        (
            "device-taint-eviction-controller",
            vec![
                rule(&["delete", "get", "list", "watch"], &[""], &["pods"]),
                rule(PATCH_UPDATE, &[""], &["pods/status"]),
                rule(READ, &["resource."], &["resourceclaims"]),
                rule(READ, &["resource."], &["resourceslices"]),
                rule(READ, &["resource."], &["deviceclasses"]),
                events(),
            ],
        ),
        (
            "disruption-controller",
            vec![
                rule(READ, &["apps", "extensions"], &["deployments"]),
                rule(READ, &["apps", "extensions"], &["replicasets"]),
                rule(READ, &[""], &["replicationcontrollers"]),
                rule(READ, &["policy"], &["poddisruptionbudgets"]),
                rule(READ, &["apps"], &["statefulsets"]),
                rule(UPDATE, &["policy"], &["poddisruptionbudgets/status"]),
                rule(PATCH_UPDATE, &[""], &["pods/status"]),
                rule(&["get"], &["*"], &["*/scale"]),
                events(),
            ],
        ),
        (
            "endpoint-controller",
            vec![
                rule(READ, &[""], &["pods", "services"]),
                rule(
                    &["create", "delete", "get", "list", "update", "watch"],
                    &[""],
                    &["endpoints"],
                ),
                rule(&["create"], &[""], &["endpoints/restricted"]),
                events(),
            ],
        ),
        (
            "endpointslice-controller",
            vec![
                rule(READ, &[""], &["nodes", "pods", "services"]),
                rule(UPDATE, &[""], &["services/finalizers"]),
                rule(
                    &["create", "delete", "get", "list", "update", "watch"],
                    &["discovery."],
                    &["endpointslices"],
                ),
                events(),
            ],
        ),
        (
            "endpointslicemirroring-controller",
            vec![
                rule(READ, &[""], &["endpoints", "services"]),
                rule(UPDATE, &[""], &["services/finalizers"]),
                rule(UPDATE, &[""], &["endpoints/finalizers"]),
                rule(
                    &["create", "delete", "get", "list", "update", "watch"],
                    &["discovery."],
                    &["endpointslices"],
                ),
                events(),
            ],
        ),
        (
            "ephemeral-volume-controller",
            vec![
                rule(READ, &[""], &["pods"]),
                rule(UPDATE, &[""], &["pods/finalizers"]),
                rule(
                    &["create", "get", "list", "watch"],
                    &[""],
                    &["persistentvolumeclaims"],
                ),
                events(),
            ],
        ),
        (
            "expand-controller",
            vec![
                rule(
                    &["get", "list", "patch", "update", "watch"],
                    &[""],
                    &["persistentvolumes"],
                ),
                rule(PATCH_UPDATE, &[""], &["persistentvolumeclaims/status"]),
                rule(READ, &[""], &["persistentvolumeclaims"]),
                events(),
            ],
        ),
        (
            "generic-garbage-collector",
            vec![
                rule(
                    &["delete", "get", "list", "patch", "update", "watch"],
                    &["*"],
                    &["*"],
                ),
                events(),
            ],
        ),
        (
            "horizontal-pod-autoscaler",
            vec![
                rule(READ, &["autoscaling"], &["horizontalpodautoscalers"]),
                rule(
                    UPDATE,
                    &["autoscaling"],
                    &["horizontalpodautoscalers/status"],
                ),
                rule(&["get", "update"], &["*"], &["*/scale"]),
                rule(LIST_WATCH, &[""], &["pods"]),
                rule(LIST_WATCH, &["metrics."], &["pods"]),
                rule(READ, &["custom.metrics."], &["*"]),
                rule(READ, &["external.metrics."], &["*"]),
                events(),
            ],
        ),
        (
            "job-controller",
            vec![
                rule(
                    &["get", "list", "patch", "update", "watch"],
                    &["batch"],
                    &["jobs"],
                ),
                rule(UPDATE, &["batch"], &["jobs/status"]),
                rule(UPDATE, &["batch"], &["jobs/finalizers"]),
                rule(
                    &["create", "delete", "list", "patch", "watch"],
                    &[""],
                    &["pods"],
                ),
                events(),
            ],
        ),
        (
            "legacy-service-account-token-cleaner",
            vec![
                rule(&["get"], &[""], &["configmaps"]).names(&[tracking]),
                rule(&["delete", "patch"], &[""], &["secrets"]),
            ],
        ),
        (
            "namespace-controller",
            vec![
                rule(&["delete", "get", "list", "watch"], &[""], &["namespaces"]),
                rule(UPDATE, &[""], &["namespaces/finalize", "namespaces/status"]),
                rule(
                    &["delete", "deletecollection", "get", "list", "watch"],
                    &["*"],
                    &["*"],
                ),
            ],
        ),
        (
            "node-controller",
            vec![
                rule(
                    &["delete", "get", "list", "patch", "update", "watch"],
                    &[""],
                    &["nodes"],
                ),
                rule(PATCH_UPDATE, &[""], &["nodes/status"]),
                rule(PATCH_UPDATE, &[""], &["pods/status"]),
                rule(&["delete", "get", "list", "watch"], &[""], &["pods"]),
                events(),
            ],
        ),
        (
            "persistent-volume-binder",
            vec![
                rule(
                    &["create", "delete", "get", "list", "update", "watch"],
                    &[""],
                    &["persistentvolumes"],
                ),
                rule(UPDATE, &[""], &["persistentvolumes/status"]),
                rule(READ_UPDATE, &[""], &["persistentvolumeclaims"]),
                rule(UPDATE, &[""], &["persistentvolumeclaims/status"]),
                rule(CREATE_DELETE_READ, &[""], &["pods"]),
                rule(READ, &["storage."], &["storageclasses"]),
                rule(LIST_WATCH, &[""], &["nodes"]),
                events(),
                rule(&["watch"], &[""], &["events"]),
            ],
        ),
        (
            "pod-garbage-collector",
            vec![
                rule(&["delete", "list", "watch"], &[""], &["pods"]),
                rule(READ, &[""], &["nodes"]),
                rule(&["patch"], &[""], &["pods/status"]),
            ],
        ),
        (
            "pv-protection-controller",
            vec![rule(READ_UPDATE, &[""], &["persistentvolumes"]), events()],
        ),
        (
            "pvc-protection-controller",
            vec![
                rule(READ_UPDATE, &[""], &["persistentvolumeclaims"]),
                rule(UPDATE, &[""], &["persistentvolumeclaims/status"]),
                rule(READ, &[""], &["pods"]),
                events(),
            ],
        ),
        (
            "replicaset-controller",
            vec![
                rule(READ_UPDATE, &["apps", "extensions"], &["replicasets"]),
                rule(UPDATE, &["apps", "extensions"], &["replicasets/status"]),
                rule(UPDATE, &["apps", "extensions"], &["replicasets/finalizers"]),
                rule(
                    &["create", "delete", "list", "patch", "watch"],
                    &[""],
                    &["pods"],
                ),
                events(),
            ],
        ),
        (
            "replication-controller",
            vec![
                rule(READ_UPDATE, &[""], &["replicationcontrollers"]),
                rule(UPDATE, &[""], &["replicationcontrollers/status"]),
                rule(UPDATE, &[""], &["replicationcontrollers/finalizers"]),
                rule(
                    &["create", "delete", "list", "patch", "watch"],
                    &[""],
                    &["pods"],
                ),
                events(),
            ],
        ),
        (
            "resource-claim-controller",
            vec![
                rule(READ, &[""], &["pods"]),
                rule(UPDATE, &[""], &["pods/finalizers"]),
                rule(CREATE_DELETE_READ, &["resource."], &["resourceclaims"]),
                rule(
                    PATCH_UPDATE,
                    &["resource."],
                    &["resourceclaims", "resourceclaims/status"],
                ),
                rule(PATCH_UPDATE, &[""], &["pods/status"]),
                events(),
                rule(PATCH_UPDATE, &["resource."], &["resourceclaims/binding"]),
            ],
        ),
        (
            "resourcequota-controller",
            vec![
                rule(LIST_WATCH, &["*"], &["*"]),
                rule(UPDATE, &[""], &["resourcequotas/status"]),
                events(),
            ],
        ),
        (
            "root-ca-cert-publisher",
            vec![
                rule(&["create", "update"], &[""], &["configmaps"]),
                events(),
            ],
        ),
        (
            "route-controller",
            vec![
                rule(LIST_WATCH, &[""], &["nodes"]),
                rule(&["patch"], &[""], &["nodes/status"]),
                events(),
            ],
        ),
        (
            "selinux-warning-controller",
            vec![
                events(),
                rule(READ, &[""], &["persistentvolumes"]),
                rule(READ, &[""], &["persistentvolumeclaims"]),
                rule(READ, &[""], &["pods"]),
                rule(READ, &["storage."], &["csidrivers"]),
            ],
        ),
        (
            "service-account-controller",
            vec![rule(&["create"], &[""], &["serviceaccounts"]), events()],
        ),
        (
            "service-cidrs-controller",
            vec![
                rule(
                    &["get", "list", "patch", "update", "watch"],
                    &["networking."],
                    &["servicecidrs"],
                ),
                rule(PATCH_UPDATE, &["networking."], &["servicecidrs/finalizers"]),
                rule(PATCH_UPDATE, &["networking."], &["servicecidrs/status"]),
                rule(READ, &["networking."], &["ipaddresses"]),
                events(),
            ],
        ),
        (
            "service-controller",
            vec![
                rule(READ, &[""], &["services"]),
                rule(PATCH_UPDATE, &[""], &["services/status"]),
                rule(LIST_WATCH, &[""], &["nodes"]),
                events(),
            ],
        ),
        (
            "statefulset-controller",
            vec![
                rule(LIST_WATCH, &[""], &["pods"]),
                rule(READ, &["apps"], &["statefulsets"]),
                rule(UPDATE, &["apps"], &["statefulsets/status"]),
                rule(UPDATE, &["apps"], &["statefulsets/finalizers"]),
                rule(
                    &["create", "delete", "get", "patch", "update"],
                    &[""],
                    &["pods"],
                ),
                rule(
                    READ_WRITE_NO_COLLECTION,
                    &["apps"],
                    &["controllerrevisions"],
                ),
                rule(
                    &["create", "get", "list", "watch"],
                    &[""],
                    &["persistentvolumeclaims"],
                ),
                rule(&["delete", "update"], &[""], &["persistentvolumeclaims"]),
                rule(UPDATE, &[""], &["pods/finalizers"]),
                events(),
            ],
        ),
        (
            "ttl-after-finished-controller",
            vec![
                rule(&["delete", "get", "list", "watch"], &["batch"], &["jobs"]),
                events(),
            ],
        ),
        (
            "ttl-controller",
            vec![
                rule(&["list", "patch", "update", "watch"], &[""], &["nodes"]),
                events(),
            ],
        ),
        (
            "validatingadmissionpolicy-status-controller",
            vec![
                rule(
                    READ,
                    &["admissionregistration."],
                    &["validatingadmissionpolicies"],
                ),
                rule(
                    &["get", "patch", "update"],
                    &["admissionregistration."],
                    &["validatingadmissionpolicies/status"],
                ),
                events(),
            ],
        ),
        (
            "volumeattributesclass-protection-controller",
            vec![
                rule(READ, &[""], &["persistentvolumeclaims"]),
                rule(READ, &[""], &["persistentvolumes"]),
                rule(READ_UPDATE, &["storage."], &["volumeattributesclasses"]),
                events(),
            ],
        ),
    ]
}

/// The controller roles of `flavor`.
pub(super) fn controller_roles(flavor: Flavor) -> Vec<Value> {
    controllers(flavor)
        .into_iter()
        .map(|(name, rules)| {
            cluster_role(flavor, &format!("{CONTROLLER_ROLE_PREFIX}{name}"), &rules)
        })
        .collect()
}

/// The bindings of the controller roles of `flavor` to the controllers' ServiceAccounts.
pub(super) fn controller_role_bindings(flavor: Flavor) -> Vec<Value> {
    controllers(flavor)
        .into_iter()
        .map(|(name, _)| {
            let role = format!("{CONTROLLER_ROLE_PREFIX}{name}");
            cluster_role_binding(
                flavor,
                &role,
                &role,
                &[Subject::ServiceAccount(name.to_owned())],
            )
        })
        .collect()
}

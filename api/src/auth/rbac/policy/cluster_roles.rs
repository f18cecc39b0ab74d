//! The default ClusterRoles other than the controllers': the user-facing roles
//! (`cluster-admin`; `admin`, `edit`, `view`, aggregated from the `system:aggregate-to-*`
//! roles, R-ACC-183, R-ACC-188, R-ACC-195..197) and the system roles of the control plane,
//! nodes and discovery (R-ACC-189..193), with Kubernetes' bootstrap-policy rules.

use serde_json::Value;
use serde_json::json;

use super::aggregate_label;
use super::cluster_role;
use super::component;
use super::labelled;
use super::rule::EVENT_WRITE;
use super::rule::READ;
use super::rule::READ_WRITE;
use super::rule::Rule;
use super::rule::WRITE;
use super::rule::events;
use super::rule::rule;
use super::rule::urls;
use crate::flavor::Flavor;

/// A ClusterRole whose rules are those of the roles labelled `aggregate-to-<from>`.
fn aggregated(flavor: Flavor, name: &str, from: &str) -> Value {
    let mut role = cluster_role(flavor, name, &[]);
    if let Some(object) = role.as_object_mut() {
        object.remove("rules");
    }
    role["aggregationRule"] = json!({
        "clusterRoleSelectors": [{"matchLabels": {aggregate_label(flavor, from): "true"}}],
    });
    role
}

/// The pod subresources a user connects through.
const POD_CONNECT: &[&str] = &["pods/attach", "pods/exec", "pods/portforward", "pods/proxy"];

fn aggregate_to_admin() -> Vec<Rule> {
    vec![
        rule(
            &["create"],
            &["authorization."],
            &["localsubjectaccessreviews"],
        ),
        rule(
            READ_WRITE,
            &["rbac.authorization."],
            &["rolebindings", "roles"],
        ),
    ]
}

/// Writes of `edit`: never Endpoints or EndpointSlices (R-ACC-195), never RBAC (R-ACC-196).
fn aggregate_to_edit() -> Vec<Rule> {
    let mut pods = POD_CONNECT.to_vec();
    pods.push("pods");
    let mut read = POD_CONNECT.to_vec();
    read.extend(["secrets", "services/proxy"]);
    vec![
        rule(READ, &[""], &read),
        rule(&["impersonate"], &[""], &["serviceaccounts"]),
        rule(WRITE, &[""], &pods),
        rule(&["create"], &[""], &["pods/eviction"]),
        rule(
            WRITE,
            &[""],
            &[
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
            ],
        ),
        rule(&["create"], &[""], &["serviceaccounts/token"]),
        rule(
            WRITE,
            &["apps"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "replicasets",
                "replicasets/scale",
                "statefulsets",
                "statefulsets/scale",
            ],
        ),
        rule(WRITE, &["autoscaling"], &["horizontalpodautoscalers"]),
        rule(WRITE, &["batch"], &["cronjobs", "jobs"]),
        rule(
            WRITE,
            &["extensions"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "ingresses",
                "networkpolicies",
                "replicasets",
                "replicasets/scale",
                "replicationcontrollers/scale",
            ],
        ),
        rule(WRITE, &["policy"], &["poddisruptionbudgets"]),
        rule(WRITE, &["networking."], &["ingresses", "networkpolicies"]),
        rule(READ_WRITE, &["coordination."], &["leases"]),
    ]
}

/// Reads of `view`: never Secrets (R-ACC-197).
fn aggregate_to_view() -> Vec<Rule> {
    vec![
        rule(
            READ,
            &[""],
            &[
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
            ],
        ),
        rule(
            READ,
            &[""],
            &[
                "bindings",
                "events",
                "limitranges",
                "namespaces/status",
                "pods/log",
                "pods/status",
                "replicationcontrollers/status",
                "resourcequotas",
                "resourcequotas/status",
            ],
        ),
        rule(READ, &[""], &["namespaces"]),
        rule(READ, &["discovery."], &["endpointslices"]),
        rule(
            READ,
            &["apps"],
            &[
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
            ],
        ),
        rule(
            READ,
            &["autoscaling"],
            &[
                "horizontalpodautoscalers",
                "horizontalpodautoscalers/status",
            ],
        ),
        rule(
            READ,
            &["batch"],
            &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
        ),
        rule(
            READ,
            &["extensions"],
            &[
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "ingresses",
                "ingresses/status",
                "networkpolicies",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "replicationcontrollers/scale",
            ],
        ),
        rule(
            READ,
            &["policy"],
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
        ),
        rule(
            READ,
            &["networking."],
            &["ingresses", "ingresses/status", "networkpolicies"],
        ),
    ]
}

fn controller_manager(flavor: Flavor) -> Vec<Rule> {
    vec![
        events(),
        rule(&["create"], &["coordination."], &["leases"]),
        rule(&["get", "update"], &["coordination."], &["leases"])
            .names(&[component(flavor, "controller-manager")]),
        rule(&["create"], &[""], &["secrets", "serviceaccounts"]),
        rule(&["delete"], &[""], &["secrets"]),
        rule(
            &["get"],
            &[""],
            &["configmaps", "namespaces", "secrets", "serviceaccounts"],
        ),
        rule(&["update"], &[""], &["secrets", "serviceaccounts"]),
        rule(&["create"], &["authentication."], &["tokenreviews"]),
        rule(&["create"], &["authorization."], &["subjectaccessreviews"]),
        rule(&["list", "watch"], &["*"], &["*"]),
        rule(&["create"], &[""], &["serviceaccounts/token"]),
    ]
}

fn scheduler(flavor: Flavor) -> Vec<Rule> {
    vec![
        events(),
        rule(&["create"], &["coordination."], &["leases"]),
        rule(&["get", "update"], &["coordination."], &["leases"])
            .names(&[component(flavor, "scheduler")]),
        rule(READ, &[""], &["nodes"]),
        rule(&["delete", "get", "list", "watch"], &[""], &["pods"]),
        rule(&["create"], &[""], &["bindings", "pods/binding"]),
        rule(&["patch", "update"], &[""], &["pods/status"]),
        rule(READ, &[""], &["replicationcontrollers", "services"]),
        rule(READ, &["apps", "extensions"], &["replicasets"]),
        rule(READ, &["apps"], &["statefulsets"]),
        rule(READ, &["policy"], &["poddisruptionbudgets"]),
        rule(
            READ,
            &[""],
            &["persistentvolumeclaims", "persistentvolumes"],
        ),
        rule(&["create"], &["authentication."], &["tokenreviews"]),
        rule(&["create"], &["authorization."], &["subjectaccessreviews"]),
        rule(READ, &["storage."], &["csinodes"]),
        rule(READ, &[""], &["namespaces"]),
        rule(READ, &["storage."], &["csidrivers"]),
        rule(READ, &["storage."], &["csistoragecapacities"]),
    ]
}

/// The legacy role of nodes (R-ACC-193), kept with no subjects since the node authorizer
/// grants nodes their access.
fn node() -> Vec<Rule> {
    vec![
        rule(&["create"], &["authentication."], &["tokenreviews"]),
        rule(
            &["create"],
            &["authorization."],
            &["localsubjectaccessreviews", "subjectaccessreviews"],
        ),
        rule(READ, &[""], &["services"]),
        rule(&["create", "get", "list", "watch"], &[""], &["nodes"]),
        rule(&["patch", "update"], &[""], &["nodes/status"]),
        rule(&["patch", "update"], &[""], &["nodes"]),
        rule(EVENT_WRITE, &[""], &["events"]),
        rule(READ, &[""], &["pods"]),
        rule(&["create", "delete"], &[""], &["pods"]),
        rule(&["patch", "update"], &[""], &["pods/status"]),
        rule(&["create"], &[""], &["pods/eviction"]),
        rule(READ, &[""], &["configmaps", "secrets"]),
        rule(
            &["get"],
            &[""],
            &["persistentvolumeclaims", "persistentvolumes"],
        ),
        rule(&["get"], &[""], &["endpoints"]),
        rule(
            &["create", "get", "list", "watch"],
            &["certificates."],
            &["certificatesigningrequests"],
        ),
        rule(
            &["create", "delete", "get", "patch", "update"],
            &["coordination."],
            &["leases"],
        ),
        rule(&["get"], &["storage."], &["volumeattachments"]),
        rule(&["create"], &[""], &["serviceaccounts/token"]),
        rule(
            &["get", "patch", "update"],
            &[""],
            &["persistentvolumeclaims/status"],
        ),
        rule(READ, &["storage."], &["csidrivers"]),
        rule(
            &["create", "delete", "get", "patch", "update"],
            &["storage."],
            &["csinodes"],
        ),
        rule(READ, &["node."], &["runtimeclasses"]),
    ]
}

/// The approver role of the signer `<label domain>/<signer>`.
fn approver(flavor: Flavor, signer: &str) -> Vec<Rule> {
    let name = format!("{}/{signer}", flavor.label_domain());
    vec![rule(&["approve"], &["certificates."], &["signers"]).names(&[name])]
}

/// The default ClusterRoles of `flavor` other than the controllers'.
pub(super) fn cluster_roles(flavor: Flavor) -> Vec<Value> {
    let agent = flavor.node_agent();
    let system = |rest: &str| format!("system:{rest}");
    let certificates = |rest: &str| format!("system:certificates.{}:{rest}", flavor.group_domain());
    let client_signer = component(flavor, "apiserver-client");
    let agent_client_signer = format!("{client_signer}-{agent}");
    let serving_signer = format!("{agent}-serving");
    let csr = "certificatesigningrequests";
    vec![
        aggregated(flavor, "admin", "admin"),
        cluster_role(
            flavor,
            "cluster-admin",
            &[rule(&["*"], &["*"], &["*"]), urls(&["*"], &["*"])],
        ),
        labelled(
            aggregated(flavor, "edit", "edit"),
            aggregate_label(flavor, "admin"),
        ),
        labelled(
            cluster_role(flavor, "system:aggregate-to-admin", &aggregate_to_admin()),
            aggregate_label(flavor, "admin"),
        ),
        labelled(
            cluster_role(flavor, "system:aggregate-to-edit", &aggregate_to_edit()),
            aggregate_label(flavor, "edit"),
        ),
        labelled(
            cluster_role(flavor, "system:aggregate-to-view", &aggregate_to_view()),
            aggregate_label(flavor, "view"),
        ),
        cluster_role(
            flavor,
            "system:auth-delegator",
            &[
                rule(&["create"], &["authentication."], &["tokenreviews"]),
                rule(&["create"], &["authorization."], &["subjectaccessreviews"]),
            ],
        ),
        cluster_role(
            flavor,
            "system:basic-user",
            &[
                rule(
                    &["create"],
                    &["authorization."],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                rule(&["create"], &["authentication."], &["selfsubjectreviews"]),
            ],
        ),
        cluster_role(
            flavor,
            &certificates(&format!("{csr}:nodeclient")),
            &[rule(
                &["create"],
                &["certificates."],
                &[&format!("{csr}/nodeclient")],
            )],
        ),
        cluster_role(
            flavor,
            &certificates(&format!("{csr}:selfnodeclient")),
            &[rule(
                &["create"],
                &["certificates."],
                &[&format!("{csr}/selfnodeclient")],
            )],
        ),
        cluster_role(
            flavor,
            &certificates(&format!("{client_signer}-approver")),
            &approver(flavor, &client_signer),
        ),
        cluster_role(
            flavor,
            &certificates(&format!("{agent_client_signer}-approver")),
            &approver(flavor, &agent_client_signer),
        ),
        cluster_role(
            flavor,
            &certificates(&format!("{serving_signer}-approver")),
            &approver(flavor, &serving_signer),
        ),
        cluster_role(
            flavor,
            &certificates("legacy-unknown-approver"),
            &approver(flavor, "legacy-unknown"),
        ),
        cluster_role(
            flavor,
            "system:discovery",
            &[urls(
                &["get"],
                &[
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
            )],
        ),
        cluster_role(
            flavor,
            "system:heapster",
            &[
                rule(READ, &[""], &["events", "namespaces", "nodes", "pods"]),
                rule(READ, &["extensions"], &["deployments"]),
            ],
        ),
        cluster_role(
            flavor,
            &system(&component(flavor, "aggregator")),
            &[rule(READ, &[""], &["endpoints", "services"])],
        ),
        cluster_role(
            flavor,
            &system(&component(flavor, "controller-manager")),
            &controller_manager(flavor),
        ),
        cluster_role(
            flavor,
            &system(&component(flavor, "dns")),
            &[rule(&["list", "watch"], &[""], &["endpoints", "services"])],
        ),
        cluster_role(
            flavor,
            &system(&component(flavor, "scheduler")),
            &scheduler(flavor),
        ),
        cluster_role(
            flavor,
            &format!("system:{agent}-api-admin"),
            &[
                rule(READ, &[""], &["nodes"]),
                rule(&["proxy"], &[""], &["nodes"]),
                rule(
                    &["*"],
                    &[""],
                    &["nodes/log", "nodes/metrics", "nodes/proxy", "nodes/stats"],
                ),
            ],
        ),
        cluster_role(
            flavor,
            "system:monitoring",
            &[urls(
                &["get"],
                &[
                    "/healthz",
                    "/healthz/*",
                    "/livez",
                    "/livez/*",
                    "/metrics",
                    "/metrics/slis",
                    "/readyz",
                    "/readyz/*",
                ],
            )],
        ),
        cluster_role(flavor, "system:node", &node()),
        cluster_role(
            flavor,
            "system:node-bootstrapper",
            &[rule(
                &["create", "get", "list", "watch"],
                &["certificates."],
                &[csr],
            )],
        ),
        cluster_role(
            flavor,
            "system:node-problem-detector",
            &[
                rule(&["get"], &[""], &["nodes"]),
                rule(&["patch"], &[""], &["nodes/status"]),
                events(),
            ],
        ),
        cluster_role(
            flavor,
            "system:node-proxier",
            &[
                rule(&["list", "watch"], &[""], &["endpoints", "services"]),
                rule(READ, &[""], &["nodes"]),
                events(),
                rule(&["list", "watch"], &["discovery."], &["endpointslices"]),
            ],
        ),
        cluster_role(
            flavor,
            "system:persistent-volume-provisioner",
            &[
                rule(
                    &["create", "delete", "get", "list", "watch"],
                    &[""],
                    &["persistentvolumes"],
                ),
                rule(
                    &["get", "list", "update", "watch"],
                    &[""],
                    &["persistentvolumeclaims"],
                ),
                rule(READ, &["storage."], &["storageclasses"]),
                rule(&["watch"], &[""], &["events"]),
                events(),
            ],
        ),
        cluster_role(
            flavor,
            "system:public-info-viewer",
            &[urls(
                &["get"],
                &["/healthz", "/livez", "/readyz", "/version", "/version/"],
            )],
        ),
        cluster_role(
            flavor,
            "system:service-account-issuer-discovery",
            &[urls(
                &["get"],
                &["/.well-known/openid-configuration", "/openid/v1/jwks"],
            )],
        ),
        cluster_role(
            flavor,
            "system:volume-scheduler",
            &[
                rule(
                    &["get", "list", "patch", "update", "watch"],
                    &[""],
                    &["persistentvolumes"],
                ),
                rule(READ, &["storage."], &["storageclasses"]),
                rule(
                    &["get", "list", "patch", "update", "watch"],
                    &[""],
                    &["persistentvolumeclaims"],
                ),
            ],
        ),
        labelled(
            aggregated(flavor, "view", "view"),
            aggregate_label(flavor, "edit"),
        ),
    ]
}

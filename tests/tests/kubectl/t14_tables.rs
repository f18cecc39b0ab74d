//! `kubectl get` prints the columns and cells it prints against kube-apiserver, from the Tables
//! the server answers (kubernetes flavor, no `--raw`): for every kind below the header line and
//! the cells of a known object, with `-o wide` the extra (priority 1) columns, and `-o yaml` /
//! `-o json` the objects themselves. Ages are not compared (they move); every other cell is.

use std::path::Path;

use apiary_tests::DevCluster;
use serde_json::Value;

use crate::printed::Printed;
use crate::run::kubectl;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

/// One object of every kind the test reads back, in the `default` namespace where namespaced.
/// Nothing runs workloads, so their statuses stay empty and the printed counts are zeros.
const OBJECTS: &str = include_str!("t14_objects.yaml");

/// Expected cells of a row: (column, value) pairs.
type Cells<'a> = &'a [(&'a str, &'a str)];

/// `kubectl get <args>` read as a table.
async fn get(kubeconfig: &Path, args: &[&str]) -> Printed {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    Printed::parse(&kubectl(kubeconfig, &all).await)
}

/// Asserts the header `kubectl get <resource>` prints, and with `-o wide`, and the cells of the
/// row whose `key` column is `name` in both.
async fn assert_columns(
    kubeconfig: &Path,
    resource: &str,
    (key, name): (&str, &str),
    (header, cells): (&[&str], Cells<'_>),
    (wide_header, wide_cells): (&[&str], Cells<'_>),
) {
    let printed = get(kubeconfig, &[resource]).await;
    assert_eq!(printed.header, header, "kubectl get {resource}");
    printed.assert_row(key, name, cells);
    let wide = get(kubeconfig, &[resource, "-o", "wide"]).await;
    assert_eq!(wide.header, wide_header, "kubectl get {resource} -o wide");
    wide.assert_row(key, name, cells);
    wide.assert_row(key, name, wide_cells);
}

/// A field of an object, read with `-o jsonpath`.
async fn field(kubeconfig: &Path, resource: &str, name: &str, path: &str) -> String {
    let template = format!("jsonpath={{{path}}}");
    kubectl(kubeconfig, &["get", resource, name, "-o", &template]).await
}

async fn core_kinds(kubeconfig: &Path) {
    const POD: [&str; 5] = ["NAME", "READY", "STATUS", "RESTARTS", "AGE"];
    let pod_wide = [
        &POD[..],
        &["IP", "NODE", "NOMINATED NODE", "READINESS GATES"],
    ]
    .concat();
    assert_columns(
        kubeconfig,
        "pods",
        ("NAME", "web-0"),
        (
            &POD,
            &[("READY", "0/1"), ("STATUS", "Pending"), ("RESTARTS", "0")],
        ),
        (
            &pod_wide,
            &[
                ("IP", "<none>"),
                ("NODE", "<none>"),
                ("NOMINATED NODE", "<none>"),
                ("READINESS GATES", "<none>"),
            ],
        ),
    )
    .await;

    let cluster_ip = field(kubeconfig, "service", "web", ".spec.clusterIP").await;
    const SERVICE: [&str; 6] = [
        "NAME",
        "TYPE",
        "CLUSTER-IP",
        "EXTERNAL-IP",
        "PORT(S)",
        "AGE",
    ];
    let service_wide = [&SERVICE[..], &["SELECTOR"]].concat();
    assert_columns(
        kubeconfig,
        "services",
        ("NAME", "web"),
        (
            &SERVICE,
            &[
                ("TYPE", "ClusterIP"),
                ("CLUSTER-IP", &cluster_ip),
                ("EXTERNAL-IP", "<none>"),
                ("PORT(S)", "80/TCP"),
            ],
        ),
        (&service_wide, &[("SELECTOR", "app=web")]),
    )
    .await;

    let plain: [(&str, &str, &[&str], Cells); 6] = [
        (
            "configmaps",
            "settings",
            &["NAME", "DATA", "AGE"],
            &[("DATA", "2")],
        ),
        (
            "secrets",
            "password",
            &["NAME", "TYPE", "DATA", "AGE"],
            &[("TYPE", "Opaque"), ("DATA", "1")],
        ),
        (
            "serviceaccounts",
            "builder",
            &["NAME", "SECRETS", "AGE"],
            &[("SECRETS", "0")],
        ),
        (
            "namespaces",
            "default",
            &["NAME", "STATUS", "AGE"],
            &[("STATUS", "Active")],
        ),
        (
            "endpoints",
            "manual",
            &["NAME", "ENDPOINTS", "AGE"],
            &[("ENDPOINTS", "10.1.2.3:8080")],
        ),
        (
            "leases",
            "leader",
            &["NAME", "HOLDER", "AGE"],
            &[("HOLDER", "replica-2")],
        ),
    ];
    for (resource, name, header, cells) in plain {
        assert_columns(
            kubeconfig,
            resource,
            ("NAME", name),
            (header, cells),
            (header, &[]),
        )
        .await;
    }

    const NODE: [&str; 5] = ["NAME", "STATUS", "ROLES", "AGE", "VERSION"];
    let node_wide = [
        &NODE[..],
        &[
            "INTERNAL-IP",
            "EXTERNAL-IP",
            "OS-IMAGE",
            "KERNEL-VERSION",
            "CONTAINER-RUNTIME",
        ],
    ]
    .concat();
    assert_columns(
        kubeconfig,
        "nodes",
        ("NAME", "worker-1"),
        (
            &NODE,
            &[
                ("STATUS", "Unknown"),
                ("ROLES", "worker"),
                ("VERSION", "v1.37.0"),
            ],
        ),
        (
            &node_wide,
            &[
                ("INTERNAL-IP", "10.0.0.7"),
                ("EXTERNAL-IP", "<none>"),
                ("OS-IMAGE", "Debian"),
                ("KERNEL-VERSION", "6.1.0"),
                ("CONTAINER-RUNTIME", "containerd://2.0.0"),
            ],
        ),
    )
    .await;

    const EVENT: [&str; 5] = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"];
    let event_wide = [
        "LAST SEEN",
        "TYPE",
        "REASON",
        "OBJECT",
        "SUBOBJECT",
        "SOURCE",
        "MESSAGE",
        "FIRST SEEN",
        "COUNT",
        "NAME",
    ];
    assert_columns(
        kubeconfig,
        "events",
        ("OBJECT", "pod/web-0"),
        (
            &EVENT,
            &[
                ("TYPE", "Normal"),
                ("REASON", "Started"),
                ("MESSAGE", "Started container web"),
            ],
        ),
        (
            &event_wide,
            &[
                ("SUBOBJECT", "spec.containers{web}"),
                ("SOURCE", "kubelet, worker-1"),
                ("COUNT", "3"),
                ("NAME", "web-0.started"),
            ],
        ),
    )
    .await;

    const PV: [&str; 10] = [
        "NAME",
        "CAPACITY",
        "ACCESS MODES",
        "RECLAIM POLICY",
        "STATUS",
        "CLAIM",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "REASON",
        "AGE",
    ];
    let pv_wide = [&PV[..], &["VOLUMEMODE"]].concat();
    assert_columns(
        kubeconfig,
        "persistentvolumes",
        ("NAME", "pv-1"),
        (
            &PV,
            &[
                ("CAPACITY", "1Gi"),
                ("ACCESS MODES", "RWO"),
                ("RECLAIM POLICY", "Retain"),
                ("CLAIM", ""),
                ("STORAGECLASS", "fast"),
                ("VOLUMEATTRIBUTESCLASS", "<unset>"),
            ],
        ),
        (&pv_wide, &[("VOLUMEMODE", "Filesystem")]),
    )
    .await;

    const PVC: [&str; 8] = [
        "NAME",
        "STATUS",
        "VOLUME",
        "CAPACITY",
        "ACCESS MODES",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "AGE",
    ];
    let pvc_wide = [&PVC[..], &["VOLUMEMODE"]].concat();
    assert_columns(
        kubeconfig,
        "persistentvolumeclaims",
        ("NAME", "claim-1"),
        (
            &PVC,
            &[
                ("VOLUME", ""),
                ("CAPACITY", ""),
                ("STORAGECLASS", "fast"),
                ("VOLUMEATTRIBUTESCLASS", "<unset>"),
            ],
        ),
        (&pvc_wide, &[("VOLUMEMODE", "Block")]),
    )
    .await;
}

async fn workload_kinds(kubeconfig: &Path) {
    const TEMPLATE: [&str; 3] = ["CONTAINERS", "IMAGES", "SELECTOR"];
    const DEPLOYMENT: [&str; 5] = ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"];
    assert_columns(
        kubeconfig,
        "deployments",
        ("NAME", "web"),
        (
            &DEPLOYMENT,
            &[("READY", "0/2"), ("UP-TO-DATE", "0"), ("AVAILABLE", "0")],
        ),
        (
            &[&DEPLOYMENT[..], &TEMPLATE].concat(),
            &[
                ("CONTAINERS", "web"),
                ("IMAGES", "nginx:1.27"),
                ("SELECTOR", "app=web"),
            ],
        ),
    )
    .await;

    const REPLICASET: [&str; 5] = ["NAME", "DESIRED", "CURRENT", "READY", "AGE"];
    assert_columns(
        kubeconfig,
        "replicasets",
        ("NAME", "web-rs"),
        (
            &REPLICASET,
            &[("DESIRED", "2"), ("CURRENT", "0"), ("READY", "0")],
        ),
        (
            &[&REPLICASET[..], &TEMPLATE].concat(),
            &[("CONTAINERS", "web"), ("SELECTOR", "app=rs")],
        ),
    )
    .await;

    assert_columns(
        kubeconfig,
        "statefulsets",
        ("NAME", "db"),
        (&["NAME", "READY", "AGE"], &[("READY", "0/1")]),
        (
            &["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"],
            &[("CONTAINERS", "db"), ("IMAGES", "postgres:17")],
        ),
    )
    .await;

    const DAEMONSET: [&str; 8] = [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "NODE SELECTOR",
        "AGE",
    ];
    assert_columns(
        kubeconfig,
        "daemonsets",
        ("NAME", "agent"),
        (
            &DAEMONSET,
            &[
                ("DESIRED", "0"),
                ("AVAILABLE", "0"),
                ("NODE SELECTOR", "<none>"),
            ],
        ),
        (
            &[&DAEMONSET[..], &TEMPLATE].concat(),
            &[("IMAGES", "agent:1"), ("SELECTOR", "app=agent")],
        ),
    )
    .await;

    const JOB: [&str; 5] = ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"];
    assert_columns(
        kubeconfig,
        "jobs",
        ("NAME", "once"),
        (
            &JOB,
            &[
                ("STATUS", "Running"),
                ("COMPLETIONS", "0/1"),
                ("DURATION", ""),
            ],
        ),
        (&[&JOB[..], &TEMPLATE].concat(), &[("CONTAINERS", "once")]),
    )
    .await;

    const CRONJOB: [&str; 7] = [
        "NAME",
        "SCHEDULE",
        "TIMEZONE",
        "SUSPEND",
        "ACTIVE",
        "LAST SCHEDULE",
        "AGE",
    ];
    assert_columns(
        kubeconfig,
        "cronjobs",
        ("NAME", "nightly"),
        (
            &CRONJOB,
            &[
                ("SCHEDULE", "0 3 * * *"),
                ("TIMEZONE", "<none>"),
                ("SUSPEND", "False"),
                ("ACTIVE", "0"),
                ("LAST SCHEDULE", "<none>"),
            ],
        ),
        (
            &[&CRONJOB[..], &TEMPLATE].concat(),
            &[("IMAGES", "busybox:1")],
        ),
    )
    .await;

    const INGRESS: [&str; 6] = ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"];
    assert_columns(
        kubeconfig,
        "ingresses",
        ("NAME", "site"),
        (
            &INGRESS,
            &[
                ("CLASS", "nginx"),
                ("HOSTS", "example.com"),
                ("ADDRESS", ""),
                ("PORTS", "80"),
            ],
        ),
        (&INGRESS, &[]),
    )
    .await;
}

async fn rbac_and_default_columns(kubeconfig: &Path) {
    // Roles, cluster roles and CRDs have no printer of their own: the default Table's name and
    // creation time, printed as a timestamp.
    let created = field(kubeconfig, "role", "reader", ".metadata.creationTimestamp").await;
    assert_columns(
        kubeconfig,
        "roles",
        ("NAME", "reader"),
        (&["NAME", "CREATED AT"], &[("CREATED AT", &created)]),
        (&["NAME", "CREATED AT"], &[]),
    )
    .await;
    let cluster_roles = get(kubeconfig, &["clusterroles"]).await;
    assert_eq!(cluster_roles.header, ["NAME", "CREATED AT"]);
    cluster_roles.row_where("NAME", "cluster-admin");
    let crds = get(kubeconfig, &["customresourcedefinitions"]).await;
    assert_eq!(crds.header, ["NAME", "CREATED AT"]);
    crds.row_where("NAME", "widgets.example.com");

    const BINDING: [&str; 3] = ["NAME", "ROLE", "AGE"];
    assert_columns(
        kubeconfig,
        "rolebindings",
        ("NAME", "reader-binding"),
        (&BINDING, &[("ROLE", "Role/reader")]),
        (
            &[&BINDING[..], &["USERS", "GROUPS", "SERVICEACCOUNTS"]].concat(),
            &[
                ("USERS", "alice"),
                ("GROUPS", "devs"),
                ("SERVICEACCOUNTS", "default/builder"),
            ],
        ),
    )
    .await;
    let cluster_bindings = get(kubeconfig, &["clusterrolebindings", "-o", "wide"]).await;
    assert_eq!(
        cluster_bindings.header,
        ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    );
    cluster_bindings.assert_row(
        "NAME",
        "cluster-admin",
        &[
            ("ROLE", "ClusterRole/cluster-admin"),
            ("GROUPS", "system:masters"),
        ],
    );
}

/// `-o yaml` and `-o json` print the objects themselves, one or a `List`.
async fn yaml_and_json(kubeconfig: &Path) {
    let yaml = kubectl(kubeconfig, &["get", "configmap", "settings", "-o", "yaml"]).await;
    for line in [
        "apiVersion: v1",
        "kind: ConfigMap",
        "  a: \"1\"",
        "  name: settings",
    ] {
        assert!(yaml.lines().any(|l| l == line), "{line:?} in {yaml}");
    }
    let list: Value =
        serde_json::from_str(&kubectl(kubeconfig, &["get", "pods,services", "-o", "json"]).await)
            .expect("kubectl -o json");
    assert_eq!(list["kind"], "List");
    let kinds: Vec<&str> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|item| item["kind"].as_str())
        .collect();
    assert!(
        kinds.contains(&"Pod") && kinds.contains(&"Service"),
        "{kinds:?}"
    );
}

async fn create_objects(cluster: &DevCluster) {
    let file = write_file(cluster, "objects.yaml", OBJECTS);
    kubectl(&cluster.kubeconfig(), &["create", "-f", &file]).await;
}

// R-HA-016, R-RES-131, R-RES-040, R-RES-041
#[tokio::test]
async fn kubectl_get_prints_the_columns_kube_apiserver_prints() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    create_objects(&cluster).await;
    let kubeconfig = cluster.kubeconfig();
    core_kinds(&kubeconfig).await;
    workload_kinds(&kubeconfig).await;
    rbac_and_default_columns(&kubeconfig).await;
    yaml_and_json(&kubeconfig).await;
}

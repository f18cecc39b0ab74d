//! `kubectl api-resources` and `kubectl api-versions` against a `--flavor kubernetes` cluster:
//! kubectl reads discovery (aggregated, as it asks first) and lists what Kubernetes lists for
//! the same kinds.

use std::collections::HashMap;

use crate::run::kubectl;
use crate::run::kubernetes_cluster;

/// Rows as Kubernetes' `kubectl api-resources` prints them: name, short names, apiVersion,
/// namespaced, kind.
const EXPECTED: [[&str; 5]; 15] = [
    ["configmaps", "cm", "v1", "true", "ConfigMap"],
    ["events", "ev", "v1", "true", "Event"],
    ["events", "ev", "events.k8s.io/v1", "true", "Event"],
    ["namespaces", "ns", "v1", "false", "Namespace"],
    ["pods", "po", "v1", "true", "Pod"],
    ["services", "svc", "v1", "true", "Service"],
    ["deployments", "deploy", "apps/v1", "true", "Deployment"],
    [
        "horizontalpodautoscalers",
        "hpa",
        "autoscaling/v2",
        "true",
        "HorizontalPodAutoscaler",
    ],
    ["cronjobs", "cj", "batch/v1", "true", "CronJob"],
    [
        "customresourcedefinitions",
        "crd,crds",
        "apiextensions.k8s.io/v1",
        "false",
        "CustomResourceDefinition",
    ],
    [
        "clusterroles",
        "",
        "rbac.authorization.k8s.io/v1",
        "false",
        "ClusterRole",
    ],
    [
        "priorityclasses",
        "pc",
        "scheduling.k8s.io/v1",
        "false",
        "PriorityClass",
    ],
    [
        "poddisruptionbudgets",
        "pdb",
        "policy/v1",
        "true",
        "PodDisruptionBudget",
    ],
    [
        "storageclasses",
        "sc",
        "storage.k8s.io/v1",
        "false",
        "StorageClass",
    ],
    [
        "networkpolicies",
        "netpol",
        "networking.k8s.io/v1",
        "true",
        "NetworkPolicy",
    ],
];

/// The group versions served by default, as `kubectl api-versions` sorts them.
const API_VERSIONS: [&str; 23] = [
    "admissionregistration.k8s.io/v1",
    "apiextensions.k8s.io/v1",
    "apiregistration.k8s.io/v1",
    "apps/v1",
    "authentication.k8s.io/v1",
    "authorization.k8s.io/v1",
    "autoscaling/v1",
    "autoscaling/v2",
    "batch/v1",
    "certificates.k8s.io/v1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "events.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1",
    "networking.k8s.io/v1",
    "node.k8s.io/v1",
    "policy/v1",
    "rbac.authorization.k8s.io/v1",
    "resource.k8s.io/v1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1",
    "storagemigration.k8s.io/v1",
    "v1",
];

/// The rows of kubectl's table, keyed by name then apiVersion, cut at the header's column
/// starts (the short names column may be empty).
fn parse_table(out: &str) -> HashMap<(String, String), Vec<String>> {
    let mut lines = out.lines();
    let header = lines.next().expect("a header line");
    let starts: Vec<usize> = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
        .iter()
        .map(|c| header.find(c).unwrap_or_else(|| panic!("{c} in {header}")))
        .collect();
    let mut rows = HashMap::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let cells: Vec<String> = starts
            .iter()
            .enumerate()
            .map(|(i, &start)| {
                let end = starts.get(i + 1).copied().unwrap_or(line.len());
                line.get(start..end.min(line.len()))
                    .unwrap_or_default()
                    .trim()
                    .to_owned()
            })
            .collect();
        rows.insert((cells[0].clone(), cells[2].clone()), cells);
    }
    rows
}

// R-RES-010, R-RES-019, R-HA-016
#[tokio::test]
async fn kubectl_lists_resources_and_versions_as_kubernetes_does() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    // A fresh discovery cache, so kubectl asks this server and not a cached older one.
    let cache = format!("--cache-dir={}", cluster.dir().join("kube-cache").display());

    let out = kubectl(&kubeconfig, &[&cache, "api-resources"]).await;
    let rows = parse_table(&out);
    for expected in EXPECTED {
        let key = (expected[0].to_owned(), expected[2].to_owned());
        let row = rows
            .get(&key)
            .unwrap_or_else(|| panic!("{key:?} missing from:\n{out}"));
        assert_eq!(row, &expected.map(str::to_owned).to_vec(), "{out}");
    }
    assert!(
        !rows.keys().any(|(_, v)| v == "autoscaling/v1"),
        "only preferred versions are listed:\n{out}"
    );

    let out = kubectl(&kubeconfig, &[&cache, "api-versions"]).await;
    let versions: Vec<&str> = out.lines().collect();
    assert_eq!(versions, API_VERSIONS, "{out}");
}

//! RBAC through kubectl on a real `apiary dev --flavor kubernetes` cluster: token-file users
//! bound (by manifests the admin applies) to the default `view` and `edit` roles get exactly
//! what those roles grant, in the bound namespace only, also when the admin acts as them with
//! `--as`.

use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;

use crate::run::kubectl;
use crate::run::kubectl_available;
use crate::run::kubectl_status;
use crate::run::write_file;
use crate::t85_tokens::user_kubeconfig;

const MANIFESTS: &str = r#"apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team}
data: {mode: fast}
---
apiVersion: v1
kind: Secret
metadata: {name: password, namespace: team}
stringData: {value: hunter2}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewers, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: viewer}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: editors, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: editor}]
"#;

const EDITED: &str = r#"apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team}
data: {mode: slow}
"#;

/// Runs kubectl until it succeeds (a binding is in force on a replica once it has applied it
/// and its aggregated role has been filled in) and answers its output; fails after 10 s.
async fn eventually(kubeconfig: &std::path::Path, args: &[&str]) -> String {
    let mut last = String::new();
    for _ in 0..100 {
        let (ok, out) = kubectl_status(kubeconfig, args).await;
        if ok {
            return out;
        }
        last = out;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("kubectl {args:?} kept failing: {last}");
}

/// Asserts that kubectl `args` fails with Kubernetes' forbidden message `message`.
async fn assert_forbidden(kubeconfig: &std::path::Path, args: &[&str], message: &str) {
    let (ok, out) = kubectl_status(kubeconfig, args).await;
    assert!(!ok, "kubectl {args:?} succeeded: {out}");
    assert!(out.contains(message), "kubectl {args:?}: {out}");
}

// R-ACC-177, R-ACC-197, R-ACC-196, R-ACC-157: a user bound to `view` in one
// namespace reads its pods and ConfigMaps and not its Secrets, and nothing in another
// namespace; a user bound to `edit` writes ConfigMaps and cannot read RoleBindings; the admin
// acting as the viewer with `--as` gets the viewer's answers.
#[tokio::test]
async fn view_and_edit_users_get_what_their_roles_grant() {
    if !kubectl_available() {
        return;
    }
    let files = tempfile::tempdir().expect("dir");
    let tokens = files.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        "admin-token,alice,1001,system:masters\nviewer-token,viewer,1002\neditor-token,editor,1003\n",
    )
    .expect("token file");
    let mut options = DevOptions::flavor(Flavor::Kubernetes)
        .flag(&format!("--token-auth-file={}", tokens.display()));
    options.nodes = 1;
    let cluster = DevCluster::start(options)
        .await
        .expect("the cluster starts");
    let admin = user_kubeconfig(&cluster, "alice", "admin-token");
    let viewer = user_kubeconfig(&cluster, "viewer", "viewer-token");
    let editor = user_kubeconfig(&cluster, "editor", "editor-token");
    let manifests = write_file(&cluster, "team.yaml", MANIFESTS);
    kubectl(&admin, &["apply", "-f", &manifests]).await;

    let data = eventually(
        &viewer,
        &[
            "get",
            "configmap",
            "settings",
            "-n",
            "team",
            "-o",
            "jsonpath={.data.mode}",
        ],
    )
    .await;
    assert_eq!(data, "fast");
    let pods = kubectl(&viewer, &["get", "pods", "-n", "team", "-o", "name"]).await;
    assert_eq!(pods.trim(), "");
    assert_forbidden(
        &viewer,
        &["get", "secrets", "-n", "team"],
        r#"secrets is forbidden: User "viewer" cannot list resource "secrets" in API group "" in the namespace "team""#,
    )
    .await;
    assert_forbidden(
        &viewer,
        &["get", "configmaps", "-n", "default"],
        r#"configmaps is forbidden: User "viewer" cannot list resource "configmaps" in API group "" in the namespace "default""#,
    )
    .await;
    assert_forbidden(
        &admin,
        &["get", "secret", "password", "-n", "team", "--as", "viewer"],
        r#"secrets "password" is forbidden: User "viewer" cannot get resource "secrets" in API group "" in the namespace "team""#,
    )
    .await;
    let as_viewer = kubectl(
        &admin,
        &[
            "get",
            "configmap",
            "settings",
            "-n",
            "team",
            "--as",
            "viewer",
            "-o",
            "name",
        ],
    )
    .await;
    assert_eq!(as_viewer.trim(), "configmap/settings");

    let edited = write_file(&cluster, "edited.yaml", EDITED);
    eventually(&editor, &["apply", "-f", &edited]).await;
    let mode = kubectl(
        &viewer,
        &[
            "get",
            "configmap",
            "settings",
            "-n",
            "team",
            "-o",
            "jsonpath={.data.mode}",
        ],
    )
    .await;
    assert_eq!(mode, "slow");
    assert_forbidden(
        &editor,
        &["get", "rolebindings", "-n", "team"],
        r#"rolebindings.rbac.authorization.k8s.io is forbidden: User "editor" cannot list resource "rolebindings" in API group "rbac.authorization.k8s.io" in the namespace "team""#,
    )
    .await;
    let changed = write_file(&cluster, "changed.yaml", &EDITED.replace("slow", "other"));
    assert_forbidden(
        &viewer,
        &["apply", "-f", &changed],
        r#"User "viewer" cannot patch resource "configmaps" in API group "" in the namespace "team""#,
    )
    .await;
}

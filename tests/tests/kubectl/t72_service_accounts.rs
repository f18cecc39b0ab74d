//! kubectl and service accounts: a new namespace gets its `default` ServiceAccount and the
//! `kube-root-ca.crt` ConfigMap from the controllers, and `kubectl run` there gives a pod that
//! runs as `default` with the projected `kube-api-access-` token volume mounted.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::run::kubectl;
use crate::run::kubernetes_cluster;
use crate::run::until;

// R-ACC-124
#[tokio::test]
async fn a_new_namespace_gets_its_account_and_pods_their_token() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    kubectl(&kubeconfig, &["create", "ns", "x"]).await;

    let out = until(
        &kubeconfig,
        &["get", "sa", "default", "-n", "x"],
        |ok, _| ok,
    )
    .await;
    assert!(out.contains("default"), "{out}");
    let jsonpath = "jsonpath={.data.ca\\.crt}";
    let args = ["get", "cm", "kube-root-ca.crt", "-n", "x", "-o", jsonpath];
    let bundle = until(&kubeconfig, &args, |ok, out| ok && !out.is_empty()).await;
    let authority = kubectl(
        &kubeconfig,
        &[
            "config",
            "view",
            "--raw",
            "-o",
            "jsonpath={.clusters[0].cluster.certificate-authority-data}",
        ],
    )
    .await;
    let authority = STANDARD.decode(authority.trim()).expect("base64");
    assert_eq!(
        bundle.as_bytes(),
        authority.as_slice(),
        "the bundle kubectl verifies the server with"
    );

    kubectl(&kubeconfig, &["run", "p", "--image=nginx", "-n", "x"]).await;
    let out = kubectl(&kubeconfig, &["get", "pod", "p", "-n", "x", "-o", "json"]).await;
    let pod: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(pod["spec"]["serviceAccountName"], "default", "{out}");
    let volume = (pod["spec"]["volumes"].as_array().into_iter().flatten())
        .find(|v| {
            v["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("kube-api-access-"))
        })
        .unwrap_or_else(|| panic!("a token volume: {out}"));
    assert_eq!(
        volume["projected"]["sources"][0]["serviceAccountToken"]["path"],
        "token"
    );
    let mounts = &pod["spec"]["containers"][0]["volumeMounts"];
    assert_eq!(mounts[0]["name"], volume["name"], "{out}");
    assert_eq!(
        mounts[0]["mountPath"],
        "/var/run/secrets/kubernetes.io/serviceaccount"
    );
    assert_eq!(mounts[0]["readOnly"], true);
}

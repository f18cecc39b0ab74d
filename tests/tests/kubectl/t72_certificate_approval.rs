//! kubectl and certificate signing requests: `kubectl certificate approve` writes the
//! `approval` subresource, and `kubectl get csr` shows the request approved. (The server's
//! refusal to deny an approved request is proved by the router tests: kubectl refuses it
//! itself, even with `--force`.)

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use crate::run::kubectl;
use crate::run::kubernetes_cluster;

/// A CertificateSigningRequest manifest named `name` for a fresh key.
fn request(name: &str) -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::default();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "alice");
    let pem = (params.serialize_request(&key))
        .and_then(|r| r.pem())
        .expect("request");
    json!({
        "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": STANDARD.encode(pem), "signerName": "example.com/signer",
                 "usages": ["client auth"]},
    })
    .to_string()
}

#[tokio::test]
async fn kubectl_certificate_approve_decides_a_request() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let manifest = cluster.dir().join("csr.json");
    std::fs::write(&manifest, request("alice")).expect("manifest");
    let path = manifest.to_string_lossy().into_owned();
    kubectl(&kubeconfig, &["apply", "-f", &path]).await;

    let out = kubectl(&kubeconfig, &["certificate", "approve", "alice"]).await;
    assert!(
        out.contains("certificatesigningrequest.certificates.k8s.io/alice approved"),
        "{out}"
    );
    let out = kubectl(&kubeconfig, &["get", "csr", "alice"]).await;
    assert!(out.contains("Approved"), "{out}");
    let jsonpath = "jsonpath={.status.conditions[0].reason}";
    let reason = kubectl(&kubeconfig, &["get", "csr", "alice", "-o", jsonpath]).await;
    assert_eq!(reason.trim(), "KubectlApprove");
}

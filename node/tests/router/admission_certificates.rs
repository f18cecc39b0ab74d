//! The certificate admission plugins (on by default, as in Kubernetes): approving a
//! CertificateSigningRequest needs `approve` on its signer and issuing its certificate
//! `sign`, a ClusterTrustBundle for a signer needs `attest` (each granted by the signer's name
//! or its domain's `<domain>/*`), and the API server client signer refuses `system:masters`
//! subjects even to an administrator; the `approval` subresource changes only the
//! conditions. Refusals are worded as kube-apiserver words them.

use base64::Engine as _;
use serde_json::Value;
use serde_json::json;

use super::rbac::rbac_app;
use super::rbac::settled;
use super::rbac::user;
use super::*;

const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
const BUNDLES: &str = "/apis/certificates.k8s.io/v1/clustertrustbundles";
const SIGNER: &str = "example.com/signer";

fn base64(bytes: impl AsRef<[u8]>) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A certificate request for `cn` in `org`, for `signer`.
fn csr(name: &str, signer: &str, org: &str) -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::default();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "u");
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, org);
    let pem = params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem");
    json!({
        "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": base64(pem), "signerName": signer, "usages": ["client auth"]},
    })
    .to_string()
}

/// A PEM certificate, as a signer would issue one.
fn issued() -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let params = rcgen::CertificateParams::new(vec!["u".to_owned()]).expect("params");
    params.self_signed(&key).expect("cert").pem()
}

/// Creates, as the admin, the ClusterRole `name` with `rules` bound to the user `who`.
async fn grant(app: &Router, name: &str, who: &str, rules: Value) {
    let rbac = "/apis/rbac.authorization.k8s.io/v1";
    let role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name}, "rules": rules,
    });
    created(app, &format!("{rbac}/clusterroles"), &role.to_string()).await;
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": who}],
    });
    let path = format!("{rbac}/clusterrolebindings");
    created(app, &path, &binding.to_string()).await;
}

/// `verb` on the signers named `names`.
fn on_signers(verb: &str, names: &[&str]) -> Value {
    json!([{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
            "verbs": [verb], "resourceNames": names}])
}

fn message(reply: &Reply) -> String {
    let status = assert_status(reply, 403, "Forbidden");
    status["message"].as_str().unwrap_or_default().to_owned()
}

// Issuing the certificate or changing the conditions through `/status` needs `sign` on the
// signer (here granted by name; another domain's wildcard grants nothing); the write itself
// is allowed by RBAC all along.
#[tokio::test]
async fn signing_needs_the_sign_verb() {
    let (app, storage, rbac) = rbac_app().await;
    let carl = || Some(user("carl", "dev"));
    let writes = json!([{"apiGroups": ["certificates.k8s.io"],
        "resources": ["certificatesigningrequests", "certificatesigningrequests/status"],
        "verbs": ["create", "get", "update"]}]);
    grant(&app, "csr-writer", "carl", writes).await;
    settled(&storage, &rbac).await;
    let made = call(&app, "POST", CSRS, Some(&csr("c1", SIGNER, "dev")), carl()).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());

    let mut signed = made.json();
    signed["status"]["certificate"] = json!(base64(issued()));
    let status = format!("{CSRS}/c1/status");
    let body = signed.to_string();
    let refused = call(&app, "PUT", &status, Some(&body), carl()).await;
    assert_eq!(
        message(&refused),
        "certificatesigningrequests.certificates.k8s.io \"c1\" is forbidden: user not \
         permitted to sign requests with signerName \"example.com/signer\""
    );
    let mut failed = made.json();
    failed["status"]["conditions"] = json!([{"type": "Failed", "status": "True",
        "reason": "Refused", "message": "no"}]);
    let refused = call(&app, "PUT", &status, Some(&failed.to_string()), carl()).await;
    assert_status(&refused, 403, "Forbidden");
    grant(
        &app,
        "other",
        "carl",
        on_signers("sign", &["example.org/*"]),
    )
    .await;
    settled(&storage, &rbac).await;
    let refused = call(&app, "PUT", &status, Some(&body), carl()).await;
    assert_status(&refused, 403, "Forbidden");
    grant(&app, "signer", "carl", on_signers("sign", &[SIGNER])).await;
    settled(&storage, &rbac).await;
    let allowed = call(&app, "PUT", &status, Some(&body), carl()).await;
    assert_eq!(allowed.status, StatusCode::OK, "{}", allowed.text());
    assert!(allowed.json()["status"]["certificate"].is_string());
}

// A request is created undecided. The `approval` subresource (what `kubectl certificate
// approve` writes) needs `approve` on the stored request's signer, takes only the conditions,
// and may not take back a decision; a status writer may not decide the approval.
#[tokio::test]
async fn approval_needs_the_approve_verb_and_changes_only_the_conditions() {
    let (app, storage, rbac) = rbac_app().await;
    let carl = || Some(user("carl", "dev"));
    let writes = json!([{"apiGroups": ["certificates.k8s.io"],
        "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"],
        "verbs": ["create", "get", "update"]}]);
    grant(&app, "csr-approver", "carl", writes).await;
    settled(&storage, &rbac).await;
    let mut sent: Value = serde_json::from_str(&csr("a1", SIGNER, "dev")).expect("JSON");
    sent["status"] = json!({"conditions": [{"type": "Approved", "status": "True"}]});
    let made = call(&app, "POST", CSRS, Some(&sent.to_string()), carl()).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    assert_eq!(made.json()["status"], json!({}), "created undecided");
    let mut approved = made.json();
    approved["spec"]["signerName"] = json!("example.com/allowed");
    approved["status"]["conditions"] = json!([{"type": "Approved", "status": "True",
        "reason": "KubectlApprove", "message": "approved by carl"}]);
    let approval = format!("{CSRS}/a1/approval");
    let body = approved.to_string();
    let refused = call(&app, "PUT", &approval, Some(&body), carl()).await;
    assert_eq!(
        message(&refused),
        "certificatesigningrequests.certificates.k8s.io \"a1\" is forbidden: user not \
         permitted to approve requests with signerName \"example.com/signer\""
    );
    grant(&app, "approver", "carl", on_signers("approve", &[SIGNER])).await;
    settled(&storage, &rbac).await;
    let allowed = call(&app, "PUT", &approval, Some(&body), carl()).await;
    assert_eq!(allowed.status, StatusCode::OK, "{}", allowed.text());
    let stored = allowed.json();
    assert_eq!(stored["spec"]["signerName"], SIGNER);
    assert_eq!(stored["status"]["conditions"][0]["type"], "Approved");

    let mut taken_back = stored.clone();
    taken_back["status"]["conditions"] = json!([]);
    let refused = call(
        &app,
        "PUT",
        &approval,
        Some(&taken_back.to_string()),
        carl(),
    )
    .await;
    let status = assert_status(&refused, 422, "Invalid");
    assert!(
        status["message"].as_str().unwrap_or_default().contains(
            "status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""
        ),
        "{status}"
    );
    let mut denied = stored.clone();
    denied["status"]["conditions"] = json!([stored["status"]["conditions"][0],
        {"type": "Denied", "status": "True"}]);
    let path = format!("{CSRS}/a1/status");
    let refused = admin_call(&app, "PUT", &path, Some(&denied.to_string())).await;
    let status = assert_status(&refused, 422, "Invalid");
    let text = status["message"].as_str().unwrap_or_default();
    assert!(
        text.contains("updates may not add a condition of type \"Denied\"")
            && text.contains("Approved and Denied conditions are mutually exclusive"),
        "{status}"
    );
}

// A status write that issues nothing and changes no condition needs no `sign`.
#[tokio::test]
async fn a_status_write_that_issues_nothing_needs_no_sign() {
    let (app, storage, rbac) = rbac_app().await;
    let carl = || Some(user("carl", "dev"));
    let writes = json!([{"apiGroups": ["certificates.k8s.io"],
        "resources": ["certificatesigningrequests/status"], "verbs": ["update"]}]);
    grant(&app, "status-writer", "carl", writes).await;
    settled(&storage, &rbac).await;
    let made = created(&app, CSRS, &csr("c2", SIGNER, "dev")).await;
    let path = format!("{CSRS}/c2/status");
    let same = call(&app, "PUT", &path, Some(&made.to_string()), carl()).await;
    assert_eq!(same.status, StatusCode::OK, "{}", same.text());
}

// The API server client signer refuses a `system:masters` subject, to an administrator too;
// other organizations and other signers pass.
#[tokio::test]
async fn the_client_signer_refuses_system_masters() {
    let (app, _, _) = rbac_app().await;
    let client = "kubernetes.io/kube-apiserver-client";
    let refused = admin_call(
        &app,
        "POST",
        CSRS,
        Some(&csr("m", client, "system:masters")),
    )
    .await;
    assert_eq!(
        message(&refused),
        "certificatesigningrequests.certificates.k8s.io \"m\" is forbidden: use of \
         kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    );
    created(&app, CSRS, &csr("d", client, "dev")).await;
    created(&app, CSRS, &csr("o", SIGNER, "system:masters")).await;
}

/// A CA certificate, as a bundle holds them.
fn trust_anchor() -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(vec!["ca".to_owned()]).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.self_signed(&key).expect("cert").pem()
}

fn bundle(name: &str, signer: Option<&str>) -> String {
    let mut spec = json!({"trustBundle": trust_anchor()});
    if let Some(signer) = signer {
        spec["signerName"] = json!(signer);
    }
    json!({
        "apiVersion": "certificates.k8s.io/v1", "kind": "ClusterTrustBundle",
        "metadata": {"name": name}, "spec": spec,
    })
    .to_string()
}

// A bundle for a signer needs `attest` on it; one without a signer needs nothing more; an
// update that changes only the garbage collector's fields needs nothing more either.
#[tokio::test]
async fn a_signer_bundle_needs_attest() {
    let (app, storage, rbac) = rbac_app().await;
    let carl = || Some(user("carl", "dev"));
    let writes = json!([{"apiGroups": ["certificates.k8s.io"],
        "resources": ["clustertrustbundles"], "verbs": ["create", "get", "update"]}]);
    grant(&app, "bundle-writer", "carl", writes).await;
    settled(&storage, &rbac).await;
    let name = "example.com:signer:b1";
    let refused = call(
        &app,
        "POST",
        BUNDLES,
        Some(&bundle(name, Some(SIGNER))),
        carl(),
    )
    .await;
    assert_eq!(
        message(&refused),
        "clustertrustbundles.certificates.k8s.io \"example.com:signer:b1\" is forbidden: \
         user not permitted to attest for signerName \"example.com/signer\""
    );
    let plain = call(&app, "POST", BUNDLES, Some(&bundle("plain", None)), carl()).await;
    assert_eq!(plain.status, StatusCode::CREATED, "{}", plain.text());

    let stored = created(&app, BUNDLES, &bundle(name, Some(SIGNER))).await;
    let path = format!("{BUNDLES}/{name}");
    let mut finalized = stored.clone();
    finalized["metadata"]["finalizers"] = json!(["example.com/keep"]);
    let gc = call(&app, "PUT", &path, Some(&finalized.to_string()), carl()).await;
    assert_eq!(gc.status, StatusCode::OK, "{}", gc.text());
    let mut labelled = gc.json();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    let body = labelled.to_string();
    let refused = call(&app, "PUT", &path, Some(&body), carl()).await;
    assert_status(&refused, 403, "Forbidden");

    grant(&app, "attester", "carl", on_signers("attest", &[SIGNER])).await;
    settled(&storage, &rbac).await;
    let allowed = call(&app, "PUT", &path, Some(&body), carl()).await;
    assert_eq!(allowed.status, StatusCode::OK, "{}", allowed.text());
    let other = bundle("example.com:signer:b2", Some(SIGNER));
    let made = call(&app, "POST", BUNDLES, Some(&other), carl()).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
}

// A bundle for a signer is named after it (`example.com:signer:<name>`), and one without a
// signer has no `:` in its name; the signer of a stored bundle cannot change.
#[tokio::test]
async fn signer_bundles_are_named_after_their_signer() {
    let (app, _) = app().await;
    let refused = admin_call(&app, "POST", BUNDLES, Some(&bundle("b3", Some(SIGNER)))).await;
    let status = assert_status(&refused, 422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "Invalid value: \"b3\": ClusterTrustBundle for signerName example.com/signer must be \
         named with prefix example.com:signer:"
    );
    let colon = admin_call(&app, "POST", BUNDLES, Some(&bundle("a:b", None))).await;
    assert_status(&colon, 422, "Invalid");
    let name = "example.com:signer:b3";
    let stored = created(&app, BUNDLES, &bundle(name, Some(SIGNER))).await;
    let mut moved = stored.clone();
    moved["spec"]["signerName"] = json!("example.com/other");
    let path = format!("{BUNDLES}/{name}");
    let refused = admin_call(&app, "PUT", &path, Some(&moved.to_string())).await;
    let status = assert_status(&refused, 422, "Invalid");
    let causes = status["details"]["causes"].as_array().expect("causes");
    assert!(
        (causes.iter()).any(|c| c["field"] == "spec.signerName"
            && c["message"] == "Invalid value: \"example.com/other\": field is immutable"),
        "{causes:?}"
    );
}

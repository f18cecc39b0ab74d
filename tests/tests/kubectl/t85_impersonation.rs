//! Impersonation with kubectl (issue 14, item 2): `--as` and `--as-group` from the admin
//! kubeconfig of `apiary dev --flavor kubernetes`, a user without the `impersonate` verb
//! refused, and the replica's audit log naming the impersonated user. The SelfSubjectReview
//! goes in JSON through `kubectl create --raw` (t12 runs `kubectl auth whoami` itself).

use std::path::Path;
use std::path::PathBuf;

use apiary_tests::DevCluster;
use rcgen::BasicConstraints;
use rcgen::CertificateParams;
use rcgen::DistinguishedName;
use rcgen::DnType;
use rcgen::ExtendedKeyUsagePurpose;
use rcgen::IsCa;
use rcgen::Issuer;
use rcgen::KeyPair;
use rcgen::KeyUsagePurpose;
use serde_json::Value;
use serde_json::json;

use crate::run::audited_cluster;
use crate::run::events_until;
use crate::run::kubectl;
use crate::run::kubectl_available;
use crate::run::kubectl_status;
use crate::run::write_file;

const POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\n\
rules:\n- level: None\n  nonResourceURLs: [\"/readyz*\", \"/livez*\", \"/healthz*\"]\n\
- level: Metadata\n";

const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// A client certificate of user `name` in `group`, signed by the dev cluster's client CA
/// (`ca.crt`/`ca.key` in its directory); the certificate and key files.
fn user_certificate(dir: &Path, name: &str, group: &str) -> (PathBuf, PathBuf) {
    let ca_key = std::fs::read_to_string(dir.join("ca.key")).expect("the cluster's CA key");
    let ca_key = KeyPair::from_pem(&ca_key).expect("a PEM key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.distinguished_name = DistinguishedName::new();
    ca.distinguished_name
        .push(DnType::CommonName, "apiary-dev-ca");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().expect("key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, name);
    params
        .distinguished_name
        .push(DnType::OrganizationName, group);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let cert = params.signed_by(&key, &issuer).expect("signed");
    let cert_file = dir.join(format!("{name}.crt"));
    let key_file = dir.join(format!("{name}.key"));
    std::fs::write(&cert_file, cert.pem()).expect("certificate written");
    std::fs::write(&key_file, key.serialize_pem()).expect("key written");
    (cert_file, key_file)
}

/// A copy of the admin kubeconfig whose user is `name` (group `group`).
async fn kubeconfig_of(cluster: &DevCluster, name: &str, group: &str) -> PathBuf {
    let (cert, key) = user_certificate(cluster.dir(), name, group);
    let path = cluster.dir().join(format!("{name}.kubeconfig"));
    std::fs::copy(cluster.kubeconfig(), &path).expect("kubeconfig copied");
    let client_certificate = format!("--client-certificate={}", cert.display());
    let client_key = format!("--client-key={}", key.display());
    kubectl(
        &path,
        &[
            "config",
            "set-credentials",
            name,
            &client_certificate,
            &client_key,
            "--embed-certs=true",
        ],
    )
    .await;
    let user = format!("--user={name}");
    kubectl(&path, &["config", "set-context", "--current", &user]).await;
    path
}

// R-ACC-149, R-ACC-150, R-ACC-154, R-ACC-157, R-ACC-158: kubectl's --as and --as-group make
// an admin's request run, and be authorized and audited, as that user; a user without the
// impersonate verb is refused.
#[tokio::test]
async fn kubectl_as_acts_as_another_user() {
    if !kubectl_available() {
        return;
    }
    let (_files, cluster) = audited_cluster(POLICY).await;
    let admin = cluster.kubeconfig();

    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let file = write_file(&cluster, "review.json", &review.to_string());
    let args = [
        "--as=alice",
        "--as-group=dev",
        "--as-group=ops",
        "create",
        "--raw",
        WHOAMI,
        "-f",
        &file,
    ];
    let out = kubectl(&admin, &args).await;
    let me: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(
        me["status"]["userInfo"],
        json!({"username": "alice", "groups": ["dev", "ops", "system:authenticated"]}),
        "{me}"
    );

    // Discovery as the admin first: kubectl caches it, so alice's list goes straight out.
    kubectl(&admin, &["get", "namespaces"]).await;
    let (ok, text) = kubectl_status(&admin, &["--as=alice", "get", "namespaces"]).await;
    assert!(!ok, "{text}");
    assert!(
        text.contains(r#"namespaces is forbidden: User "alice" cannot list resource "namespaces""#),
        "{text}"
    );

    let bob = kubeconfig_of(&cluster, "bob", "dev").await;
    let (ok, text) = kubectl_status(&bob, &["--as=alice", "get", "namespaces"]).await;
    assert!(!ok, "{text}");
    assert!(text.contains(r#"User "bob" cannot impersonate"#), "{text}");

    let log = cluster.dir().join("node-1").join("audit.log");
    let is_list = |e: &Value| {
        e["verb"] == "list"
            && e["objectRef"]["resource"] == "namespaces"
            && e["impersonatedUser"]["username"] == "alice"
    };
    let events = events_until(&log, is_list).await;
    let list = events
        .iter()
        .find(|e| is_list(e))
        .unwrap_or_else(|| panic!("no impersonated list in {events:?}"));
    assert_eq!(list["user"]["username"], "admin", "{list}");
    assert_eq!(
        list["impersonatedUser"]["groups"],
        json!(["system:authenticated"]),
        "{list}"
    );
    assert_eq!(
        list["authenticationMetadata"]["impersonationConstraint"], "impersonate:user-info",
        "{list}"
    );
    assert_eq!(list["responseStatus"]["code"], 403, "{list}");
}

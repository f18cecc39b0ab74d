//! Unit tests of the certificate plugins' decisions on objects.

use base64::Engine as _;
use serde_json::json;

use super::ctb_attest::only_bookkeeping;
use super::signing::signs;
use super::subject_restriction::organizations;

/// The base64 of a PEM certificate request for a subject in `organizations` (rcgen keeps
/// the last of several).
fn request(organizations: &[&str]) -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::default();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "u");
    for o in organizations {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, *o);
    }
    let pem = params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem");
    base64::engine::general_purpose::STANDARD.encode(pem)
}

#[test]
fn organizations_are_read_from_the_request_subject() {
    assert_eq!(
        organizations(&request(&["system:masters"])).unwrap(),
        ["system:masters"]
    );
    assert_eq!(organizations(&request(&[])).unwrap(), Vec::<String>::new());
}

#[test]
fn a_request_that_is_not_a_pem_certificate_request_is_unreadable() {
    let certificate = base64::engine::general_purpose::STANDARD
        .encode("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    assert_eq!(
        organizations(&certificate).unwrap_err(),
        "PEM block type must be CERTIFICATE REQUEST"
    );
    assert!(organizations("!!").is_err());
    let garbage = base64::engine::general_purpose::STANDARD
        .encode("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n");
    assert!(organizations(&garbage).unwrap_err().starts_with("x509: "));
}

#[test]
fn signing_is_a_change_of_the_certificate_or_the_conditions() {
    let old = json!({"status": {"conditions": [{"type": "Approved", "status": "True"}]}});
    assert!(!signs(Some(&old), Some(&old)));
    let mut issued = old.clone();
    issued["status"]["certificate"] = json!("Y2VydA==");
    assert!(signs(Some(&issued), Some(&old)));
    let mut failed = old.clone();
    if let Some(conditions) = failed["status"]["conditions"].as_array_mut() {
        conditions.push(json!({"type": "Failed", "status": "True"}));
    }
    assert!(signs(Some(&failed), Some(&old)));
    // Absent, null and empty are the same empty field.
    let bare = json!({"status": {}});
    let empty = json!({"status": {"certificate": "", "conditions": null}});
    assert!(!signs(Some(&empty), Some(&bare)));
}

#[test]
fn only_garbage_collector_and_server_fields_are_bookkeeping() {
    let old = json!({
        "metadata": {"name": "b", "resourceVersion": "1", "finalizers": ["x"]},
        "spec": {"signerName": "example.com/s", "trustBundle": "pem"},
    });
    let mut collected = old.clone();
    collected["metadata"]["finalizers"] = json!([]);
    collected["metadata"]["ownerReferences"] = json!([{"uid": "u"}]);
    collected["metadata"]["resourceVersion"] = json!("2");
    assert!(only_bookkeeping(&collected, &old));
    let mut labelled = old.clone();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    assert!(!only_bookkeeping(&labelled, &old));
    let mut rebundled = old.clone();
    rebundled["spec"]["trustBundle"] = json!("other");
    assert!(!only_bookkeeping(&rebundled, &old));
}

/// Allows `carl` the verb `approve` on the signers named in `names`, and nothing else.
struct Approver {
    names: &'static [&'static str],
}

#[async_trait::async_trait]
impl crate::auth::Authorizer for Approver {
    async fn authorize(&self, attributes: &crate::auth::Attributes<'_>) -> crate::auth::Decision {
        let r = attributes.request;
        let allowed = attributes.user.name == "carl"
            && r.verb.as_str() == "approve"
            && r.api_group == "certificates.k8s.io"
            && r.resource == "signers"
            && self.names.contains(&r.name.as_str());
        match allowed {
            true => crate::auth::Decision::Allow,
            false => crate::auth::Decision::NoOpinion(String::new()),
        }
    }
}

fn signers(names: &'static [&'static str]) -> super::Signers {
    let chain = crate::auth::AuthorizerChain::new(vec![std::sync::Arc::new(Approver { names })]);
    super::Signers::new(crate::flavor::Flavor::Kubernetes, chain)
}

// A verb on a signer is granted by its name or by its domain's `<domain>/*`, for that user
// only.
#[tokio::test]
async fn a_signer_verb_is_granted_by_name_or_domain_wildcard() {
    let carl = crate::auth::UserInfo {
        name: "carl".to_owned(),
        ..Default::default()
    };
    let dave = crate::auth::UserInfo {
        name: "dave".to_owned(),
        ..Default::default()
    };
    let by_name = signers(&["example.com/signer"]);
    assert!(by_name.allows(&carl, "approve", "example.com/signer").await);
    assert!(!by_name.allows(&carl, "approve", "example.com/other").await);
    assert!(!by_name.allows(&carl, "sign", "example.com/signer").await);
    assert!(!by_name.allows(&dave, "approve", "example.com/signer").await);
    let by_domain = signers(&["example.com/*"]);
    assert!(
        by_domain
            .allows(&carl, "approve", "example.com/other")
            .await
    );
    assert!(
        !by_domain
            .allows(&carl, "approve", "example.org/signer")
            .await
    );
}

// CertificateApproval judges updates of `certificatesigningrequests/approval` by the stored
// request's signer, with Kubernetes' message.
#[tokio::test]
async fn approval_needs_approve_on_the_stored_signer() {
    use crate::admission::Attributes;
    use crate::admission::Notes;
    use crate::admission::Operation;
    use crate::admission::Plugin;
    let csrs = crate::registry::builtin::rows()
        .iter()
        .map(|row| row.resource_type(crate::flavor::Flavor::Kubernetes))
        .find(|r| r.plural == "certificatesigningrequests")
        .expect("served");
    let carl = crate::auth::UserInfo {
        name: "carl".to_owned(),
        ..Default::default()
    };
    let attributes = Attributes {
        operation: Operation::Update,
        resource: &csrs,
        subresource: "approval",
        object_kind: None,
        namespace: "",
        name: "c1",
        user: &carl,
        dry_run: false,
        field_manager: None,
        force: false,
        delete: None,
        shape: crate::patch::Shape::untyped(),
    };
    let stored = json!({"spec": {"signerName": "example.com/signer"}});
    let renamed = json!({"spec": {"signerName": "example.com/allowed"}});
    let plugin = super::CertificateApproval::new(signers(&["example.com/allowed"]));
    let mut notes = Notes::default();
    let refused = plugin
        .validate(&attributes, Some(&renamed), Some(&stored), &mut notes)
        .await
        .expect_err("refused");
    assert_eq!(
        refused.to_string(),
        "certificatesigningrequests.certificates.k8s.io \"c1\" is forbidden: user not \
         permitted to approve requests with signerName \"example.com/signer\""
    );
    plugin
        .validate(&attributes, Some(&stored), Some(&renamed), &mut notes)
        .await
        .expect("allowed");
}

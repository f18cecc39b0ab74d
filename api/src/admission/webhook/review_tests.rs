//! Tests of AdmissionReview answers: verdicts, patches, warnings, annotations, versions.

use serde_json::json;

use super::*;

fn answer(response: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": response,
    }))
    .unwrap_or_default()
}

#[test]
fn an_answer_carries_its_verdict_patch_warnings_and_annotations() {
    let patch = r#"[{"op":"add","path":"/x","value":1}]"#;
    let body = answer(json!({
        "uid": "u1",
        "allowed": true,
        "patchType": "JSONPatch",
        "patch": base64::engine::general_purpose::STANDARD.encode(patch),
        "warnings": ["w1", "w2"],
        "auditAnnotations": {"k": "v"},
    }));
    let read = read_answer(&body, "v1", "u1", true).expect("valid");
    assert!(read.allowed);
    assert_eq!(read.patch.as_deref(), Some(patch.as_bytes()));
    assert_eq!(read.warnings, ["w1", "w2"]);
    assert_eq!(
        read.audit_annotations.get("k").map(String::as_str),
        Some("v")
    );
}

#[test]
fn a_v1_answer_must_name_the_review_and_its_uid() {
    let wrong_uid = answer(json!({"uid": "other", "allowed": true}));
    assert_eq!(
        read_answer(&wrong_uid, "v1", "u1", true),
        Err(r#"expected response.uid="u1", got "other""#.to_owned())
    );
    let wrong_kind = br#"{"apiVersion":"v1","kind":"Status","response":{}}"#;
    assert_eq!(
        read_answer(wrong_kind, "v1", "u1", true),
        Err("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got v1, Kind=Status".to_owned())
    );
    let absent = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#;
    assert_eq!(
        read_answer(absent, "v1", "u1", true),
        Err("webhook response was absent".to_owned())
    );
    let beta = br#"{"response":{"allowed":true}}"#;
    assert!(read_answer(beta, "v1beta1", "u1", true).is_ok_and(|a| a.allowed));
}

#[test]
fn a_patch_needs_its_type_and_a_mutating_webhook() {
    let encoded = base64::engine::general_purpose::STANDARD.encode("[]");
    let untyped = answer(json!({"uid": "u", "allowed": true, "patch": encoded}));
    assert_eq!(
        read_answer(&untyped, "v1", "u", true),
        Err("webhook returned response.patch but not response.patchType".to_owned())
    );
    let merge = answer(json!({"uid": "u", "allowed": true, "patch": encoded,
        "patchType": "MergePatch"}));
    assert_eq!(
        read_answer(&merge, "v1", "u", true),
        Err(r#"webhook returned invalid response.patchType of "MergePatch""#.to_owned())
    );
    let typed = answer(json!({"uid": "u", "allowed": true, "patch": encoded,
        "patchType": "JSONPatch"}));
    assert_eq!(
        read_answer(&typed, "v1", "u", false),
        Err("validating webhook may not return a patch".to_owned())
    );
}

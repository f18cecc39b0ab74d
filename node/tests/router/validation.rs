//! Object validation through the HTTP API (R-RES-030, R-RES-235, R-RES-236): a write that
//! fails validation is 422 Invalid with one cause per bad field (`field`, `reason`, the
//! message without the path), in both flavors, and stores nothing.

use serde_json::json;

use super::*;
use apiary_api::validation::TOTAL_ANNOTATION_SIZE_LIMIT;

/// The causes of a 422 Invalid answer as (field, reason, message).
fn causes(reply: &Reply) -> Vec<(String, String, String)> {
    let s = assert_status(reply, 422, "Invalid");
    s["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (text("field"), text("reason"), text("message"))
        })
        .collect()
}

fn cause(field: &str, reason: &str, message: &str) -> (String, String, String) {
    (field.to_owned(), reason.to_owned(), message.to_owned())
}

// R-RES-235, R-RES-236, R-RES-028, R-RES-027: every metadata problem is its own cause.
#[tokio::test]
async fn object_meta_problems_are_one_cause_each_in_both_flavors() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let (app, storage) = app_in(flavor).await;
        let before = storage.keys().await;
        let body = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": "m",
                "labels": {"app": "-web"},
                "annotations": {"a/b/c": "x"},
                "finalizers": ["hold"],
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r"}]
            }
        });
        let r = admin_call(&app, "POST", CM_PATH, Some(&body.to_string())).await;
        let got = causes(&r);
        let fields: Vec<(&str, &str)> = got
            .iter()
            .map(|(f, r, _)| (f.as_str(), r.as_str()))
            .collect();
        assert_eq!(
            fields,
            vec![
                ("metadata.labels", "FieldValueInvalid"),
                ("metadata.annotations", "FieldValueInvalid"),
                ("metadata.ownerReferences.uid", "FieldValueInvalid"),
                ("metadata.finalizers[0]", "FieldValueInvalid"),
            ],
            "{flavor:?}"
        );
        assert_eq!(
            got[3].2,
            r#"Invalid value: "hold": name is neither a standard finalizer name nor is it fully qualified"#
        );
        assert_eq!(got[2].2, r#"Invalid value: "": must not be empty"#);
        assert_eq!(storage.keys().await, before, "{flavor:?}: nothing stored");
    }
}

// R-RES-028
#[tokio::test]
async fn annotations_over_256_kib_are_too_long() {
    let (app, storage) = app_in(Flavor::Kubernetes).await;
    let before = storage.keys().await;
    let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT);
    let body = json!({"metadata": {"name": "big", "annotations": {"k": big}}});
    let r = admin_call(&app, "POST", CM_PATH, Some(&body.to_string())).await;
    assert_eq!(
        causes(&r),
        vec![cause(
            "metadata.annotations",
            "FieldValueTooLong",
            "Too long: may not be more than 262144 bytes"
        )]
    );
    assert_eq!(storage.keys().await, before);
}

// R-RES-030, R-RES-235: per-kind rules under the flavor's group domain.
#[tokio::test]
async fn kind_rules_answer_in_both_flavors() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let (app, storage) = app_in(flavor).await;
        let before = storage.keys().await;
        let group = format!("networking.{}", flavor.group_domain());
        let ingress = json!({
            "apiVersion": format!("{group}/v1"), "kind": "Ingress",
            "metadata": {"name": "i"},
            "spec": {"rules": [{"host": "web.example.com", "http": {"paths": [
                {"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                {"path": "/a", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {}}}}
            ]}}]}
        });
        let path = format!("/apis/{group}/v1/namespaces/default/ingresses");
        let r = admin_call(&app, "POST", &path, Some(&ingress.to_string())).await;
        assert_eq!(
            causes(&r),
            vec![
                cause(
                    "spec.rules[0].http.paths[0].pathType",
                    "FieldValueRequired",
                    "Required value: pathType must be specified"
                ),
                cause(
                    "spec.rules[0].http.paths[1].backend",
                    "FieldValueRequired",
                    "Required value: port name or number is required"
                ),
            ],
            "{flavor:?}"
        );
        let pdb = json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "p"},
            "spec": {"minAvailable": "120%", "unhealthyPodEvictionPolicy": "Never"}
        });
        let r = admin_call(
            &app,
            "POST",
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            Some(&pdb.to_string()),
        )
        .await;
        assert_eq!(
            causes(&r),
            vec![
                cause(
                    "spec.minAvailable",
                    "FieldValueInvalid",
                    r#"Invalid value: "120%": must not be greater than 100%"#
                ),
                cause(
                    "spec.unhealthyPodEvictionPolicy",
                    "FieldValueNotSupported",
                    r#"Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget""#
                ),
            ],
            "{flavor:?}"
        );
        assert_eq!(storage.keys().await, before, "{flavor:?}: nothing stored");
    }
}

// R-RES-027, R-RES-060: once an object is being deleted, an update may remove finalizers
// but not add them; the refused update changes nothing.
#[tokio::test]
async fn no_new_finalizers_on_an_object_being_deleted() {
    let (app, _) = app_in(Flavor::Kubernetes).await;
    let body = json!({"metadata": {"name": "held", "finalizers": ["example.com/a"]}});
    let created = admin_call(&app, "POST", CM_PATH, Some(&body.to_string())).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let item = format!("{CM_PATH}/held");
    let deleting = admin_call(&app, "DELETE", &item, None).await.json();
    let mut more = deleting.clone();
    more["metadata"]["finalizers"] = json!(["example.com/a", "example.com/b"]);
    let r = admin_call(&app, "PUT", &item, Some(&more.to_string())).await;
    assert_eq!(
        causes(&r),
        vec![cause(
            "metadata.finalizers",
            "FieldValueForbidden",
            r#"Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b"}"#
        )]
    );
    let now = admin_call(&app, "GET", &item, None).await.json();
    assert_eq!(now["metadata"]["finalizers"], json!(["example.com/a"]));
    assert_eq!(
        now["metadata"]["resourceVersion"],
        deleting["metadata"]["resourceVersion"]
    );
}

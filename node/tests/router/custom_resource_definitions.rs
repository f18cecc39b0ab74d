//! CustomResourceDefinitions through the HTTP API: Kubernetes' defaults and stored versions
//! on create, its validation answered as a 422 naming each field with nothing stored, in
//! both flavors, and the rules that compare with the CRD before an update.
//! CHECKLIST: R-VER-126, R-VER-129, R-VER-130.

use serde_json::Value;
use serde_json::json;

use super::*;

/// A CRD of `plural.example.com` whose only version has `schema` (JSON).
fn crd(plural: &str, schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": plural, "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": schema}}]
        }
    })
}

fn path(flavor: Flavor) -> String {
    format!(
        "/apis/apiextensions.{}/v1/customresourcedefinitions",
        flavor.group_domain()
    )
}

/// The body for `flavor`: its group spelled as the flavor spells it.
fn body_in(flavor: Flavor, mut obj: Value) -> String {
    obj["apiVersion"] = format!("apiextensions.{}/v1", flavor.group_domain()).into();
    obj.to_string()
}

#[tokio::test]
async fn a_crd_is_created_with_kubernetes_defaults_in_both_flavors() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let (app, _) = app_in(flavor).await;
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer"}},
                     "x-kubernetes-validations": [{"rule": "self.size < 10"}]}
        }});
        let made = created(
            &app,
            &path(flavor),
            &body_in(flavor, crd("gadgets", schema)),
        )
        .await;
        assert_eq!(made["spec"]["names"]["singular"], "gadget", "{flavor:?}");
        assert_eq!(made["spec"]["names"]["listKind"], "GadgetList");
        assert_eq!(made["spec"]["conversion"], json!({"strategy": "None"}));
        assert_eq!(made["status"]["storedVersions"], json!(["v1"]));
        assert_eq!(made["metadata"]["generation"], 1);
    }
}

#[tokio::test]
async fn an_invalid_crd_is_a_422_naming_each_field_and_nothing_is_stored() {
    let (app, _) = app().await;
    let flavor = Flavor::Kubernetes;
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {}},
                 "x-kubernetes-validations": [{"rule": "self.size <"}]}
    }});
    let mut obj = crd("gadgets", schema);
    obj["spec"].as_object_mut().expect("spec").remove("scope");
    obj["spec"]["preserveUnknownFields"] = json!(true);
    let reply = admin_call(&app, "POST", &path(flavor), Some(&obj.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    let fields: Vec<&str> = status["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .filter_map(|c| c["field"].as_str())
        .collect();
    for field in [
        "spec.scope",
        "spec.validation.openAPIV3Schema.properties[spec].properties[size].type",
        "spec.preserveUnknownFields",
    ] {
        assert!(fields.contains(&field), "{field} not in {fields:?}");
    }
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "CustomResourceDefinition.apiextensions.k8s.io \"gadgets.example.com\" is invalid: "
        ),
        "{message}"
    );
    let got = admin_call(
        &app,
        "GET",
        &format!("{}/gadgets.example.com", path(flavor)),
        None,
    )
    .await;
    assert_eq!(got.status, StatusCode::NOT_FOUND);

    // The same CRD with only its rule broken: the CEL compile error is the answer.
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-validations": [{"rule": "self.size <"}]}
    }});
    let reply = admin_call(
        &app,
        "POST",
        &path(flavor),
        Some(&crd("gadgets", schema).to_string()),
    )
    .await;
    let status = assert_status(&reply, 422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    );
    assert!(
        status["details"]["causes"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("compilation failed")),
        "{status}"
    );
}

#[tokio::test]
async fn updates_keep_group_and_plural_and_add_the_new_storage_version() {
    let (app, _) = app().await;
    let flavor = Flavor::Kubernetes;
    let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let made = created(
        &app,
        &path(flavor),
        &crd("gadgets", schema.clone()).to_string(),
    )
    .await;
    let item = format!("{}/gadgets.example.com", path(flavor));

    let mut changed = made.clone();
    changed["spec"]["group"] = json!("example.org");
    let reply = admin_call(&app, "PUT", &item, Some(&changed.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    assert!(
        status["message"].as_str().is_some_and(
            |m| m.contains("spec.group: Invalid value: \"example.org\": field is immutable")
        ),
        "{status}"
    );

    let mut changed = made.clone();
    changed["spec"]["versions"][0]["storage"] = json!(false);
    changed["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(json!({"name": "v2", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": schema}}));
    let reply = admin_call(&app, "PUT", &item, Some(&changed.to_string())).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let updated = reply.json();
    assert_eq!(updated["status"]["storedVersions"], json!(["v1", "v2"]));
    assert_eq!(updated["metadata"]["generation"], 2);

    // v1 still has objects stored in it (as far as the server knows): it may not go.
    let mut dropped = updated.clone();
    dropped["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .remove(0);
    let reply = admin_call(&app, "PUT", &item, Some(&dropped.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "status.storedVersions[0]"
    );
}

// The v1beta1 shape is gone: its group version is not served, and its fields (`spec.version`,
// `spec.validation`, `spec.subresources`, `spec.additionalPrinterColumns`, a column's
// `JSONPath`, the webhook config at `conversion.webhookClientConfig`) are unknown to v1, so a
// strict create names each of them and stores nothing. CHECKLIST: R-VER-125, R-VER-127,
// R-VER-128, R-VER-131.
#[tokio::test]
async fn the_v1beta1_shape_is_not_served_and_its_fields_are_unknown_to_v1() {
    let (app, _) = app().await;
    let beta = admin_call(&app, "GET", "/apis/apiextensions.k8s.io/v1beta1", None).await;
    assert_eq!(beta.status, StatusCode::NOT_FOUND);
    let beta_list = admin_call(
        &app,
        "GET",
        "/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions",
        None,
    )
    .await;
    assert_eq!(beta_list.status, StatusCode::NOT_FOUND);

    let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let mut obj = crd("gadgets", schema.clone());
    obj["spec"]["version"] = json!("v1");
    obj["spec"]["validation"] = json!({"openAPIV3Schema": schema});
    obj["spec"]["subresources"] = json!({"status": {}});
    obj["spec"]["additionalPrinterColumns"] =
        json!([{"name": "A", "type": "string", "JSONPath": ".a"}]);
    obj["spec"]["versions"][0]["additionalPrinterColumns"] =
        json!([{"name": "A", "type": "string", "JSONPath": ".a", "jsonPath": ".a"}]);
    obj["spec"]["conversion"] =
        json!({"strategy": "None", "webhookClientConfig": {"url": "https://x"}});
    let reply = admin_call(
        &app,
        "POST",
        &format!("{}?fieldValidation=Strict", path(Flavor::Kubernetes)),
        Some(&obj.to_string()),
    )
    .await;
    let status = assert_status(&reply, 400, "BadRequest");
    let message = status["message"].as_str().unwrap_or_default();
    for field in [
        "unknown field \"spec.version\"",
        "unknown field \"spec.validation\"",
        "unknown field \"spec.subresources\"",
        "unknown field \"spec.additionalPrinterColumns\"",
        "unknown field \"spec.versions[0].additionalPrinterColumns[0].JSONPath\"",
        "unknown field \"spec.conversion.webhookClientConfig\"",
    ] {
        assert!(message.contains(field), "{field} not in {message}");
    }
    let got = admin_call(
        &app,
        "GET",
        &format!("{}/gadgets.example.com", path(Flavor::Kubernetes)),
        None,
    )
    .await;
    assert_eq!(got.status, StatusCode::NOT_FOUND);
}

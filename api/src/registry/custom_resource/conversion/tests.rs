//! The checks of a conversion webhook's answer, and the `None` strategy.

use serde_json::json;

use super::*;

fn crd(conversion: Value) -> Value {
    json!({"spec": {"names": {"kind": "Widget"}, "conversion": conversion}})
}

fn webhook_crd(review_versions: Value) -> CustomConversion {
    CustomConversion::of(
        &crd(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "https://127.0.0.1:1/convert"},
            "conversionReviewVersions": review_versions}})),
        None,
    )
}

fn widget(api_version: &str) -> Value {
    json!({"apiVersion": api_version, "kind": "Widget",
           "metadata": {"name": "w", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
                        "labels": {"a": "1"}, "finalizers": ["f"]},
           "spec": {"size": 1}})
}

#[tokio::test]
async fn the_none_strategy_changes_only_the_api_version_of_objects_in_another_version() {
    let none = CustomConversion::of(&crd(json!({"strategy": "None"})), None);
    assert!(!none.calls_out());
    let objects = vec![widget("g/v1"), widget("g/v2")];
    let converted = none.convert(objects, "g/v2").await.expect("converts");
    assert_eq!(converted, vec![widget("g/v2"), widget("g/v2")]);
}

#[test]
fn the_first_review_version_this_server_speaks_is_used() {
    let pick = |versions: Value| webhook_crd(versions).webhook.and_then(|w| w.review_version);
    assert_eq!(pick(json!(["v2", "v1beta1", "v1"])), Some("v1beta1"));
    assert_eq!(pick(json!(["v1"])), Some("v1"));
    assert_eq!(pick(json!(["v9"])), None);
}

#[tokio::test]
async fn a_webhook_without_a_transport_fails_the_conversion_with_kubernetes_text() {
    let conversion = webhook_crd(json!(["v1"]));
    assert!(conversion.calls_out());
    let failed = conversion.convert(vec![widget("g/v1")], "g/v2").await;
    let Err(ApiError::Internal(message)) = failed else {
        panic!("{failed:?}");
    };
    assert_eq!(
        message,
        "conversion webhook for g/v1, Kind=Widget failed: this server calls no webhooks"
    );
    // Objects already in the version asked for are not sent.
    let kept = conversion.convert(vec![widget("g/v2")], "g/v2").await;
    assert_eq!(kept.expect("nothing to convert"), vec![widget("g/v2")]);
}

#[test]
fn an_answer_keeps_only_labels_and_annotations_of_its_metadata() {
    let conversion = webhook_crd(json!(["v1"]));
    let mut answer = widget("g/v2");
    answer["metadata"]["labels"] = json!({"b": "2"});
    answer["metadata"]["annotations"] = json!({"kept": "yes"});
    answer["metadata"]["resourceVersion"] = json!("99");
    answer["metadata"]["finalizers"] = json!([]);
    answer["spec"] = json!({"width": 1});
    let checked = conversion
        .checked(&widget("g/v1"), answer, "g/v2")
        .expect("valid");
    assert_eq!(checked["spec"], json!({"width": 1}));
    assert_eq!(checked["metadata"]["labels"], json!({"b": "2"}));
    assert_eq!(checked["metadata"]["annotations"], json!({"kept": "yes"}));
    assert_eq!(checked["metadata"]["resourceVersion"], "7");
    assert_eq!(checked["metadata"]["finalizers"], json!(["f"]));

    let mut renamed = widget("g/v2");
    renamed["metadata"]["name"] = json!("other");
    let refused = conversion.checked(&widget("g/v1"), renamed, "g/v2");
    assert_eq!(
        refused.expect_err("renamed"),
        "must have the same name: w != other"
    );
    let stale = conversion.checked(&widget("g/v1"), widget("g/v1"), "g/v2");
    assert_eq!(
        stale.expect_err("not converted"),
        "invalid groupVersion (expected g/v2, received g/v1)"
    );
    let mut kind = widget("g/v2");
    kind["kind"] = json!("Gadget");
    let refused = conversion.checked(&widget("g/v1"), kind, "g/v2");
    assert_eq!(
        refused.expect_err("kind"),
        "invalid kind (expected Widget, received Gadget)"
    );
    let mut bad_label = widget("g/v2");
    bad_label["metadata"]["labels"] = json!({"n": 1});
    let refused = conversion.checked(&widget("g/v1"), bad_label, "g/v2");
    assert!(
        refused
            .expect_err("label")
            .contains("metadata.labels[n] must be a string")
    );
}

#[test]
fn a_review_answer_must_be_a_success_to_the_request_sent() {
    let review = "apiextensions.k8s.io/v1";
    let answer = |response: Value| json!({"apiVersion": review, "kind": "ConversionReview", "response": response});
    let ok = answer(json!({"uid": "u", "result": {"status": "Success"},
                           "convertedObjects": [{"a": 1}]}));
    assert_eq!(
        converted_objects(&ok, "v1", review, "u").expect("success"),
        vec![json!({"a": 1})]
    );
    let other_uid = converted_objects(&ok, "v1", review, "x").expect_err("uid");
    assert_eq!(other_uid, r#"expected response.uid="x", got "u""#);
    // v1beta1 reviews are not checked for their uid or type (as Kubernetes).
    assert!(converted_objects(&ok, "v1beta1", review, "x").is_ok());
    let failed = answer(json!({"uid": "u", "result": {"status": "Failure", "message": "no"}}));
    assert_eq!(
        converted_objects(&failed, "v1", review, "u").expect_err("fails"),
        "no"
    );
    let bare = answer(json!({"uid": "u", "result": {"status": "Failure"}}));
    assert_eq!(
        converted_objects(&bare, "v1", review, "u").expect_err("fails"),
        "response.result.status was 'Failure', not 'Success'"
    );
    let empty = json!({"apiVersion": review, "kind": "ConversionReview"});
    assert_eq!(
        converted_objects(&empty, "v1", review, "u").expect_err("empty"),
        "no response provided"
    );
    let wrong = json!({"apiVersion": "v1", "kind": "Status"});
    assert_eq!(
        converted_objects(&wrong, "v1", review, "u").expect_err("type"),
        "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, Kind=Status"
    );
}

//! `matchPolicy: Equivalent` through the API: a ValidatingAdmissionPolicy (or an admission
//! webhook) whose rules name one version of a custom resource also covers writes of its other
//! version, and judges them in the version it named (the objects converted, `request.kind`
//! and `request.resource` naming that version, `request.requestKind` the written one);
//! `matchPolicy: Exact` does not.

use serde_json::Value;
use serde_json::json;

use super::custom_resources::WIDGETS;
use super::custom_resources::serve;
use super::custom_resources::widget;
use super::custom_resources::widgets_where;
use super::validating_admission_policy::BINDINGS;
use super::validating_admission_policy::POLICIES;
use super::validating_admission_policy::binding;
use super::validating_admission_policy::denied;
use super::validating_admission_policy::until_status;
use super::*;

/// A policy over widgets of `stable.example.com/v1beta1` only, with `validations`.
fn beta_policy(name: &str, match_policy: &str, validations: Value) -> String {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"matchPolicy": match_policy, "resourceRules": [{
                "apiGroups": ["stable.example.com"], "apiVersions": ["v1beta1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["widgets"]
            }]},
            "validations": validations,
        }
    })
    .to_string()
}

/// A widget with `apiVersion` `api_version`.
fn widget_in(api_version: &str, name: &str, size: i64) -> String {
    let mut body: Value = serde_json::from_str(&widget(name, size)).expect("json");
    body["apiVersion"] = json!(api_version);
    body.to_string()
}

// R-VER-120: under Equivalent (the v1 default) a policy naming v1beta1 judges a v1 write as
// v1beta1; under Exact it does not judge it.
#[tokio::test]
async fn an_equivalent_policy_judges_other_versions_in_its_own() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    serve(&app, flavor, &widgets_where(flavor, |_, _| {})).await;
    let validations = json!([
        {"expression": "object.apiVersion == 'stable.example.com/v1beta1'",
         "message": "not converted"},
        {"expression": "request.kind.version == 'v1beta1' && request.resource.version == 'v1beta1' && request.requestKind.version == 'v1'",
         "message": "request not renamed"},
        {"expression": "object.spec.size <= 3", "message": "too big"},
    ]);
    let exact = beta_policy("exact", "Exact", json!([{"expression": "false"}]));
    created(&app, POLICIES, &exact).await;
    created(&app, BINDINGS, &binding("exact-b", "exact", json!({}))).await;
    let equivalent = beta_policy("small", "Equivalent", validations);
    created(&app, POLICIES, &equivalent).await;
    created(&app, BINDINGS, &binding("small-b", "small", json!({}))).await;

    let big = widget_in("stable.example.com/v1", "big", 5);
    let reply = until_status(&app, WIDGETS, &big, 422).await;
    let status = assert_status(&reply, 422, "Invalid");
    let message = denied(
        "widgets.stable.example.com",
        "big",
        "small",
        "small-b",
        "too big",
    );
    assert_eq!(status["message"], message);

    // Every other validation held: the object was judged in v1beta1; the Exact policy
    // (which refuses everything it judges) did not judge it.
    created(
        &app,
        WIDGETS,
        &widget_in("stable.example.com/v1", "small", 2),
    )
    .await;
}

/// A webhook `name` over widgets of `stable.example.com/v1beta1` that cannot be called.
fn beta_webhook(name: &str, match_policy: &str) -> Value {
    json!({
        "name": name,
        "clientConfig": {"url": "https://127.0.0.1:1/hook"},
        "rules": [{"operations": ["CREATE"], "apiGroups": ["stable.example.com"],
                   "apiVersions": ["v1beta1"], "resources": ["widgets"]}],
        "matchPolicy": match_policy,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 1,
    })
}

fn configuration(name: &str, webhooks: Value) -> String {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": webhooks,
    })
    .to_string()
}

// R-VER-120: a webhook naming v1beta1 is called for a v1 write under Equivalent (here the
// call fails, under failurePolicy Fail), and not under Exact.
#[tokio::test]
async fn an_equivalent_webhook_is_called_for_other_versions() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    serve(&app, flavor, &widgets_where(flavor, |_, _| {})).await;
    let webhooks = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    // The probe over ConfigMaps tells when the configuration is followed.
    let mut probe = beta_webhook("probe.example.com", "Exact");
    probe["rules"] = json!([{"operations": ["CREATE"], "apiGroups": [""],
                             "apiVersions": ["v1"], "resources": ["configmaps"]}]);
    let exact = json!([beta_webhook("exact.example.com", "Exact"), probe]);
    created(&app, webhooks, &configuration("exact", exact)).await;
    let reply = until_status(&app, CM_PATH, &cm("probe"), 500).await;
    assert_status(&reply, 500, "InternalError");
    created(
        &app,
        WIDGETS,
        &widget_in("stable.example.com/v1", "exact", 1),
    )
    .await;

    let equivalent = json!([beta_webhook("equivalent.example.com", "Equivalent")]);
    created(&app, webhooks, &configuration("equivalent", equivalent)).await;
    let body = widget_in("stable.example.com/v1", "equivalent", 1);
    let reply = until_status(&app, WIDGETS, &body, 500).await;
    let status = assert_status(&reply, 500, "InternalError");
    assert_eq!(
        status["message"],
        "Internal error occurred: failed calling webhook \"equivalent.example.com\": \
         failed to call webhook: this server calls no webhooks"
    );
}

//! ValidatingAdmissionPolicy params and failure policy through the API (issue 22, item 3):
//! a binding's `paramRef` by name or selector, `parameterNotFoundAction`, and what
//! `failurePolicy` makes of expressions that fail and policies that cannot be configured.

use serde_json::json;

use super::validating_admission_policy::BINDINGS;
use super::validating_admission_policy::POLICIES;
use super::validating_admission_policy::binding;
use super::validating_admission_policy::config_map;
use super::validating_admission_policy::denied;
use super::validating_admission_policy::install;
use super::validating_admission_policy::policy;
use super::validating_admission_policy::until_status;
use super::*;

/// A policy reading the maximum of `a` from a ConfigMap param.
fn param_policy(name: &str) -> String {
    policy(
        name,
        json!({
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["deployments"]}]},
            "validations": [{"expression": "object.spec.replicas <= int(params.data.max)",
                "messageExpression": "'at most ' + params.data.max + ' replicas'"}],
        }),
    )
}

fn deployment(name: &str, replicas: i64) -> String {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "w"}},
            "template": {"metadata": {"labels": {"app": "w"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    .to_string()
}

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

// A binding's params by name, in the request's namespace when the paramRef names none; every
// param a selector picks is evaluated; missing params admit under Allow and refuse under
// Deny with Kubernetes' message.
#[tokio::test]
async fn params_by_name_selector_and_not_found_actions() {
    let (app, _) = app().await;
    let limits =
        |name: &str, max: &str| config_map(name, json!({"max": max}), json!({"limit": "yes"}));
    created(&app, CM_PATH, &limits("limit-5", "5")).await;
    created(&app, CM_PATH, &limits("limit-3", "3")).await;
    created(&app, POLICIES, &param_policy("max")).await;
    let by_name = json!({"paramRef": {"name": "limit-5", "parameterNotFoundAction": "Deny"}});
    created(&app, BINDINGS, &binding("by-name", "max", by_name)).await;

    let reply = until_status(&app, DEPLOYMENTS, &deployment("big", 6), 422).await;
    assert_eq!(
        assert_status(&reply, 422, "Invalid")["message"],
        denied(
            "deployments.apps",
            "big",
            "max",
            "by-name",
            "at most 5 replicas"
        )
    );
    created(&app, DEPLOYMENTS, &deployment("ok", 5)).await;

    let selector = json!({"paramRef": {"selector": {"matchLabels": {"limit": "yes"}},
        "namespace": "default", "parameterNotFoundAction": "Allow"}});
    created(&app, BINDINGS, &binding("by-label", "max", selector)).await;
    let reply = until_status(&app, DEPLOYMENTS, &deployment("four", 4), 422).await;
    assert_eq!(
        assert_status(&reply, 422, "Invalid")["message"],
        denied(
            "deployments.apps",
            "four",
            "max",
            "by-label",
            "at most 3 replicas"
        )
    );
    admin_call(&app, "DELETE", &format!("{BINDINGS}/by-label"), None).await;

    let missing = json!({"paramRef": {"name": "absent", "parameterNotFoundAction": "Deny"}});
    admin_call(&app, "DELETE", &format!("{BINDINGS}/by-name"), None).await;
    created(&app, BINDINGS, &binding("missing", "max", missing)).await;
    let reply = until_status(&app, DEPLOYMENTS, &deployment("one", 1), 422).await;
    assert_eq!(
        assert_status(&reply, 422, "Invalid")["message"],
        denied(
            "deployments.apps",
            "one",
            "max",
            "missing",
            "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
        )
    );
    let allowed = json!({"paramRef": {"name": "absent", "parameterNotFoundAction": "Allow"}});
    admin_call(&app, "DELETE", &format!("{BINDINGS}/missing"), None).await;
    created(&app, BINDINGS, &binding("allowed", "max", allowed)).await;
    until_status(&app, DEPLOYMENTS, &deployment("nine", 9), 201).await;
}

// failurePolicy: an expression that fails refuses the write under Fail with Kubernetes'
// message and is skipped under Ignore; a paramKind that names no served kind is a
// configuration error of the policy.
#[tokio::test]
async fn failure_policy_decides_errors() {
    let (app, _) = app().await;
    let failing = json!({"validations": [{"expression": "object.data.missing == 'x'"}]});
    install(
        &app,
        &policy("fails", failing),
        &binding("fails-b", "fails", json!({})),
    )
    .await;
    let reply = until_status(&app, CM_PATH, &cm("x"), 422).await;
    assert_eq!(
        assert_status(&reply, 422, "Invalid")["message"],
        denied(
            "configmaps",
            "x",
            "fails",
            "fails-b",
            "expression 'object.data.missing == 'x'' resulted in error: no such key: missing"
        )
    );
    let update = json!({"metadata": {"name": "fails"}, "spec": {"failurePolicy": "Ignore"}});
    let merge = "application/merge-patch+json";
    let patch = send_as(
        &app,
        "PATCH",
        &format!("{POLICIES}/fails"),
        merge,
        &update.to_string(),
    )
    .await;
    assert_eq!(patch.status, StatusCode::OK, "{}", patch.text());
    until_status(&app, CM_PATH, &cm("y"), 201).await;

    let unknown = json!({"paramKind": {"apiVersion": "example.com/v1", "kind": "Nope"},
        "validations": [{"expression": "true"}]});
    let refs = json!({"paramRef": {"name": "p", "parameterNotFoundAction": "Allow"}});
    install(
        &app,
        &policy("unknown", unknown),
        &binding("unknown-b", "unknown", refs),
    )
    .await;
    let reply = until_status(&app, CM_PATH, &cm("z"), 422).await;
    assert_eq!(
        assert_status(&reply, 422, "Invalid")["message"],
        "configmaps \"z\" is forbidden: ValidatingAdmissionPolicy 'unknown' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Nope'"
    );
}

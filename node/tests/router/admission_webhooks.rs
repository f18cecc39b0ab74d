//! The admission webhook plugins through the router, on a server that calls no webhooks
//! (every call fails): which writes reach a webhook (rules, object selectors, match
//! conditions, the exempt configuration kinds), the failure policies, and dry runs against
//! webhooks' side effects. Calls to real TLS webhooks are proved by the kubectl tests
//! (tests/tests/kubectl/t68_admission_webhooks.rs).

use apiary_api::registry::StoredJson;
use serde_json::Value;
use serde_json::json;

use super::*;

const VALIDATING_KEY: &str =
    "/registry/admissionregistration.k8s.io/validatingwebhookconfigurations/";
const MUTATING_KEY: &str = "/registry/admissionregistration.k8s.io/mutatingwebhookconfigurations/";

/// A webhook over ConfigMap creates of objects labelled `case=<case>`.
fn hook(name: &str, case: &str, extra: Value) -> Value {
    let mut hook = json!({
        "name": name,
        "clientConfig": {"url": "https://127.0.0.1:1/hook"},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["configmaps"], "scope": "*"}],
        "objectSelector": {"matchLabels": {"case": case}},
        "namespaceSelector": {},
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "timeoutSeconds": 1,
        "admissionReviewVersions": ["v1"],
    });
    if let (Some(hook), Some(extra)) = (hook.as_object_mut(), extra.as_object()) {
        hook.extend(extra.clone());
    }
    hook
}

/// Stores configuration `name` under `prefix` as it is (a `sideEffects: Some` webhook can
/// only be stored so: v1 refuses it).
async fn store(storage: &Backend, prefix: &str, kind: &str, name: &str, hooks: Value) {
    let object = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name, "uid": format!("uid-{name}"),
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "webhooks": hooks,
    });
    let bytes = StoredJson::to_stored(&object).expect("encodes");
    storage
        .create(&format!("{prefix}{name}"), bytes)
        .await
        .expect("stored");
}

/// A ConfigMap labelled `case=<case>`.
fn labelled(name: &str, case: &str) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"case": case}}, "data": {"a": "1"}})
    .to_string()
}

/// Creates `body` (a dry run with `dry`) until the answer is not a 201 (the replica follows
/// the configurations asynchronously), at most 5 seconds; the last answer.
async fn create_until_refused(app: &Router, body: &str, dry: bool) -> Reply {
    let path = match dry {
        true => format!("{CM_PATH}?dryRun=All"),
        false => CM_PATH.to_owned(),
    };
    let mut reply = admin_call(app, "POST", &path, Some(body)).await;
    for _ in 0..100 {
        if reply.status != StatusCode::CREATED {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        reply = admin_call(app, "POST", &path, Some(body)).await;
    }
    reply
}

fn failed_calling(name: &str) -> String {
    format!(
        "Internal error occurred: failed calling webhook \"{name}\": failed to call webhook: this server calls no webhooks"
    )
}

// R-RES-194: a dry run that would call a webhook whose sideEffects is Some fails with
// Kubernetes' 400, mutating or validating, before any call; the real write calls it.
// R-RES-195: a webhook with sideEffects None or NoneOnDryRun is called on a dry run.
#[tokio::test]
async fn dry_runs_call_only_webhooks_without_side_effects() {
    let (app, storage) = app().await;
    store(
        &storage,
        VALIDATING_KEY,
        "ValidatingWebhookConfiguration",
        "v",
        json!([
            hook("some.example.com", "some", json!({"sideEffects": "Some"})),
            hook("none.example.com", "none", json!({})),
            hook(
                "dry.example.com",
                "dry",
                json!({"sideEffects": "NoneOnDryRun"})
            ),
        ]),
    )
    .await;
    store(
        &storage,
        MUTATING_KEY,
        "MutatingWebhookConfiguration",
        "m",
        json!([hook(
            "unknown.example.com",
            "unknown",
            json!({"sideEffects": "Unknown"})
        )]),
    )
    .await;
    for (case, name) in [
        ("some", "some.example.com"),
        ("unknown", "unknown.example.com"),
    ] {
        let reply = create_until_refused(&app, &labelled("a", case), true).await;
        let status = assert_status(&reply, 400, "BadRequest");
        assert_eq!(
            status["message"],
            format!("admission webhook \"{name}\" does not support dry run")
        );
        let real = admin_call(&app, "POST", CM_PATH, Some(&labelled("a", case))).await;
        let status = assert_status(&real, 500, "InternalError");
        assert_eq!(status["message"], failed_calling(name));
    }
    for (case, name) in [("none", "none.example.com"), ("dry", "dry.example.com")] {
        let reply = create_until_refused(&app, &labelled("b", case), true).await;
        let status = assert_status(&reply, 500, "InternalError");
        assert_eq!(status["message"], failed_calling(name), "it was called");
    }
}

// failurePolicy Ignore lets a write pass a failed call, Fail refuses it; objects the selector
// or a false match condition leaves out reach no webhook; the webhook configurations
// themselves are never sent to webhooks.
#[tokio::test]
async fn failure_policies_selectors_and_match_conditions_decide_the_write() {
    let (app, storage) = app().await;
    let catch_all = json!({"objectSelector": {"matchExpressions": [
            {"key": "case", "operator": "DoesNotExist"}]},
        "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"],
                   "resources": ["*"]}]});
    store(
        &storage,
        VALIDATING_KEY,
        "ValidatingWebhookConfiguration",
        "v",
        json!([
            hook("fail.example.com", "fail", json!({})),
            hook(
                "ignore.example.com",
                "ignore",
                json!({"failurePolicy": "Ignore"})
            ),
            hook(
                "cond.example.com",
                "cond",
                json!({"matchConditions": [
                {"name": "not-skipped", "expression": "object.metadata.name != 'skipped'"},
                {"name": "creates", "expression": "request.operation == 'CREATE'"}]})
            ),
            hook(
                "broken.example.com",
                "broken",
                json!({"matchConditions": [
                {"name": "missing", "expression": "object.spec.nothing == 1"}]})
            ),
            hook("everything.example.com", "x", catch_all),
        ]),
    )
    .await;
    let reply = create_until_refused(&app, &labelled("f", "fail"), false).await;
    let status = assert_status(&reply, 500, "InternalError");
    assert_eq!(status["message"], failed_calling("fail.example.com"));
    created(&app, CM_PATH, &labelled("i", "ignore")).await;
    created(&app, CM_PATH, &labelled("skipped", "cond")).await;
    let reply = admin_call(&app, "POST", CM_PATH, Some(&labelled("c", "cond"))).await;
    let status = assert_status(&reply, 500, "InternalError");
    assert_eq!(status["message"], failed_calling("cond.example.com"));
    let reply = admin_call(&app, "POST", CM_PATH, Some(&labelled("b", "broken"))).await;
    let status = assert_status(&reply, 500, "InternalError");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "Internal error occurred: failed calling webhook \"broken.example.com\": failed to evaluate match conditions"
        ),
        "{message}"
    );
    let exempt = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "other"}});
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    created(&app, path, &exempt.to_string()).await;
}

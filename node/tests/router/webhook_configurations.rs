//! Mutating and validating webhook configurations (`admissionregistration/v1`) through the
//! router: the v1 defaults of the removal table and Kubernetes' validation of webhooks, with
//! its field paths and messages.

use serde_json::Value;
use serde_json::json;

use super::*;

const MUTATING: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
const VALIDATING: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

/// A configuration named `name` holding `webhooks`.
fn configuration(kind: &str, name: &str, webhooks: Value) -> String {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": webhooks,
    })
    .to_string()
}

/// A webhook with only what v1 requires.
fn minimal(name: &str) -> Value {
    json!({
        "name": name,
        "clientConfig": {"service": {"namespace": "ns", "name": "hook"}},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["configmaps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

/// `(field, message)` of every cause of a 422.
fn causes(reply: &Reply) -> Vec<(String, String)> {
    let s = assert_status(reply, 422, "Invalid");
    (s["details"]["causes"].as_array().into_iter().flatten())
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (text("field"), text("message"))
        })
        .collect()
}

fn has(causes: &[(String, String)], field: &str, message: &str) -> bool {
    causes.iter().any(|(f, m)| f == field && m == message)
}

// R-VER-119, R-VER-120, R-VER-121: the v1 defaults, in both kinds; a mutating webhook's
// reinvocation policy defaults to Never, a rule's scope to `*`, a service port to 443.
#[tokio::test]
async fn v1_defaults_fill_every_unset_field() {
    let (app, _) = app().await;
    let hook = minimal("a.example.com");
    let mutating = created(
        &app,
        MUTATING,
        &configuration("MutatingWebhookConfiguration", "m", json!([hook])),
    )
    .await;
    let validating = created(
        &app,
        VALIDATING,
        &configuration("ValidatingWebhookConfiguration", "v", json!([hook])),
    )
    .await;
    for stored in [&mutating, &validating] {
        let hook = &stored["webhooks"][0];
        assert_eq!(hook["failurePolicy"], "Fail", "{hook}");
        assert_eq!(hook["matchPolicy"], "Equivalent");
        assert_eq!(hook["timeoutSeconds"], 10);
        assert_eq!(hook["namespaceSelector"], json!({}));
        assert_eq!(hook["objectSelector"], json!({}));
        assert_eq!(hook["rules"][0]["scope"], "*");
        assert_eq!(hook["clientConfig"]["service"]["port"], 443);
    }
    assert_eq!(mutating["webhooks"][0]["reinvocationPolicy"], "Never");
    assert!(
        validating["webhooks"][0]
            .get("reinvocationPolicy")
            .is_none()
    );
    let mut set = minimal("b.example.com");
    set["failurePolicy"] = json!("Ignore");
    set["timeoutSeconds"] = json!(3);
    set["matchPolicy"] = json!("Exact");
    let kept = created(
        &app,
        VALIDATING,
        &configuration("ValidatingWebhookConfiguration", "kept", json!([set])),
    )
    .await;
    assert_eq!(kept["webhooks"][0]["failurePolicy"], "Ignore");
    assert_eq!(kept["webhooks"][0]["timeoutSeconds"], 3);
    assert_eq!(kept["webhooks"][0]["matchPolicy"], "Exact");
}

// R-VER-122, R-VER-123: sideEffects and admissionReviewVersions are required, with
// Kubernetes' messages; only None and NoneOnDryRun are side-effect classes of v1.
#[tokio::test]
async fn side_effects_and_review_versions_are_required() {
    let (app, _) = app().await;
    let mut bare = minimal("a.example.com");
    let hook = bare.as_object_mut().expect("object");
    hook.remove("sideEffects");
    hook.remove("admissionReviewVersions");
    let mut unknown = minimal("b.example.com");
    unknown["sideEffects"] = json!("Some");
    unknown["admissionReviewVersions"] = json!(["v2", "v2"]);
    for path in [MUTATING, VALIDATING] {
        let kind = if path == MUTATING {
            "MutatingWebhookConfiguration"
        } else {
            "ValidatingWebhookConfiguration"
        };
        let body = configuration(kind, "c", json!([bare, unknown]));
        let reply = admin_call(&app, "POST", path, Some(&body)).await;
        let found = causes(&reply);
        let expect = [
            (
                "webhooks[0].sideEffects",
                "Required value: must specify one of None, NoneOnDryRun",
            ),
            (
                "webhooks[0].admissionReviewVersions",
                "Required value: must specify one of v1, v1beta1",
            ),
            (
                "webhooks[1].sideEffects",
                "Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
            ),
            (
                "webhooks[1].admissionReviewVersions[1]",
                "Invalid value: \"v2\": duplicate version",
            ),
            (
                "webhooks[1].admissionReviewVersions",
                "Invalid value: [\"v2\",\"v2\"]: must include at least one of v1, v1beta1",
            ),
        ];
        for (field, message) in expect {
            assert!(
                has(&found, field, message),
                "{field}: {message} in {found:?}"
            );
        }
    }
}

// R-VER-124: webhook names are unique within a configuration, and fully qualified.
#[tokio::test]
async fn webhook_names_are_unique_and_fully_qualified() {
    let (app, _) = app().await;
    let body = configuration(
        "ValidatingWebhookConfiguration",
        "dup",
        json!([
            minimal("a.example.com"),
            minimal("a.example.com"),
            minimal("short.name")
        ]),
    );
    let found = causes(&admin_call(&app, "POST", VALIDATING, Some(&body)).await);
    assert!(
        has(
            &found,
            "webhooks[1].name",
            "Duplicate value: \"a.example.com\""
        ),
        "{found:?}"
    );
    assert!(
        has(
            &found,
            "webhooks[2].name",
            "Invalid value: \"short.name\": should be a domain with at least three segments separated by dots"
        ),
        "{found:?}"
    );
}

// The rules, the client config, the timeout and the policies are validated with
// kube-apiserver's field paths and messages.
#[tokio::test]
async fn rules_client_config_and_policies_are_validated() {
    let (app, _) = app().await;
    let mut hook = minimal("a.example.com");
    hook["rules"] = json!([
        {"operations": ["*", "CREATE"], "apiGroups": [], "apiVersions": ["v1"],
         "resources": ["*/*", "pods"], "scope": "Everywhere"},
        {"operations": ["PATCH"], "apiGroups": ["*"], "apiVersions": ["*"],
         "resources": ["pods/*", "pods/status"]},
    ]);
    hook["clientConfig"] = json!({"url": "http://hook.example.com/x?q=1",
        "service": {"namespace": "ns", "name": "hook"}});
    hook["timeoutSeconds"] = json!(31);
    hook["failurePolicy"] = json!("Sometimes");
    hook["matchPolicy"] = json!("Close");
    hook["reinvocationPolicy"] = json!("Always");
    hook["matchConditions"] = json!([{"name": "bad", "expression": "object.("}]);
    let body = configuration("MutatingWebhookConfiguration", "rules", json!([hook]));
    let found = causes(&admin_call(&app, "POST", MUTATING, Some(&body)).await);
    let expect = [
        (
            "webhooks[0].rules[0].operations",
            "Invalid value: [\"*\",\"CREATE\"]: if '*' is present, must not specify other operations",
        ),
        ("webhooks[0].rules[0].apiGroups", "Required value"),
        (
            "webhooks[0].rules[0].resources",
            "Invalid value: [\"*/*\",\"pods\"]: if '*/*' is present, must not specify other resources",
        ),
        (
            "webhooks[0].rules[0].scope",
            "Unsupported value: \"Everywhere\": supported values: \"*\", \"Cluster\", \"Namespaced\"",
        ),
        (
            "webhooks[0].rules[1].operations[0]",
            "Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
        ),
        (
            "webhooks[0].rules[1].resources[1]",
            "Invalid value: \"pods/status\": if 'pods/*' is present, must not specify pods/status",
        ),
        (
            "webhooks[0].clientConfig",
            "Required value: exactly one of url or service is required",
        ),
        (
            "webhooks[0].timeoutSeconds",
            "Invalid value: 31: the timeout value must be between 1 and 30 seconds",
        ),
        (
            "webhooks[0].failurePolicy",
            "Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\"",
        ),
        (
            "webhooks[0].matchPolicy",
            "Unsupported value: \"Close\": supported values: \"Equivalent\", \"Exact\"",
        ),
        (
            "webhooks[0].reinvocationPolicy",
            "Unsupported value: \"Always\": supported values: \"IfNeeded\", \"Never\"",
        ),
    ];
    for (field, message) in expect {
        assert!(
            has(&found, field, message),
            "{field}: {message} in {found:?}"
        );
    }
    assert!(
        found
            .iter()
            .any(|(f, _)| f == "webhooks[0].matchConditions[0].expression"),
        "{found:?}"
    );
    let mut url = minimal("b.example.com");
    url["clientConfig"] = json!({"url": "http://hook.example.com/x"});
    let body = configuration("ValidatingWebhookConfiguration", "url", json!([url]));
    let found = causes(&admin_call(&app, "POST", VALIDATING, Some(&body)).await);
    assert!(
        has(
            &found,
            "webhooks[0].clientConfig.url",
            "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"
        ),
        "{found:?}"
    );
}

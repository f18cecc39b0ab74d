//! ValidatingAdmissionPolicy through the API (issue 22, item 3): policies and bindings stored
//! through the API judge later writes with their variables (`object`, `oldObject`,
//! `request`, `params`, `namespaceObject`, `authorizer`, `variables`), their params, match
//! conditions, selectors and failure policy, and act by the binding's actions: a refusal, a
//! `Warning` header, audit annotations. The policies' own validation refuses what does not
//! compile.

use std::sync::Mutex;
use std::time::Duration;

use apiary_api::audit::AuditConfig;
use apiary_api::audit::Backend as AuditBackend;
use apiary_api::audit::Event;
use apiary_api::audit::Policy as AuditPolicy;
use serde_json::Value;
use serde_json::json;

use super::*;

pub(super) const POLICIES: &str =
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
pub(super) const BINDINGS: &str =
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";

/// A policy `name` over ConfigMaps with `spec` merged over the defaults.
pub(super) fn policy(name: &str, spec: Value) -> String {
    let mut body = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE", "DELETE"], "resources": ["configmaps"]
            }]},
        }
    });
    if let (Some(base), Value::Object(extra)) = (body["spec"].as_object_mut(), spec) {
        base.extend(extra);
    }
    body.to_string()
}

/// A binding `name` of `policy` with `spec` merged over `validationActions: [Deny]`.
pub(super) fn binding(name: &str, policy: &str, spec: Value) -> String {
    let mut body = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": policy, "validationActions": ["Deny"]}
    });
    if let (Some(base), Value::Object(extra)) = (body["spec"].as_object_mut(), spec) {
        base.extend(extra);
    }
    body.to_string()
}

/// A ConfigMap `name` with `data` and `labels`.
pub(super) fn config_map(name: &str, data: Value, labels: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels}, "data": data})
    .to_string()
}

/// Stores `policy` and its `binding`.
pub(super) async fn install(app: &Router, policy: &str, binding: &str) {
    created(app, POLICIES, policy).await;
    created(app, BINDINGS, binding).await;
}

/// POSTs `body` to `path` until the answer has status `code` (the policy cache follows the
/// store a moment behind); the last reply.
pub(super) async fn until_status(app: &Router, path: &str, body: &str, code: u16) -> Reply {
    let mut reply = admin_call(app, "POST", path, Some(body)).await;
    for _ in 0..200 {
        if reply.status.as_u16() == code {
            break;
        }
        if reply.status == StatusCode::CREATED {
            let name = reply.json()["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            admin_call(app, "DELETE", &format!("{path}/{name}"), None).await;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        reply = admin_call(app, "POST", path, Some(body)).await;
    }
    reply
}

/// The message of a refusal by `policy` with `binding`.
pub(super) fn denied(
    resource: &str,
    name: &str,
    policy: &str,
    binding: &str,
    message: &str,
) -> String {
    format!(
        "{resource} \"{name}\" is forbidden: ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {message}"
    )
}

// A failed validation under a Deny binding refuses the write with Kubernetes' message, the
// validation's reason and its code (Invalid 422 by default, Forbidden 403), the message
// repeated as the cause; a passing write is stored.
#[tokio::test]
async fn deny_refuses_with_the_message_reason_and_code() {
    let (app, _) = app().await;
    let spec = json!({"validations": [
        {"expression": "object.data.a == '1'", "message": "a must be 1"},
        {"expression": "!has(object.data.b)", "reason": "Forbidden"},
    ]});
    install(
        &app,
        &policy("only-one", spec),
        &binding("only-one-b", "only-one", json!({})),
    )
    .await;

    let bad = config_map("bad", json!({"a": "2"}), json!({}));
    let reply = until_status(&app, CM_PATH, &bad, 422).await;
    let status = assert_status(&reply, 422, "Invalid");
    let message = denied("configmaps", "bad", "only-one", "only-one-b", "a must be 1");
    assert_eq!(status["message"], message);
    assert_eq!(
        status["details"]["causes"],
        json!([{"message": message.split_once("forbidden: ").map(|(_, m)| m).unwrap_or_default()}])
    );
    assert_eq!(status["details"]["kind"], "configmaps");

    let forbidden = config_map("b", json!({"a": "1", "b": "x"}), json!({}));
    let reply = admin_call(&app, "POST", CM_PATH, Some(&forbidden)).await;
    let status = assert_status(&reply, 403, "Forbidden");
    assert_eq!(
        status["message"],
        denied(
            "configmaps",
            "b",
            "only-one",
            "only-one-b",
            "failed expression: !has(object.data.b)"
        )
    );
    created(
        &app,
        CM_PATH,
        &config_map("good", json!({"a": "1"}), json!({})),
    )
    .await;
}

// messageExpression gives the message; one that fails or gives no string falls back to
// `message`.
#[tokio::test]
async fn message_expressions_give_the_message() {
    let (app, _) = app().await;
    let spec = json!({"validations": [
        {"expression": "object.data.a == '1'", "messageExpression": "'a is ' + object.data.a"},
        {"expression": "object.data.a == '1'", "message": "fallback",
         "messageExpression": "object.data.missing"},
    ]});
    install(
        &app,
        &policy("msg", spec),
        &binding("msg-b", "msg", json!({})),
    )
    .await;
    let bad = config_map("x", json!({"a": "7"}), json!({}));
    let reply = until_status(&app, CM_PATH, &bad, 422).await;
    assert_eq!(
        assert_status(&reply, 422, "Invalid")["message"],
        denied("configmaps", "x", "msg", "msg-b", "a is 7")
    );
}

// Warn adds Kubernetes' `Warning` header and lets the write through.
#[tokio::test]
async fn warn_adds_a_warning_and_admits() {
    let (app, _) = app().await;
    let spec = json!({"validations": [{"expression": "object.data.a == '1'", "message": "a should be 1"}]});
    install(
        &app,
        &policy("w", spec),
        &binding("w-b", "w", json!({"validationActions": ["Warn"]})),
    )
    .await;
    let body = config_map("x", json!({"a": "2"}), json!({}));
    let mut reply = admin_call(&app, "POST", CM_PATH, Some(&body)).await;
    for i in 0..200 {
        if !warnings(&reply).is_empty() {
            break;
        }
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        let name = format!("x{i}");
        tokio::time::sleep(Duration::from_millis(10)).await;
        let body = config_map(&name, json!({"a": "2"}), json!({}));
        reply = admin_call(&app, "POST", CM_PATH, Some(&body)).await;
    }
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert_eq!(
        warnings(&reply),
        [
            "299 - \"Validation failed for ValidatingAdmissionPolicy 'w' with binding 'w-b': a should be 1\""
        ]
    );
}

/// Keeps every audit event as JSON.
#[derive(Default)]
struct Captured(Mutex<Vec<Value>>);

#[async_trait::async_trait]
impl AuditBackend for Captured {
    async fn process(&self, event: &Event) -> bool {
        let json = serde_json::to_value(event).expect("event serializes");
        self.0.lock().expect("lock").push(json);
        true
    }
}

// Audit records the failure as `validation.policy.admission.k8s.io/validation_failure`
// (Kubernetes' JSON) and admits; `auditAnnotations` are published as `<policy>/<key>`.
#[tokio::test]
async fn audit_annotations_reach_the_audit_log() {
    let captured = Arc::new(Captured::default());
    let text = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n";
    let audit = AuditConfig {
        policy: Some(Arc::new(
            AuditPolicy::parse(text, Flavor::Kubernetes).expect("policy"),
        )),
        backends: vec![captured.clone()],
    };
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config.audit = audit;
    let app = apiary_api::router(storage, config);
    let spec = json!({
        "validations": [{"expression": "object.data.a == '1'", "message": "a should be 1"}],
        "auditAnnotations": [{"key": "seen", "valueExpression": "'a=' + object.data.a"}],
    });
    let actions = json!({"validationActions": ["Audit", "Warn"]});
    install(
        &app,
        &policy("aud", spec),
        &binding("aud-b", "aud", actions),
    )
    .await;
    let mut found = None;
    for i in 0..200 {
        let body = config_map(&format!("x{i}"), json!({"a": "2"}), json!({}));
        let reply = admin_call(&app, "POST", CM_PATH, Some(&body)).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        tokio::time::sleep(Duration::from_millis(10)).await;
        let events = std::mem::take(&mut *captured.0.lock().expect("lock"));
        found = events.into_iter().find(|e| {
            e["verb"] == "create"
                && e["stage"] == "ResponseComplete"
                && e["annotations"]["aud/seen"].is_string()
        });
        if found.is_some() {
            break;
        }
    }
    let event = found.expect("an event with the policy's annotations");
    assert_eq!(event["annotations"]["aud/seen"], "a=2");
    let failure = event["annotations"]["validation.policy.admission.k8s.io/validation_failure"]
        .as_str()
        .expect("the failure annotation");
    assert_eq!(
        serde_json::from_str::<Value>(failure).expect("JSON"),
        json!([{"message": "a should be 1", "policy": "aud", "binding": "aud-b",
            "expressionIndex": 0, "validationActions": ["Audit", "Warn"]}])
    );
}

// R-VER-004: `request` (operation, user, namespace), `object`, `oldObject`, `namespaceObject`
// and `variables` (each evaluated once, reading earlier ones) are what the write is.
#[tokio::test]
async fn expressions_see_the_request_objects_namespace_and_variables() {
    let (app, _) = app().await;
    let ns = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "team", "labels": {"tier": "gold"}}});
    created(&app, "/api/v1/namespaces", &ns.to_string()).await;
    let spec = json!({
        "variables": [
            {"name": "a", "expression": "object == null ? '' : object.data.a"},
            {"name": "tagged", "expression": "'<' + variables.a + '>'"},
        ],
        "validations": [
            {"expression": "request.operation != 'CREATE' || variables.tagged == '<1>'",
             "messageExpression": "'create: ' + variables.tagged"},
            {"expression": "request.userInfo.username == 'admin' && request.namespace == 'team'"},
            {"expression": "namespaceObject.metadata.labels.tier == 'gold'"},
            {"expression": "request.operation != 'UPDATE' || oldObject.data.a != object.data.a",
             "message": "update must change a"},
            {"expression": "request.operation != 'DELETE' || (object == null && oldObject.data.a == '1')",
             "message": "delete sees the old object"},
        ],
    });
    install(
        &app,
        &policy("vars", spec),
        &binding("vars-b", "vars", json!({})),
    )
    .await;
    let path = "/api/v1/namespaces/team/configmaps";
    let reply = until_status(
        &app,
        path,
        &config_map("x", json!({"a": "2"}), json!({})),
        422,
    )
    .await;
    assert_eq!(
        assert_status(&reply, 422, "Invalid")["message"],
        denied("configmaps", "x", "vars", "vars-b", "create: <2>")
    );
    created(&app, path, &config_map("ok", json!({"a": "1"}), json!({}))).await;
    let same = config_map("ok", json!({"a": "1"}), json!({}));
    let update = admin_call(&app, "PUT", &format!("{path}/ok"), Some(&same)).await;
    assert_eq!(
        assert_status(&update, 422, "Invalid")["message"],
        denied("configmaps", "ok", "vars", "vars-b", "update must change a")
    );
    let delete = admin_call(&app, "DELETE", &format!("{path}/ok"), None).await;
    assert_eq!(delete.status, StatusCode::OK, "{}", delete.text());
}

// R-VER-029, R-VER-031: the `authorizer` variable asks the chain about the requester and about
// others; `authorizer.requestResource` is the write's resource.
#[tokio::test]
async fn the_authorizer_checks_the_requester() {
    let (app, _) = app().await;
    let spec = json!({"validations": [
        {"expression": "authorizer.requestResource.check('create').allowed()"},
        {"expression": "authorizer.serviceAccount('default', 'nobody').group('').resource('configmaps').check('create').allowed()",
         "message": "nobody may not"},
    ]});
    install(
        &app,
        &policy("authz", spec),
        &binding("authz-b", "authz", json!({})),
    )
    .await;
    let reply = until_status(&app, CM_PATH, &cm("x"), 422).await;
    assert_eq!(
        assert_status(&reply, 422, "Invalid")["message"],
        denied("configmaps", "x", "authz", "authz-b", "nobody may not")
    );
}

// matchConditions: a false condition skips the policy; an error when none is false applies
// the failure policy.
#[tokio::test]
async fn match_conditions_select_the_writes_judged() {
    let (app, _) = app().await;
    let spec = json!({
        "matchConditions": [{"name": "only-strict", "expression": "object.metadata.name.startsWith('strict')"}],
        "validations": [{"expression": "false", "message": "strict"}],
    });
    install(
        &app,
        &policy("cond", spec),
        &binding("cond-b", "cond", json!({})),
    )
    .await;
    until_status(&app, CM_PATH, &cm("strict-1"), 422).await;
    created(&app, CM_PATH, &cm("relaxed")).await;
    let erring = json!({
        "matchConditions": [{"name": "boom", "expression": "object.data.nope == 'x'"}],
        "validations": [{"expression": "true"}],
    });
    install(
        &app,
        &policy("cond-err", erring),
        &binding("cond-err-b", "cond-err", json!({})),
    )
    .await;
    let reply = until_status(&app, CM_PATH, &cm("other"), 422).await;
    assert_eq!(
        assert_status(&reply, 422, "Invalid")["message"],
        denied(
            "configmaps",
            "other",
            "cond-err",
            "cond-err-b",
            "expression 'object.data.nope == 'x'' resulted in error: no such key: nope"
        )
    );
}

// excludeResourceRules, the binding's namespaceSelector and objectSelector narrow what is
// judged.
#[tokio::test]
async fn exclusions_and_selectors_narrow_the_writes() {
    let (app, _) = app().await;
    let ns = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "guarded", "labels": {"guard": "on"}}});
    created(&app, "/api/v1/namespaces", &ns.to_string()).await;
    let spec = json!({
        "matchConstraints": {
            "resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["CREATE"], "resources": ["*"]}],
            "excludeResourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["secrets"]}],
        },
        "validations": [{"expression": "false", "message": "guarded"}],
    });
    let selectors = json!({"matchResources": {
        "namespaceSelector": {"matchLabels": {"guard": "on"}},
        "objectSelector": {"matchExpressions": [{"key": "free", "operator": "DoesNotExist"}]},
    }});
    install(
        &app,
        &policy("guard", spec),
        &binding("guard-b", "guard", selectors),
    )
    .await;
    let guarded = "/api/v1/namespaces/guarded/configmaps";
    until_status(&app, guarded, &cm("x"), 422).await;
    created(&app, CM_PATH, &cm("elsewhere")).await;
    created(
        &app,
        guarded,
        &config_map("free", json!({}), json!({"free": "yes"})),
    )
    .await;
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}});
    created(
        &app,
        "/api/v1/namespaces/guarded/secrets",
        &secret.to_string(),
    )
    .await;
}

// R-RES-192: a dry run is judged like the write it stands for, and stores nothing.
#[tokio::test]
async fn dry_runs_are_judged() {
    let (app, storage) = app().await;
    let spec = json!({"validations": [{"expression": "false", "message": "never"}]});
    install(
        &app,
        &policy("never", spec),
        &binding("never-b", "never", json!({})),
    )
    .await;
    until_status(&app, CM_PATH, &cm("probe"), 422).await;
    let before = snapshot(&storage).await;
    let dry = admin_call(
        &app,
        "POST",
        &format!("{CM_PATH}?dryRun=All"),
        Some(&cm("x")),
    )
    .await;
    assert_eq!(
        assert_status(&dry, 422, "Invalid")["message"],
        denied("configmaps", "x", "never", "never-b", "never")
    );
    assert_eq!(snapshot(&storage).await, before);
}

// The policy's and binding's own validation: expressions that do not compile, a missing
// match constraint, bad actions and param references are 422 with Kubernetes' field paths;
// the v1 defaults are set.
#[tokio::test]
async fn policies_and_bindings_are_validated_on_write() {
    let (app, _) = app().await;
    let bad = policy(
        "bad",
        json!({"validations": [{"expression": "object."}, {"expression": "params.x"}],
        "failurePolicy": "Sometimes"}),
    );
    let reply = admin_call(&app, "POST", POLICIES, Some(&bad)).await;
    let status = assert_status(&reply, 422, "Invalid");
    let message = status["message"].as_str().expect("message");
    assert!(
        message.starts_with(
            "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"bad\" is invalid: "
        ),
        "{message}"
    );
    assert!(message.contains("spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\""), "{message}");
    assert!(
        message.contains(
            "spec.validations[0].expression: Invalid value: \"object.\": compilation failed: "
        ),
        "{message}"
    );
    assert!(message.contains("spec.validations[1].expression: Invalid value: \"params.x\": compilation failed: undeclared reference to 'params'"), "{message}");

    let empty = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "empty"}, "spec": {}});
    let reply = admin_call(&app, "POST", POLICIES, Some(&empty.to_string())).await;
    let message = assert_status(&reply, 422, "Invalid")["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("spec.matchConstraints: Required value"),
        "{message}"
    );
    assert!(message.contains("spec.validations: Required value: validations or auditAnnotations must contain at least one item"), "{message}");

    let both = binding(
        "both",
        "p",
        json!({"validationActions": ["Deny", "Warn", "Deny"],
        "paramRef": {"name": "a", "selector": {}}}),
    );
    let reply = admin_call(&app, "POST", BINDINGS, Some(&both)).await;
    let message = assert_status(&reply, 422, "Invalid")["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    for part in [
        "spec.validationActions[2]: Duplicate value: \"Deny\"",
        "must not contain both Deny and Warn",
        "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
        "spec.paramRef.parameterNotFoundAction: Required value",
    ] {
        assert!(message.contains(part), "{part} in {message}");
    }

    let good = created(
        &app,
        POLICIES,
        &policy("good", json!({"validations": [{"expression": "true"}]})),
    )
    .await;
    assert_eq!(good["spec"]["failurePolicy"], "Fail");
    assert_eq!(
        good["spec"]["matchConstraints"]["matchPolicy"],
        "Equivalent"
    );
    assert_eq!(good["status"], Value::Null);
}

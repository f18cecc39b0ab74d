//! MutatingAdmissionPolicy through the API (issue 22, item 3): policies and bindings stored
//! through the API change later writes with ApplyConfiguration (server-side apply's merge,
//! list map keys honoured) and JSONPatch mutations, with params, match conditions,
//! reinvocation and failure policy; a mutated object gets its kind's defaults again; a policy
//! naming another version of the resource mutates in that version (`matchPolicy:
//! Equivalent`); a dry run answers the mutated object and stores nothing; the policies' own
//! validation refuses what Kubernetes refuses.

use std::time::Duration;

use serde_json::Value;
use serde_json::json;

use super::*;

const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

/// A policy `name` over ConfigMap creates with `mutations` and `spec` merged over the
/// defaults (`reinvocationPolicy: Never`).
fn policy(name: &str, mutations: Value, spec: Value) -> String {
    let mut body = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["configmaps"]
            }]},
            "mutations": mutations,
            "reinvocationPolicy": "Never",
        }
    });
    if let (Some(base), Value::Object(extra)) = (body["spec"].as_object_mut(), spec) {
        base.extend(extra);
    }
    body.to_string()
}

/// One ApplyConfiguration mutation of `expression`.
fn apply(expression: &str) -> Value {
    json!([{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}])
}

/// A binding `name` of `policy` with `spec` merged in.
fn binding(name: &str, policy: &str, spec: Value) -> String {
    let mut body = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": policy}
    });
    if let (Some(base), Value::Object(extra)) = (body["spec"].as_object_mut(), spec) {
        base.extend(extra);
    }
    body.to_string()
}

/// Stores `policy` and a binding `<name>-b` of it.
async fn install(app: &Router, name: &str, policy: &str) {
    created(app, POLICIES, policy).await;
    created(
        app,
        BINDINGS,
        &binding(&format!("{name}-b"), name, json!({})),
    )
    .await;
}

/// A ConfigMap `name` with `data` and the label `app: x`.
fn config_map(name: &str, data: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "x"}}, "data": data})
    .to_string()
}

/// Creates ConfigMaps `<prefix>-<i>` (through `path`, with `data`) until the answer
/// satisfies `done` (the policy cache follows the store a moment behind); the last answer.
async fn until(
    app: &Router,
    path: &str,
    prefix: &str,
    data: Value,
    done: impl Fn(&Reply) -> bool,
) -> Reply {
    let mut reply = None;
    for i in 0..200 {
        let name = format!("{prefix}-{i}");
        let answer = admin_call(app, "POST", path, Some(&config_map(&name, data.clone()))).await;
        if done(&answer) {
            return answer;
        }
        reply = Some(answer);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    reply.expect("at least one answer")
}

fn label<'a>(object: &'a Value, key: &str) -> &'a Value {
    &object["metadata"]["labels"][key]
}

// An ApplyConfiguration merges its `Object{...}` into the object: a label is added beside
// the ones written, and the stored object has it. (R-ACC-003: admission runs on the
// authorized write.)
#[tokio::test]
async fn apply_configuration_adds_a_label() {
    let (app, _) = app().await;
    let expression = "Object{metadata: Object.metadata{labels: {'team': 'blue'}}}";
    install(
        &app,
        "label",
        &policy("label", apply(expression), json!({})),
    )
    .await;
    let reply = until(&app, CM_PATH, "cm", json!({}), |r| {
        r.status == StatusCode::CREATED && label(&r.json(), "team") == "blue"
    })
    .await;
    let object = reply.json();
    assert_eq!(label(&object, "team"), "blue", "{object}");
    assert_eq!(label(&object, "app"), "x");
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let stored = fetched(&app, &format!("{CM_PATH}/{name}")).await;
    assert_eq!(label(&stored, "team"), "blue");
}

fn deployment(name: &str) -> String {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "w"}},
            "template": {"metadata": {"labels": {"app": "w"}},
                "spec": {"containers": [
                    {"name": "a", "image": "nginx", "args": ["x"]},
                    {"name": "b", "image": "busybox"}]}}}})
    .to_string()
}

/// A policy over Deployment creates with `expression` as its ApplyConfiguration.
fn deployment_policy(name: &str, expression: &str) -> String {
    policy(
        name,
        apply(expression),
        json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"],
            "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]}}),
    )
}

// The merge honours list map keys: a container named in the configuration is merged into the
// container of that name, the others kept in place; an atomic list in the configuration is
// refused with Kubernetes' message.
#[tokio::test]
async fn apply_configuration_merges_list_items_by_key_and_refuses_atomic_lists() {
    let (app, _) = app().await;
    let containers = "Object{spec: Object.spec{template: Object.spec.template{spec: \
        Object.spec.template.spec{containers: [Object.spec.template.spec.containers{\
        name: 'b', image: 'patched'}]}}}}";
    install(&app, "image", &deployment_policy("image", containers)).await;
    let mut object = Value::Null;
    for i in 0..200 {
        let reply = admin_call(
            &app,
            "POST",
            DEPLOYMENTS,
            Some(&deployment(&format!("d{i}"))),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        object = reply.json();
        if object["spec"]["template"]["spec"]["containers"][1]["image"] == "patched" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let containers = &object["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["name"], "a", "{object}");
    assert_eq!(containers[0]["image"], "nginx");
    assert_eq!(containers[1]["name"], "b");
    assert_eq!(containers[1]["image"], "patched");

    let args = "Object{spec: Object.spec{template: Object.spec.template{spec: \
        Object.spec.template.spec{containers: [Object.spec.template.spec.containers{\
        name: 'a', args: ['y']}]}}}}";
    install(&app, "args", &deployment_policy("args", args)).await;
    let mut reply = admin_call(&app, "POST", DEPLOYMENTS, Some(&deployment("atomic"))).await;
    for i in 0..200 {
        if reply.status == StatusCode::FORBIDDEN {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        let name = format!("atomic-{i}");
        reply = admin_call(&app, "POST", DEPLOYMENTS, Some(&deployment(&name))).await;
    }
    let status = assert_status(&reply, 403, "Invalid");
    let message = "policy 'args' with binding 'args-b' denied request: error applying patch: \
        invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: \
        .spec.template.spec.containers[0].args";
    assert_eq!(status["message"], message);
    assert_eq!(status["details"]["causes"], json!([{"message": message}]));
}

// A mutated object gets its kind's defaults again, as Kubernetes decodes a patched object
// with them: a container a JSONPatch appends without the defaulted fields is stored with
// them, where validation would otherwise refuse it for lacking them.
#[tokio::test]
async fn a_mutated_object_is_defaulted_again() {
    let (app, _) = app().await;
    let expression = "[JSONPatch{op: 'add', path: '/spec/template/spec/containers/-', \
        value: {'name': 'sidecar', 'image': 'busybox:1.36'}}]";
    let mutations = json!([{"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}]);
    let rules = json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"],
        "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]}});
    install(&app, "sidecar", &policy("sidecar", mutations, rules)).await;
    let mut object = Value::Null;
    for i in 0..200 {
        let name = format!("d{i}");
        let reply = admin_call(&app, "POST", DEPLOYMENTS, Some(&deployment(&name))).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        object = reply.json();
        if object["spec"]["template"]["spec"]["containers"][2]["name"] == "sidecar" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let sidecar = &object["spec"]["template"]["spec"]["containers"][2];
    assert_eq!(sidecar["name"], "sidecar", "{object}");
    assert_eq!(sidecar["imagePullPolicy"], "IfNotPresent", "{object}");
    assert_eq!(sidecar["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(sidecar["terminationMessagePolicy"], "File");
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let stored = fetched(&app, &format!("{DEPLOYMENTS}/{name}")).await;
    assert_eq!(
        stored["spec"]["template"]["spec"]["containers"][2],
        *sidecar
    );
}

// JSONPatch operations add and replace, with `jsonpatch.escapeKey` for a key holding `/`.
#[tokio::test]
async fn json_patch_adds_and_replaces() {
    let (app, _) = app().await;
    let expression = "[JSONPatch{op: 'add', path: '/data/added', value: 'yes'}, \
        JSONPatch{op: 'replace', path: '/data/a', value: object.data.a + '-replaced'}, \
        JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('example.com/team'), \
        value: 'red'}]";
    let mutations = json!([{"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}]);
    install(&app, "patch", &policy("patch", mutations, json!({}))).await;
    let reply = until(&app, CM_PATH, "cm", json!({"a": "1"}), |r| {
        r.status == StatusCode::CREATED && r.json()["data"]["added"] == "yes"
    })
    .await;
    let object = reply.json();
    assert_eq!(
        object["data"],
        json!({"a": "1-replaced", "added": "yes"}),
        "{object}"
    );
    assert_eq!(label(&object, "example.com/team"), "red");
}

// A binding's params are the expression's `params`; match conditions decide which writes a
// policy mutates.
#[tokio::test]
async fn params_and_match_conditions() {
    let (app, _) = app().await;
    created(
        &app,
        CM_PATH,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "defaults"},
            "data": {"owner": "ops"}})
        .to_string(),
    )
    .await;
    let spec = json!({
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConditions": [{"name": "prefixed", "expression": "object.metadata.name.startsWith('m-')"}],
    });
    let expression = "Object{metadata: Object.metadata{labels: {'owner': params.data.owner}}}";
    created(&app, POLICIES, &policy("owner", apply(expression), spec)).await;
    let param_ref = json!({"paramRef": {"name": "defaults", "parameterNotFoundAction": "Deny"}});
    created(&app, BINDINGS, &binding("owner-b", "owner", param_ref)).await;
    let reply = until(&app, CM_PATH, "m-cm", json!({}), |r| {
        r.status == StatusCode::CREATED && label(&r.json(), "owner") == "ops"
    })
    .await;
    assert_eq!(label(&reply.json(), "owner"), "ops", "{}", reply.text());
    let other = created(&app, CM_PATH, &config_map("other", json!({}))).await;
    assert_eq!(label(&other, "owner"), &Value::Null, "{other}");
}

// A policy whose object a later policy changes is invoked again under `IfNeeded`, not under
// `Never`.
#[tokio::test]
async fn if_needed_policies_are_reinvoked_after_a_later_change() {
    let (app, _) = app().await;
    let seen = |key: &str| {
        format!(
            "Object{{metadata: Object.metadata{{annotations: {{'{key}': \
             has(object.metadata.labels.later) ? 'yes' : 'no'}}}}}}"
        )
    };
    let again = json!({"reinvocationPolicy": "IfNeeded"});
    install(
        &app,
        "a-again",
        &policy("a-again", apply(&seen("again")), again),
    )
    .await;
    install(
        &app,
        "a-once",
        &policy("a-once", apply(&seen("once")), json!({})),
    )
    .await;
    let later = "Object{metadata: Object.metadata{labels: {'later': '1'}}}";
    install(&app, "z-later", &policy("z-later", apply(later), json!({}))).await;
    let reply = until(&app, CM_PATH, "cm", json!({}), |r| {
        let object = r.json();
        let annotations = &object["metadata"]["annotations"];
        r.status == StatusCode::CREATED
            && label(&object, "later") == "1"
            && annotations["again"].is_string()
            && annotations["once"].is_string()
    })
    .await;
    let object = reply.json();
    assert_eq!(
        object["metadata"]["annotations"]["again"], "yes",
        "{object}"
    );
    assert_eq!(object["metadata"]["annotations"]["once"], "no");
}

// A mutation that fails refuses the write under `failurePolicy: Fail` with Kubernetes'
// message (403, reason Invalid, the policy's error the whole message) and is skipped under
// `Ignore`.
#[tokio::test]
async fn failure_policy_decides_what_a_failed_mutation_does() {
    let (app, _) = app().await;
    let expression = "Object{data: {'copy': object.data.missing}}";
    install(
        &app,
        "fails",
        &policy("fails", apply(expression), json!({})),
    )
    .await;
    let reply = until(&app, CM_PATH, "cm", json!({}), |r| {
        r.status == StatusCode::FORBIDDEN
    })
    .await;
    let status = assert_status(&reply, 403, "Invalid");
    let message = format!(
        "policy 'fails' with binding 'fails-b' denied request: expression '{expression}' resulted in error: no such key: missing"
    );
    assert_eq!(status["message"], message);
    assert_eq!(status["details"]["kind"], "configmaps");

    let ignored = json!({"failurePolicy": "Ignore"});
    let (app, _) = super::app().await;
    install(&app, "fails", &policy("fails", apply(expression), ignored)).await;
    let also = "Object{metadata: Object.metadata{labels: {'also': 'ran'}}}";
    install(&app, "later", &policy("later", apply(also), json!({}))).await;
    let reply = until(&app, CM_PATH, "cm", json!({}), |r| {
        r.status == StatusCode::CREATED && label(&r.json(), "also") == "ran"
    })
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
}

// A dry run answers the mutated object and stores nothing (R-RES-192).
#[tokio::test]
async fn dry_runs_are_mutated_but_not_stored() {
    let (app, _) = app().await;
    let expression = "Object{metadata: Object.metadata{labels: {'team': 'blue'}}}";
    install(
        &app,
        "label",
        &policy("label", apply(expression), json!({})),
    )
    .await;
    let path = format!("{CM_PATH}?dryRun=All");
    let reply = until(&app, &path, "dry", json!({}), |r| {
        r.status == StatusCode::CREATED && label(&r.json(), "team") == "blue"
    })
    .await;
    let object = reply.json();
    assert_eq!(label(&object, "team"), "blue", "{object}");
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let missing = admin_call(&app, "GET", &format!("{CM_PATH}/{name}"), None).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

// The policy's own validation: mutations required, the patch type's member required and the
// other refused, expressions compiled with the patch types, DELETE not matchable, the
// reinvocation policy required; the binding's operations checked too.
#[tokio::test]
async fn policies_and_bindings_are_validated() {
    let (app, _) = app().await;
    let body = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": "bad"},
        "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["DELETE"], "resources": ["configmaps"]}]},
            "mutations": [
                {"patchType": "JSONPatch", "applyConfiguration": {"expression": "Object{}"}},
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Pod{}"}},
                {"patchType": "Merge"},
            ],
        }
    });
    let reply = admin_call(&app, "POST", POLICIES, Some(&body.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    let fields: Vec<&str> = (status["details"]["causes"].as_array().into_iter().flatten())
        .filter_map(|c| c["field"].as_str())
        .collect();
    assert_eq!(
        fields,
        [
            "spec.matchConstraints.resourceRules.operations",
            "spec.mutations[0].jsonPatch",
            "spec.mutations[0].applyConfiguration",
            "spec.mutations[1].applyConfiguration.expression",
            "spec.mutations[2].patchType",
            "spec.reinvocationPolicy",
        ],
        "{status}"
    );
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(
            "spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch"
        ),
        "{message}"
    );
    assert!(
        message.contains("spec.mutations[1].applyConfiguration.expression: Invalid value: \"Pod{}\": compilation failed: undeclared reference to 'Pod'"),
        "{message}"
    );

    let empty = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": "empty"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["configmaps"]}]}, "reinvocationPolicy": "Never"}
    });
    let reply = admin_call(&app, "POST", POLICIES, Some(&empty.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldValueRequired", "field": "spec.mutations",
            "message": "Required value: mutations must contain at least one item"}])
    );

    let binding = binding(
        "b",
        "p",
        json!({"matchResources": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["DELETE"], "resources": ["configmaps"]}]}}),
    );
    let reply = admin_call(&app, "POST", BINDINGS, Some(&binding)).await;
    let status = assert_status(&reply, 422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "spec.matchResources.resourceRules.operations"
    );
}

// R-VER-120: under Equivalent (the v1 default) a policy naming v1beta1 widgets mutates a v1
// write in v1beta1: its expression sees the object converted and the request renamed, and
// the stored v1 object carries what it added.
#[tokio::test]
async fn an_equivalent_policy_mutates_other_versions_in_its_own() {
    use super::custom_resources::WIDGETS;
    use super::custom_resources::serve;
    use super::custom_resources::widget;
    use super::custom_resources::widgets_where;

    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    serve(&app, flavor, &widgets_where(flavor, |_, _| {})).await;
    let expression = "Object{metadata: Object.metadata{labels: {\
        'seen-as': request.kind.version, \
        'converted': string(object.apiVersion == 'stable.example.com/v1beta1')}}}";
    let rules = json!({"matchConstraints": {"resourceRules": [{
        "apiGroups": ["stable.example.com"], "apiVersions": ["v1beta1"],
        "operations": ["CREATE"], "resources": ["widgets"]}]}});
    install(&app, "beta", &policy("beta", apply(expression), rules)).await;
    let mut object = Value::Null;
    for i in 0..200 {
        let reply = admin_call(&app, "POST", WIDGETS, Some(&widget(&format!("w{i}"), 1))).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        object = reply.json();
        if !label(&object, "seen-as").is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(label(&object, "seen-as"), "v1beta1", "{object}");
    assert_eq!(label(&object, "converted"), "true");
    assert_eq!(object["apiVersion"], "stable.example.com/v1");
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let stored = fetched(&app, &format!("{WIDGETS}/{name}")).await;
    assert_eq!(label(&stored, "seen-as"), "v1beta1", "{stored}");
    assert_eq!(stored["apiVersion"], "stable.example.com/v1");
}

//! Custom resources through the HTTP API: a CustomResourceDefinition's kind is served once
//! its names are accepted, on every verb the generic store has, in each served version over
//! one set of stored objects, listed in discovery once established, and refused new objects
//! while its definition is being deleted. The definitions' status is written here as the
//! CRD controllers write it (the router runs no controllers).

use std::time::Duration;

use serde_json::Value;
use serde_json::json;

use super::*;

/// A definition of `widgets.stable.example.com`: namespaced, `v1` stored and `v1beta1`
/// served too, both with a `status` subresource.
fn widgets(flavor: Flavor) -> String {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    }}});
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage, "schema": schema,
               "subresources": {"status": {}}})
    };
    json!({
        "apiVersion": format!("apiextensions.{}/v1", flavor.group_domain()),
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.stable.example.com", "finalizers": ["example.com/hold"]},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"],
                      "categories": ["all"]},
            "versions": [version("v1beta1", false), version("v1", true)],
        }
    })
    .to_string()
}

/// [`widgets`] without its finalizer, each version changed by `change` (with its index).
fn widgets_where(flavor: Flavor, change: impl Fn(usize, &mut Value)) -> Value {
    let mut crd: Value = serde_json::from_str(&widgets(flavor)).expect("json");
    crd["metadata"]["finalizers"] = json!([]);
    for (i, version) in (crd["spec"]["versions"].as_array_mut().into_iter().flatten()).enumerate() {
        change(i, version);
    }
    crd
}

/// Creates `crd` (a widgets definition), establishes it and waits until widgets are served.
async fn serve(app: &Router, flavor: Flavor, crd: &Value) {
    created(app, &crds(flavor), &crd.to_string()).await;
    establish(app, flavor, "widgets.stable.example.com").await;
    let served = until_answers(app, WIDGETS, StatusCode::OK).await;
    assert_eq!(served.status, StatusCode::OK, "{}", served.text());
}

fn crds(flavor: Flavor) -> String {
    format!(
        "/apis/apiextensions.{}/v1/customresourcedefinitions",
        flavor.group_domain()
    )
}

const WIDGETS: &str = "/apis/stable.example.com/v1/namespaces/default/widgets";

/// Accepts the names of definition `name` and establishes it, as the CRD controllers do.
async fn establish(app: &Router, flavor: Flavor, name: &str) {
    let path = format!("{}/{name}", crds(flavor));
    let mut crd = fetched(app, &path).await;
    crd["status"]["acceptedNames"] = crd["spec"]["names"].clone();
    crd["status"]["conditions"] = json!([
        {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
         "message": "no conflicts found", "lastTransitionTime": "2026-01-01T00:00:00Z"},
        {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
         "message": "the initial names have been accepted",
         "lastTransitionTime": "2026-01-01T00:00:00Z"},
    ]);
    let reply = admin_call(
        app,
        "PUT",
        &format!("{path}/status"),
        Some(&crd.to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
}

/// Waits until GET `path` answers `status` (the table follows the store's watch).
async fn until_answers(app: &Router, path: &str, status: StatusCode) -> Reply {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let reply = admin_call(app, "GET", path, None).await;
        if reply.status == status || tokio::time::Instant::now() > deadline {
            return reply;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// PATCH `path` with the JSON merge patch `patch`, as the admin.
async fn merge_patch(app: &Router, path: &str, patch: &str) -> Reply {
    send_as(app, "PATCH", path, "application/merge-patch+json", patch).await
}

fn widget(name: &str, size: i64) -> String {
    json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
           "metadata": {"name": name, "labels": {"tier": "gold"}},
           "spec": {"size": size}, "status": {"ready": true}})
    .to_string()
}

// CHECKLIST: R-RES-118 (no strategic merge patch), R-RES-125 (no Protobuf).
#[tokio::test]
async fn a_custom_kind_is_served_once_its_names_are_accepted() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let (app, _) = app_in(flavor).await;
        created(&app, &crds(flavor), &widgets(flavor)).await;
        let early = admin_call(&app, "GET", WIDGETS, None).await;
        assert_eq!(early.status, StatusCode::NOT_FOUND, "{flavor:?}");
        establish(&app, flavor, "widgets.stable.example.com").await;
        let listed = until_answers(&app, WIDGETS, StatusCode::OK).await;
        assert_eq!(listed.status, StatusCode::OK, "{}", listed.text());
        assert_eq!(listed.json()["kind"], "WidgetList");

        // A create drops the status; the status subresource sets it.
        let made = created(&app, WIDGETS, &widget("w1", 3)).await;
        assert_eq!(made["kind"], "Widget");
        assert_eq!(made["metadata"]["generation"], 1);
        assert!(made.get("status").is_none(), "{made}");
        let mut with_status = made.clone();
        with_status["status"] = json!({"ready": true});
        let reply = admin_call(
            &app,
            "PUT",
            &format!("{WIDGETS}/w1/status"),
            Some(&with_status.to_string()),
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert_eq!(reply.json()["status"]["ready"], true);

        // A merge patch changes the spec and the generation; the status stays.
        let patched = merge_patch(
            &app,
            &format!("{WIDGETS}/w1"),
            r#"{"spec":{"size":4},"status":{"ready":false}}"#,
        )
        .await;
        assert_eq!(patched.status, StatusCode::OK, "{}", patched.text());
        let patched = patched.json();
        assert_eq!(patched["spec"]["size"], 4);
        assert_eq!(patched["status"]["ready"], true);
        assert_eq!(patched["metadata"]["generation"], 2);

        // Custom kinds take no strategic merge patch.
        let strategic = send_as(
            &app,
            "PATCH",
            &format!("{WIDGETS}/w1"),
            "application/strategic-merge-patch+json",
            r#"{"spec":{"size":5}}"#,
        )
        .await;
        let status = assert_status(&strategic, 415, "UnsupportedMediaType");
        let message = status["message"].as_str().unwrap_or_default();
        assert!(!message.contains("strategic"), "{message}");

        // Custom kinds are not offered in Protobuf: JSON when the client also takes it, 406
        // when it takes nothing else.
        let protobuf = flavor.protobuf_media_type();
        let path = format!("{WIDGETS}/w1");
        let only = get_with(&app, &path, &[("accept", protobuf)]).await;
        assert_status(&only, 406, "NotAcceptable");
        let either = format!("{protobuf}, application/json");
        let json = get_with(&app, &path, &[("accept", &either)]).await;
        assert_eq!(json.status, StatusCode::OK);
        assert_eq!(content_type(&json), "application/json");

        // The other served version reads the same object in its own apiVersion.
        let beta = fetched(
            &app,
            "/apis/stable.example.com/v1beta1/namespaces/default/widgets/w1",
        )
        .await;
        assert_eq!(beta["apiVersion"], "stable.example.com/v1beta1");
        assert_eq!(beta["spec"]["size"], 4);

        // Label selectors and the all-namespaces list.
        created(&app, WIDGETS, &widget("w2", 1)).await;
        let all = fetched(
            &app,
            "/apis/stable.example.com/v1/widgets?labelSelector=tier%3Dgold&limit=1",
        )
        .await;
        assert_eq!(all["items"].as_array().map(Vec::len), Some(1));
        assert!(all["metadata"]["continue"].is_string(), "{all}");

        let gone = admin_call(&app, "DELETE", &format!("{WIDGETS}/w2"), None).await;
        assert_eq!(gone.status, StatusCode::OK, "{}", gone.text());
        let missing = admin_call(&app, "GET", &format!("{WIDGETS}/w2"), None).await;
        assert_status(&missing, 404, "NotFound");
    }
}

// CHECKLIST: none.
#[tokio::test]
async fn discovery_lists_an_established_kind() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    created(&app, &crds(flavor), &widgets(flavor)).await;
    establish(&app, flavor, "widgets.stable.example.com").await;
    let group = until_answers(&app, "/apis/stable.example.com", StatusCode::OK).await;
    assert_eq!(group.status, StatusCode::OK, "{}", group.text());
    let group = group.json();
    assert_eq!(
        group["preferredVersion"]["groupVersion"],
        "stable.example.com/v1"
    );
    assert_eq!(group["versions"][1]["version"], "v1beta1");
    let list = fetched(&app, "/apis/stable.example.com/v1").await;
    let widgets = &list["resources"][0];
    assert_eq!(widgets["name"], "widgets");
    assert_eq!(widgets["kind"], "Widget");
    assert_eq!(widgets["shortNames"], json!(["wd"]));
    assert_eq!(widgets["categories"], json!(["all"]));
    assert_eq!(widgets["singularName"], "widget");
    assert_eq!(list["resources"][1]["name"], "widgets/status");
    let aggregated = get_with(
        &app,
        "/apis",
        &[(
            "accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        )],
    )
    .await;
    let aggregated: Value = aggregated.json();
    let found = aggregated["items"].as_array().and_then(|i| {
        i.iter()
            .find(|g| g["metadata"]["name"] == "stable.example.com")
    });
    assert!(found.is_some(), "{aggregated}");
}

// CHECKLIST: none.
#[tokio::test]
async fn a_terminating_definition_refuses_new_objects() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let crd: Value = serde_json::from_str(&widgets(flavor)).expect("json");
    serve(&app, flavor, &crd).await;
    created(&app, WIDGETS, &widget("w1", 1)).await;
    let path = format!("{}/widgets.stable.example.com", crds(flavor));
    let deleted = admin_call(&app, "DELETE", &path, None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let refused = loop {
        let reply = admin_call(&app, "POST", WIDGETS, Some(&widget("w2", 1))).await;
        if reply.status != StatusCode::CREATED || tokio::time::Instant::now() > deadline {
            break reply;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let status = assert_status(&refused, 405, "MethodNotAllowed");
    assert_eq!(
        status["message"],
        "create not allowed while custom resource definition is terminating"
    );
    // The objects it has stay readable and deletable.
    fetched(&app, &format!("{WIDGETS}/w1")).await;
    let gone = admin_call(&app, "DELETE", &format!("{WIDGETS}/w1"), None).await;
    assert_eq!(gone.status, StatusCode::OK, "{}", gone.text());
}

// CHECKLIST: none.
#[tokio::test]
async fn a_custom_scale_reads_and_writes_the_definitions_paths() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let crd = widgets_where(flavor, |_, version| {
        version["subresources"]["scale"] = json!({
            "specReplicasPath": ".spec.size",
            "statusReplicasPath": ".status.count",
            "labelSelectorPath": ".status.selector",
        });
        version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"] = json!({
            "count": {"type": "integer"}, "selector": {"type": "string"}});
    });
    serve(&app, flavor, &crd).await;
    created(&app, WIDGETS, &widget("w1", 2)).await;
    let status = json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "status": {"count": 1, "selector": "app=w"}});
    let reply = merge_patch(&app, &format!("{WIDGETS}/w1/status"), &status.to_string()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());

    let scale = fetched(&app, &format!("{WIDGETS}/w1/scale")).await;
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"]["replicas"], 2);
    assert_eq!(scale["status"], json!({"replicas": 1, "selector": "app=w"}));

    let mut wanted = scale.clone();
    wanted["spec"]["replicas"] = 5.into();
    let reply = admin_call(
        &app,
        "PUT",
        &format!("{WIDGETS}/w1/scale"),
        Some(&wanted.to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["spec"]["replicas"], 5);
    let widget = fetched(&app, &format!("{WIDGETS}/w1")).await;
    assert_eq!(widget["spec"]["size"], 5);

    let negative = merge_patch(&app, &format!("{WIDGETS}/w1"), r#"{"spec":{"size":-1}}"#).await;
    let status = assert_status(&negative, 422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["field"], ".spec.size",
        "{status}"
    );
}

// CHECKLIST: none.
#[tokio::test]
async fn openapi_documents_a_custom_kind_once_established() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let before = fetched(&app, "/openapi/v3").await;
    assert!(before["paths"].get("apis/stable.example.com/v1").is_none());
    created(&app, &crds(flavor), &widgets(flavor)).await;
    establish(&app, flavor, "widgets.stable.example.com").await;
    let doc = until_answers(
        &app,
        "/openapi/v3/apis/stable.example.com/v1",
        StatusCode::OK,
    )
    .await;
    assert_eq!(doc.status, StatusCode::OK, "{}", doc.text());
    let doc = doc.json();
    let kind = &doc["components"]["schemas"]["com.example.stable.v1.Widget"];
    assert_eq!(
        kind["x-kubernetes-group-version-kind"],
        json!([{"group": "stable.example.com", "kind": "Widget", "version": "v1"}])
    );
    assert_eq!(
        kind["properties"]["spec"]["properties"]["size"]["type"],
        "integer"
    );
    assert!(kind["properties"]["metadata"].is_object());
    let paths = doc["paths"].as_object().expect("paths");
    assert!(
        paths.contains_key("/apis/stable.example.com/v1/namespaces/{namespace}/widgets/{name}"),
        "{:?}",
        paths.keys().collect::<Vec<_>>()
    );
    let index = fetched(&app, "/openapi/v3").await;
    assert!(
        index["paths"].get("apis/stable.example.com/v1").is_some(),
        "{index}"
    );
    let v2 = fetched(&app, "/openapi/v2").await;
    assert!(
        v2["definitions"]
            .get("com.example.stable.v1.Widget")
            .is_some()
    );
}

// CHECKLIST: none.
#[tokio::test]
async fn field_selectors_take_the_selectable_fields() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let crd = widgets_where(flavor, |_, version| {
        version["selectableFields"] = json!([{"jsonPath": ".spec.size"}]);
    });
    serve(&app, flavor, &crd).await;
    created(&app, WIDGETS, &widget("small", 1)).await;
    created(&app, WIDGETS, &widget("big", 9)).await;
    let names = |list: Value| -> Vec<String> {
        (list["items"].as_array().into_iter().flatten())
            .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_owned))
            .collect()
    };
    let big = fetched(&app, &format!("{WIDGETS}?fieldSelector=spec.size%3D9")).await;
    assert_eq!(names(big), ["big"]);
    let not_big = fetched(&app, &format!("{WIDGETS}?fieldSelector=spec.size!%3D9")).await;
    assert_eq!(names(not_big), ["small"]);
    let by_name = fetched(
        &app,
        &format!("{WIDGETS}?fieldSelector=metadata.name%3Dsmall"),
    )
    .await;
    assert_eq!(names(by_name), ["small"]);
    let unknown = admin_call(
        &app,
        "GET",
        &format!("{WIDGETS}?fieldSelector=spec.color%3Dred"),
        None,
    )
    .await;
    let status = assert_status(&unknown, 400, "BadRequest");
    assert_eq!(
        status["message"],
        "\"spec.color\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    );
}

// CHECKLIST: none.
#[tokio::test]
async fn a_deprecated_version_warns_on_every_request() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let crd = widgets_where(flavor, |i, version| {
        version["deprecated"] = (i == 0).into();
    });
    serve(&app, flavor, &crd).await;
    let beta = "/apis/stable.example.com/v1beta1/namespaces/default/widgets";
    let listed = until_answers(&app, beta, StatusCode::OK).await;
    assert_eq!(
        warnings(&listed),
        [
            "299 - \"stable.example.com/v1beta1 Widget is deprecated; use stable.example.com/v1 Widget\""
        ]
    );
    let current = admin_call(&app, "GET", WIDGETS, None).await;
    assert!(warnings(&current).is_empty());

    let mut crd = fetched(
        &app,
        &format!("{}/widgets.stable.example.com", crds(flavor)),
    )
    .await;
    crd["spec"]["versions"][0]["deprecationWarning"] = "beta widgets go away in 2027".into();
    let reply = admin_call(
        &app,
        "PUT",
        &format!("{}/widgets.stable.example.com", crds(flavor)),
        Some(&crd.to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let created = loop {
        let reply = admin_call(
            &app,
            "POST",
            beta,
            Some(&widget("w1", 1).replace("/v1\"", "/v1beta1\"")),
        )
        .await;
        if warnings(&reply).iter().any(|w| w.contains("2027"))
            || tokio::time::Instant::now() > deadline
        {
            break reply;
        }
        let _ = admin_call(&app, "DELETE", &format!("{beta}/w1"), None).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    assert_eq!(
        warnings(&created),
        ["299 - \"beta widgets go away in 2027\""]
    );
}

// CHECKLIST: R-VER-003 (`self` and `oldSelf` in a custom resource's rules).
#[tokio::test]
async fn validation_rules_hold_on_create_and_update() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let crd = widgets_where(flavor, |_, version| {
        version["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] = json!([
            {"rule": "self.size <= 10", "message": "at most ten"},
            {"rule": "self.size >= oldSelf.size", "message": "size may not shrink"},
        ]);
    });
    serve(&app, flavor, &crd).await;

    let big = admin_call(&app, "POST", WIDGETS, Some(&widget("big", 11))).await;
    let status = assert_status(&big, 422, "Invalid");
    assert_eq!(
        status["message"],
        "Widget.stable.example.com \"big\" is invalid: spec: Invalid value: \"object\": at most ten"
    );
    created(&app, WIDGETS, &widget("w", 5)).await;
    let shrink = merge_patch(&app, &format!("{WIDGETS}/w"), r#"{"spec":{"size":4}}"#).await;
    let status = assert_status(&shrink, 422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "Invalid value: \"object\": size may not shrink"
    );
    let grow = merge_patch(&app, &format!("{WIDGETS}/w"), r#"{"spec":{"size":6}}"#).await;
    assert_eq!(grow.status, StatusCode::OK, "{}", grow.text());
}

// CHECKLIST: R-RES-040 (Tables of a kind's columns).
#[tokio::test]
async fn tables_print_the_definitions_columns() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let crd = widgets_where(flavor, |i, version| {
        if i == 1 {
            version["additionalPrinterColumns"] = json!([
                {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                {"name": "Ready", "type": "boolean", "jsonPath": ".status.ready", "priority": 1},
            ]);
        }
    });
    serve(&app, flavor, &crd).await;
    created(&app, WIDGETS, &widget("w1", 3)).await;
    let table = "application/json;as=Table;g=meta.k8s.io;v=v1";
    let listed = get_with(&app, WIDGETS, &[("accept", table)]).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text());
    let listed = listed.json();
    assert_eq!(listed["kind"], "Table");
    let names: Vec<&str> = (listed["columnDefinitions"].as_array().into_iter().flatten())
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["Name", "Size", "Ready"]);
    assert_eq!(listed["rows"][0]["cells"], json!(["w1", 3, null]));
    // The other version has no columns: Kubernetes' default Age.
    let beta = "/apis/stable.example.com/v1beta1/namespaces/default/widgets/w1";
    let one = get_with(&app, beta, &[("accept", table)]).await.json();
    let names: Vec<&str> = (one["columnDefinitions"].as_array().into_iter().flatten())
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["Name", "Age"]);
}

// CHECKLIST: R-RES-188 (unknown fields of a custom resource are pruned and reported).
#[tokio::test]
async fn the_schema_prunes_defaults_and_validates() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let crd = widgets_where(flavor, |_, version| {
        version["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({
            "type": "object",
            "x-kubernetes-validations": [{"rule": "self.size <= 10", "message": "at most ten"}],
            "properties": {
                "size": {"type": "integer", "default": 2, "minimum": 0},
                "mode": {"type": "string", "enum": ["a", "b"]},
            },
        });
    });
    serve(&app, flavor, &crd).await;

    // Pruned and defaulted; the unknown field is a warning by default, a 400 when strict.
    let body = json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": {"mode": "a", "bogus": 1}});
    let reply = admin_call(&app, "POST", WIDGETS, Some(&body.to_string())).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert_eq!(
        warnings(&reply),
        ["299 - \"unknown field \\\"spec.bogus\\\"\""]
    );
    assert_eq!(reply.json()["spec"], json!({"mode": "a", "size": 2}));
    let strict = admin_call(
        &app,
        "POST",
        &format!("{WIDGETS}?fieldValidation=Strict"),
        Some(&body.to_string().replace("w1", "w2")),
    )
    .await;
    let status = assert_status(&strict, 400, "BadRequest");
    assert!(
        status["message"]
            .as_str()
            .unwrap_or_default()
            .contains("unknown field \"spec.bogus\""),
        "{status}"
    );

    // Value validation: a wrong type blocks the rules, whose message says so.
    let wrong = json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w3"}, "spec": {"size": "big", "mode": "c"}});
    let reply = admin_call(&app, "POST", WIDGETS, Some(&wrong.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    let causes: Vec<String> = (status["details"]["causes"].as_array().into_iter().flatten())
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap_or(""),
                c["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(
        causes.iter().any(|c| c.starts_with(
            "spec.size: Invalid value: \"string\": spec.size in body must be of type integer"
        )),
        "{causes:?}"
    );
    assert!(
        causes
            .iter()
            .any(|c| c.starts_with("spec.mode: Unsupported value: \"c\"")),
        "{causes:?}"
    );
    assert!(
        causes
            .iter()
            .any(|c| c.contains("some validation rules were not checked")),
        "{causes:?}"
    );
    let negative = json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w4"}, "spec": {"size": -1}});
    let reply = admin_call(&app, "POST", WIDGETS, Some(&negative.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "Invalid value: -1: spec.size in body should be greater than or equal to 0"
    );
}

/// Applies `body` to the widget `name` as the field manager `manager`.
async fn apply_widget(app: &Router, name: &str, manager: &str, spec: Value) -> Reply {
    let body = json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": spec});
    let path = format!("{WIDGETS}/{name}?fieldManager={manager}");
    send_as(
        app,
        "PATCH",
        &path,
        "application/apply-patch+yaml",
        &body.to_string(),
    )
    .await
}

/// The `fieldsV1` of `manager`'s entry in `obj`'s managedFields.
fn fields_of(obj: &Value, manager: &str) -> Value {
    (obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten())
    .find(|e| e["manager"] == manager)
    .map_or(Value::Null, |e| e["fieldsV1"].clone())
}

// CHECKLIST: R-RES-215, R-RES-216, R-RES-217, R-RES-204, R-RES-211, R-RES-237 (apply follows
// a custom resource's list types: map lists merge and are owned per item, sets per value,
// atomic lists whole; a conflict names the item's field and its manager).
#[tokio::test]
async fn apply_follows_the_list_types_of_the_schema() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let crd = widgets_where(flavor, |_, version| {
        version["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({
            "type": "object",
            "properties": {
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"}, "port": {"type": "integer"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set",
                    "items": {"type": "string"}},
                "args": {"type": "array", "x-kubernetes-list-type": "atomic",
                    "items": {"type": "string"}},
            },
        });
    });
    serve(&app, flavor, &crd).await;

    let alice = json!({"ports": [{"name": "http", "port": 80}], "tags": ["a"], "args": ["x", "y"]});
    let reply = apply_widget(&app, "w", "alice", alice).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    let bob = json!({"ports": [{"name": "dns", "port": 53}], "tags": ["b"]});
    let reply = apply_widget(&app, "w", "bob", bob).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let obj = reply.json();
    assert_eq!(
        obj["spec"],
        json!({"ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53}],
            "tags": ["a", "b"], "args": ["x", "y"]})
    );
    assert_eq!(
        fields_of(&obj, "bob"),
        json!({"f:spec": {
            "f:ports": {"k:{\"name\":\"dns\"}": {".": {}, "f:name": {}, "f:port": {}}},
            "f:tags": {"v:\"b\"": {}}
        }})
    );

    // Another manager's item field is a conflict on that field, and nothing changes.
    let steal = json!({"ports": [{"name": "dns", "port": 53}, {"name": "http", "port": 8080}],
        "tags": ["b"]});
    let reply = apply_widget(&app, "w", "bob", steal).await;
    let status = assert_status(&reply, 409, "Conflict");
    assert_eq!(
        status["message"],
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.ports[name=\"http\"].port"
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"",
            "field": ".spec.ports[name=\"http\"].port"}])
    );

    // The atomic list is replaced whole, and alice keeps what bob applied.
    let alice = json!({"ports": [{"name": "http", "port": 80}], "tags": ["a"], "args": ["z"]});
    let reply = apply_widget(&app, "w", "alice", alice).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(
        reply.json()["spec"],
        json!({"ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53}],
            "tags": ["a", "b"], "args": ["z"]})
    );
    assert_eq!(
        fields_of(&reply.json(), "alice"),
        json!({"f:spec": {
            "f:args": {},
            "f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}},
            "f:tags": {"v:\"a\"": {}}
        }})
    );
}

//! `fieldValidation` on create and update (spec 000 "Field validation", R-RES-031,
//! R-RES-185..190): unknown and duplicate fields, found at any depth with the path Kubernetes
//! prints, are dropped silently (Ignore), dropped with one `Warning` each (Warn, the default)
//! or refused with one 400 listing them all (Strict); other errors win at every level.

use serde_json::json;

use super::*;

const DEPLOY_PATH: &str = "/apis/apps/v1/namespaces/default/deployments";

/// A Deployment with an unknown field at the top of `spec`, one in a container (list
/// index), and `metadata.name` given twice.
fn deployment(name: &str, replicas: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment",
            "metadata":{{"name":"dup","name":"{name}"}},
            "spec":{{"replicas":{replicas},"foo":true,"selector":{{"matchLabels":{{"app":"a"}}}},
              "template":{{"metadata":{{"labels":{{"app":"a"}}}},"spec":{{"containers":[
                {{"name":"c","image":"nginx","imagePullPolice":"Always"}}]}}}}}}}}"#
    )
}

const FINDINGS: [&str; 3] = [
    r#"duplicate field "metadata.name""#,
    r#"unknown field "spec.foo""#,
    r#"unknown field "spec.template.spec.containers[0].imagePullPolice""#,
];

fn expected_warnings() -> Vec<String> {
    FINDINGS
        .iter()
        .map(|f| format!("299 - \"{}\"", f.replace('"', "\\\"")))
        .collect()
}

/// The stored Deployment `name`, or `None`.
async fn stored(app: &Router, name: &str) -> Option<Value> {
    let got = admin_call(app, "GET", &format!("{DEPLOY_PATH}/{name}"), None).await;
    (got.status == StatusCode::OK).then(|| got.json())
}

// R-RES-186, R-RES-188, R-RES-189: without fieldValidation and with Warn, the write succeeds
// without the unknown fields and answers one Warning per finding, in body order.
#[tokio::test]
async fn warn_is_the_default_and_warns_once_per_field() {
    let (app, _) = app_in(Flavor::Kubernetes).await;
    for (query, name) in [("", "d1"), ("?fieldValidation=Warn", "d2")] {
        let path = format!("{DEPLOY_PATH}{query}");
        let created = admin_call(&app, "POST", &path, Some(&deployment(name, "1"))).await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
        assert_eq!(warnings(&created), expected_warnings(), "{query}");
        let d = stored(&app, name).await.expect("stored");
        assert!(d["spec"].get("foo").is_none(), "{d}");
        let c = &d["spec"]["template"]["spec"]["containers"][0];
        assert!(c.get("imagePullPolice").is_none(), "{c}");
        assert_eq!(c["image"], "nginx");
    }
}

// R-RES-185: Ignore drops the same fields without a word.
#[tokio::test]
async fn ignore_drops_silently() {
    let (app, _) = app_in(Flavor::Kubernetes).await;
    let path = format!("{DEPLOY_PATH}?fieldValidation=Ignore");
    let created = admin_call(&app, "POST", &path, Some(&deployment("d", "1"))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    assert_eq!(warnings(&created), Vec::<String>::new());
    let d = stored(&app, "d").await.expect("stored");
    assert!(d["spec"].get("foo").is_none(), "{d}");
}

// R-RES-187: Strict is a 400 listing every unknown and duplicate field, in Kubernetes'
// words; nothing is written, dry run or not.
#[tokio::test]
async fn strict_refuses_listing_every_field_and_writes_nothing() {
    let (app, storage) = app_in(Flavor::Kubernetes).await;
    let before = storage.revision().await;
    for query in [
        "?fieldValidation=Strict",
        "?fieldValidation=Strict&dryRun=All",
    ] {
        let path = format!("{DEPLOY_PATH}{query}");
        let refused = admin_call(&app, "POST", &path, Some(&deployment("d", "1"))).await;
        let s = assert_status(&refused, 400, "BadRequest");
        assert_eq!(
            s["message"],
            format!(
                "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: {}",
                FINDINGS.join(", ")
            ),
            "{query}"
        );
        assert_eq!(warnings(&refused), Vec::<String>::new());
    }
    assert_eq!(storage.revision().await, before);
    assert!(stored(&app, "d").await.is_none());
}

// R-RES-031, R-RES-190: a field of the wrong type is the only error answered, at every level,
// even when the body also has unknown and duplicate fields.
#[tokio::test]
async fn other_errors_win_at_every_level() {
    let (app, _) = app_in(Flavor::Kubernetes).await;
    for level in ["Ignore", "Warn", "Strict"] {
        let path = format!("{DEPLOY_PATH}?fieldValidation={level}");
        let refused = admin_call(&app, "POST", &path, Some(&deployment("d", "\"two\""))).await;
        let s = assert_status(&refused, 400, "BadRequest");
        let message = s["message"].as_str().expect("message");
        assert!(
            message.starts_with("Deployment in version \"v1\" cannot be handled as a Deployment: ")
                && !message.contains("strict decoding error")
                && !message.contains("unknown field"),
            "{level}: {message}"
        );
        assert_eq!(warnings(&refused), Vec::<String>::new(), "{level}");

        let kind = deployment("d", "1").replace("\"Deployment\"", "\"ReplicaSet\"");
        let refused = admin_call(&app, "POST", &path, Some(&kind)).await;
        let s = assert_status(&refused, 400, "BadRequest");
        assert_eq!(
            s["message"],
            "the kind in the data (ReplicaSet) does not match the expected kind (Deployment)"
        );
    }
    let path = format!("{CM_PATH}?fieldValidation=Ignore");
    let body = r#"{"metadata":{"name":"c"},"data":["a"]}"#;
    let refused = admin_call(&app, "POST", &path, Some(body)).await;
    assert_status(&refused, 400, "BadRequest");
}

// R-RES-186, R-RES-187, R-RES-189: updates are judged the same; a dry run warns the same.
#[tokio::test]
async fn updates_and_dry_runs_are_judged_the_same() {
    let (app, _) = app_in(Flavor::Kubernetes).await;
    let created = admin_call(&app, "POST", CM_PATH, Some(&cm("c"))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},
        "data":{"a":"2","a":"3"},"datum":{}}"#;
    let item = format!("{CM_PATH}/c");
    let expected = [
        r#"299 - "duplicate field \"data.a\"""#,
        r#"299 - "unknown field \"datum\"""#,
    ];

    let refused = admin_call(
        &app,
        "PUT",
        &format!("{item}?fieldValidation=Strict"),
        Some(body),
    )
    .await;
    let s = assert_status(&refused, 400, "BadRequest");
    assert_eq!(
        s["message"],
        r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.a", unknown field "datum""#
    );

    let dry = admin_call(&app, "PUT", &format!("{item}?dryRun=All"), Some(body)).await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.text());
    assert_eq!(warnings(&dry), expected);
    let got = admin_call(&app, "GET", &item, None).await;
    assert_eq!(
        got.json()["data"],
        json!({"a": "1"}),
        "dry run wrote nothing"
    );

    let updated = admin_call(&app, "PUT", &item, Some(body)).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());
    assert_eq!(warnings(&updated), expected);
    assert_eq!(
        updated.json()["data"],
        json!({"a": "3"}),
        "the last duplicate counts"
    );
    assert!(updated.json().get("datum").is_none());

    let dry_create = format!("{CM_PATH}?dryRun=All");
    let created = admin_call(
        &app,
        "POST",
        &dry_create,
        Some(&body.replace("\"c\"", "\"n\"")),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    assert_eq!(warnings(&created), expected);
}

// R-RES-188: groups under the flavor's domain are checked in both flavors, nested in lists.
#[tokio::test]
async fn both_flavors_find_nested_unknown_fields() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let (app, _) = app_in(flavor).await;
        let group = format!("rbac.authorization.{}", flavor.group_domain());
        let body = json!({
            "apiVersion": format!("{group}/v1"), "kind": "ClusterRole",
            "metadata": {"name": "r", "labels": {"a": "b"}},
            "rules": [
                {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
                {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "verb": ["x"]},
            ],
        })
        .to_string();
        let path = format!("/apis/{group}/v1/clusterroles");
        let created = admin_call(&app, "POST", &path, Some(&body)).await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
        assert_eq!(
            warnings(&created),
            [r#"299 - "unknown field \"rules[1].verb\"""#],
            "{flavor:?}"
        );
        let strict = format!("{path}?fieldValidation=Strict");
        let refused =
            admin_call(&app, "POST", &strict, Some(&body.replace("\"r\"", "\"s\""))).await;
        let s = assert_status(&refused, 400, "BadRequest");
        assert_eq!(
            s["message"],
            r#"ClusterRole in version "v1" cannot be handled as a ClusterRole: strict decoding error: unknown field "rules[1].verb""#
        );
    }
}

// Kubernetes' `ValidateFieldValidation`: any other value is a 422 on the options kind.
#[tokio::test]
async fn other_levels_are_422() {
    let (app, _) = app_in(Flavor::Platform).await;
    let refused = admin_call(
        &app,
        "POST",
        &format!("{CM_PATH}?fieldValidation=strict"),
        Some(&cm("c")),
    )
    .await;
    let s = assert_status(&refused, 422, "Invalid");
    assert_eq!(s["details"]["kind"], "CreateOptions");
    assert_eq!(s["details"]["group"], "meta.platform.io");
    assert_eq!(s["details"]["causes"][0]["field"], "fieldValidation");
    let refused = admin_call(
        &app,
        "PUT",
        &format!("{CM_PATH}/c?fieldValidation=Bogus"),
        Some(&cm("c")),
    )
    .await;
    let s = assert_status(&refused, 422, "Invalid");
    assert_eq!(s["details"]["kind"], "UpdateOptions");
}

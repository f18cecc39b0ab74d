//! Dry runs (`dryRun=All`) of every write verb served: each answers what the write would
//! answer, with the same status code and the same errors, and writes nothing: the store's
//! revision, its keys and its objects stay as they were, and a watch sees no event
//! (spec 000 "Dry run", R-RES-051, R-RES-192..196). PATCH's dry runs are in `patch.rs`.

use serde_json::Value;
use serde_json::json;

use super::*;
use apiary_api::storage::Storage;

fn cm_with(name: &str, data: &str, rv: Option<&str>) -> String {
    let mut meta = json!({"name": name});
    if let Some(rv) = rv {
        meta["resourceVersion"] = rv.into();
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"a": data}})
        .to_string()
}

// R-RES-192, R-RES-193: a dry-run create answers 201 with the object it would store (uid,
// creationTimestamp, a generated name) and no resourceVersion; nothing is stored.
#[tokio::test]
async fn dry_run_create_answers_201_and_stores_nothing() {
    let (app, storage) = app().await;
    let before = snapshot(&storage).await;
    let dry = admin_call(
        &app,
        "POST",
        &format!("{CM_PATH}?dryRun=All"),
        Some(&cm("x")),
    )
    .await;
    assert_eq!(dry.status, StatusCode::CREATED, "{}", dry.text());
    let d = dry.json();
    assert_eq!(d["kind"], "ConfigMap");
    assert_eq!(d["metadata"]["name"], "x");
    assert_eq!(d["metadata"]["namespace"], "default");
    assert_eq!(d["data"]["a"], "1");
    let uid = d["metadata"]["uid"].as_str().expect("uid");
    assert!(uuid::Uuid::parse_str(uid).is_ok(), "{uid}");
    assert!(d["metadata"]["creationTimestamp"].is_string(), "{d}");
    assert!(d["metadata"].get("resourceVersion").is_none(), "{d}");

    let generated = admin_call(
        &app,
        "POST",
        &format!("{CM_PATH}?dryRun=All"),
        Some(r#"{"metadata":{"generateName":"gen-"},"data":{"a":"1"}}"#),
    )
    .await;
    assert_eq!(
        generated.status,
        StatusCode::CREATED,
        "{}",
        generated.text()
    );
    let name = generated.json()["metadata"]["name"]
        .as_str()
        .expect("name")
        .to_owned();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    assert_eq!(snapshot(&storage).await, before, "a dry run wrote");
    let get = admin_call(&app, "GET", &format!("{CM_PATH}/x"), None).await;
    assert_status(&get, 404, "NotFound");
    // The real create still works and gets a fresh uid.
    let real = admin_call(&app, "POST", CM_PATH, Some(&cm("x"))).await;
    assert_eq!(real.status, StatusCode::CREATED);
    assert_ne!(real.json()["metadata"]["uid"], uid);
}

// R-RES-193: a dry-run create fails as the create would: a taken name is 409, an invalid
// object 422, a missing namespace 404; still nothing is written.
#[tokio::test]
async fn dry_run_create_keeps_the_error_codes() {
    let (app, storage) = app().await;
    admin_call(&app, "POST", CM_PATH, Some(&cm("x"))).await;
    let before = snapshot(&storage).await;
    let dry = format!("{CM_PATH}?dryRun=All");
    let taken = admin_call(&app, "POST", &dry, Some(&cm("x"))).await;
    assert_status(&taken, 409, "AlreadyExists");
    let invalid = admin_call(&app, "POST", &dry, Some(&cm("Not_A_Name"))).await;
    assert_eq!(
        assert_status(&invalid, 422, "Invalid")["details"]["causes"][0]["field"],
        "metadata.name"
    );
    let no_ns = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces/absent/configmaps?dryRun=All",
        Some(&cm("y")),
    )
    .await;
    assert_status(&no_ns, 404, "NotFound");
    assert_eq!(snapshot(&storage).await, before);
}

// R-RES-192, R-RES-193: a dry-run update answers 200 with the object it would store, at the
// current resourceVersion (conditional or not); the stored object is unchanged.
#[tokio::test]
async fn dry_run_update_answers_the_would_be_object_and_changes_nothing() {
    let (app, storage) = app().await;
    let created = admin_call(&app, "POST", CM_PATH, Some(&cm("x")))
        .await
        .json();
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    let before = snapshot(&storage).await;
    let path = format!("{CM_PATH}/x?dryRun=All");
    for body in [cm_with("x", "2", Some(&rv)), cm_with("x", "2", None)] {
        let dry = admin_call(&app, "PUT", &path, Some(&body)).await;
        assert_eq!(dry.status, StatusCode::OK, "{}", dry.text());
        let d = dry.json();
        assert_eq!(d["data"]["a"], "2");
        assert_eq!(d["metadata"]["resourceVersion"], rv.as_str());
        assert_eq!(d["metadata"]["uid"], created["metadata"]["uid"]);
        assert_eq!(
            d["metadata"]["creationTimestamp"],
            created["metadata"]["creationTimestamp"]
        );
    }
    assert_eq!(snapshot(&storage).await, before, "a dry run wrote");
    let got = admin_call(&app, "GET", &format!("{CM_PATH}/x"), None).await;
    assert_eq!(got.json(), created);
}

// R-RES-193: a dry-run update fails as the update would: a stale resourceVersion is 409, an
// invalid change 422, a missing object 404.
#[tokio::test]
async fn dry_run_update_keeps_the_error_codes() {
    let (app, storage) = app().await;
    let created = admin_call(&app, "POST", CM_PATH, Some(&cm("x")))
        .await
        .json();
    let uid = created["metadata"]["uid"].as_str().expect("uid").to_owned();
    let before = snapshot(&storage).await;
    let path = format!("{CM_PATH}/x?dryRun=All");
    let stale = admin_call(&app, "PUT", &path, Some(&cm_with("x", "2", Some("1")))).await;
    assert_status(&stale, 409, "Conflict");
    let mut other_uid: Value = serde_json::from_str(&cm("x")).expect("json");
    other_uid["metadata"]["uid"] = format!("{uid}-other").into();
    let immutable = admin_call(&app, "PUT", &path, Some(&other_uid.to_string())).await;
    assert_eq!(
        assert_status(&immutable, 422, "Invalid")["details"]["causes"][0]["field"],
        "metadata.uid"
    );
    let missing = admin_call(
        &app,
        "PUT",
        &format!("{CM_PATH}/y?dryRun=All"),
        Some(&cm("y")),
    )
    .await;
    assert_status(&missing, 404, "NotFound");
    assert_eq!(snapshot(&storage).await, before);
}

// R-RES-192, R-RES-193: a dry-run delete answers the Status a delete would and the object
// stays; a missing object is 404, a failed precondition 409.
#[tokio::test]
async fn dry_run_delete_answers_like_a_delete_and_removes_nothing() {
    let (app, storage) = app().await;
    let created = admin_call(&app, "POST", CM_PATH, Some(&cm("x")))
        .await
        .json();
    let before = snapshot(&storage).await;
    let dry = admin_call(&app, "DELETE", &format!("{CM_PATH}/x?dryRun=All"), None).await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.text());
    let s = dry.json();
    assert_eq!(s["kind"], "Status");
    assert_eq!(s["status"], "Success");
    assert_eq!(s["details"]["name"], "x");
    assert_eq!(s["details"]["uid"], created["metadata"]["uid"]);
    let missing = admin_call(&app, "DELETE", &format!("{CM_PATH}/y?dryRun=All"), None).await;
    assert_status(&missing, 404, "NotFound");
    let precondition = admin_call(
        &app,
        "DELETE",
        &format!("{CM_PATH}/x"),
        Some(r#"{"dryRun":["All"],"preconditions":{"uid":"other"}}"#),
    )
    .await;
    assert_status(&precondition, 409, "Conflict");
    assert_eq!(snapshot(&storage).await, before, "a dry run wrote");
    let got = admin_call(&app, "GET", &format!("{CM_PATH}/x"), None).await;
    assert_eq!(got.json(), created);
}

// R-RES-060, R-RES-061, R-RES-193: with finalizers, a dry-run delete answers the object
// marked with deletionTimestamp at its current resourceVersion, and a dry-run update that
// drops the last finalizer of a deleted object answers it without them; neither is stored.
#[tokio::test]
async fn dry_runs_take_the_finalizer_decisions_without_storing_them() {
    let (app, storage) = app().await;
    let body = r#"{"metadata":{"name":"held","finalizers":["example.com/hold"]}}"#;
    let created = admin_call(&app, "POST", CM_PATH, Some(body)).await.json();
    let path = format!("{CM_PATH}/held");
    let before = snapshot(&storage).await;
    let dry = admin_call(&app, "DELETE", &format!("{path}?dryRun=All"), None).await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.text());
    let d = dry.json();
    assert_eq!(d["kind"], "ConfigMap");
    assert!(d["metadata"]["deletionTimestamp"].is_string(), "{d}");
    assert_eq!(
        d["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert_eq!(snapshot(&storage).await, before, "a dry run wrote");

    let marked = admin_call(&app, "DELETE", &path, None).await.json();
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    let before = snapshot(&storage).await;
    let mut released = marked.clone();
    released["metadata"]["finalizers"] = json!([]);
    let dry = admin_call(
        &app,
        "PUT",
        &format!("{path}?dryRun=All"),
        Some(&released.to_string()),
    )
    .await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.text());
    let d = dry.json();
    assert_eq!(d["metadata"]["finalizers"], json!([]), "{d}");
    assert_eq!(
        d["metadata"]["resourceVersion"],
        marked["metadata"]["resourceVersion"]
    );
    assert_eq!(snapshot(&storage).await, before, "a dry run wrote");
    let got = admin_call(&app, "GET", &path, None).await;
    assert_eq!(got.json(), marked);
}

// R-RES-093, R-RES-192, R-RES-193: a dry-run deletecollection answers the list it would
// delete and deletes none of it.
#[tokio::test]
async fn dry_run_delete_collection_deletes_nothing() {
    let (app, storage) = app().await;
    admin_call(&app, "POST", CM_PATH, Some(&cm("a"))).await;
    admin_call(&app, "POST", CM_PATH, Some(&cm("b"))).await;
    let before = snapshot(&storage).await;
    let dry = admin_call(&app, "DELETE", &format!("{CM_PATH}?dryRun=All"), None).await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.text());
    let l = dry.json();
    assert_eq!(l["kind"], "ConfigMapList");
    let names: Vec<&str> = l["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(snapshot(&storage).await, before, "a dry run wrote");
    let list = admin_call(&app, "GET", CM_PATH, None).await.json();
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2));
}

// R-RES-194: a watch open across dry runs of every verb sees no event: the first it gets is
// the real write that follows them.
#[tokio::test]
async fn a_watch_sees_no_event_from_dry_runs() {
    let (app, storage) = app().await;
    let created = admin_call(&app, "POST", CM_PATH, Some(&cm("x")))
        .await
        .json();
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    let mut watch = storage
        .watch("/registry/", storage.revision().await)
        .await
        .expect("watch");
    let dry_runs = [
        ("POST", format!("{CM_PATH}?dryRun=All"), Some(cm("y"))),
        (
            "PUT",
            format!("{CM_PATH}/x?dryRun=All"),
            Some(cm_with("x", "2", Some(&rv))),
        ),
        ("DELETE", format!("{CM_PATH}/x?dryRun=All"), None),
        ("DELETE", format!("{CM_PATH}?dryRun=All"), None),
    ];
    for (method, path, body) in &dry_runs {
        let reply = admin_call(&app, method, path, body.as_deref()).await;
        assert!(
            reply.status.is_success(),
            "{method} {path}: {}",
            reply.text()
        );
    }
    let (real, batch) = real_create_is_next_event(&app, watch.as_mut()).await;
    assert_eq!(
        batch.revision.to_string(),
        real.json()["metadata"]["resourceVersion"]
            .as_str()
            .expect("rv")
    );
}

// R-RES-051: `dryRun` values other than `All` are 422 on the options of the verb, before the
// body is read, and nothing is written.
#[tokio::test]
async fn other_dry_run_values_are_422_on_every_verb() {
    let (app, storage) = app().await;
    admin_call(&app, "POST", CM_PATH, Some(&cm("x"))).await;
    let before = snapshot(&storage).await;
    for value in ["Bogus", "", "all"] {
        for (method, path, body, kind) in [
            ("POST", CM_PATH.to_owned(), Some(cm("y")), "CreateOptions"),
            (
                "PUT",
                format!("{CM_PATH}/x"),
                Some(cm_with("x", "2", None)),
                "UpdateOptions",
            ),
            ("DELETE", format!("{CM_PATH}/x"), None, "DeleteOptions"),
            ("DELETE", CM_PATH.to_owned(), None, "DeleteOptions"),
        ] {
            let url = format!("{path}?dryRun={value}");
            let reply = admin_call(&app, method, &url, body.as_deref()).await;
            let s = assert_status(&reply, 422, "Invalid");
            assert_eq!(s["details"]["kind"], kind, "{method} {url}");
            assert_eq!(s["details"]["group"], "meta.k8s.io");
            assert_eq!(s["details"]["causes"][0]["field"], "dryRun");
            assert_eq!(
                s["details"]["causes"][0]["reason"],
                "FieldValueNotSupported"
            );
        }
    }
    assert_eq!(snapshot(&storage).await, before);
}

// R-RES-196: a dry run is authorized as the same write: a user who may not write is refused
// with the same 403 as without dryRun, naming the same verb.
#[tokio::test]
async fn dry_runs_are_authorized_like_the_write() {
    let (app, storage) = app().await;
    admin_call(&app, "POST", CM_PATH, Some(&cm("x"))).await;
    let before = snapshot(&storage).await;
    for (method, path, body) in [
        ("POST", CM_PATH.to_owned(), Some(cm("y"))),
        ("PUT", format!("{CM_PATH}/x"), Some(cm("x"))),
        ("DELETE", format!("{CM_PATH}/x"), None),
        ("DELETE", CM_PATH.to_owned(), None),
    ] {
        let real = call(&app, method, &path, body.as_deref(), Some(bob())).await;
        let dry = call(
            &app,
            method,
            &format!("{path}?dryRun=All"),
            body.as_deref(),
            Some(bob()),
        )
        .await;
        let real = assert_status(&real, 403, "Forbidden");
        let dry = assert_status(&dry, 403, "Forbidden");
        assert_eq!(dry["message"], real["message"], "{method} {path}");
    }
    assert_eq!(snapshot(&storage).await, before);
}

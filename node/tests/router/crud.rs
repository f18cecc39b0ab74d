//! Every verb served, end to end: create, get, list, update, delete, generateName,
//! namespaces.

use serde_json::Value;
use serde_json::json;

use super::*;

// R-RES-001, R-RES-019, R-RES-020, R-RES-022, R-RES-023, R-RES-024, R-RES-025, R-RES-083,
// R-RES-087, R-RES-122
#[tokio::test]
async fn create_then_get_returns_the_object_with_server_metadata() {
    let (app, _) = app().await;
    let created = admin_call(&app, "POST", CM_PATH, Some(&cm("x"))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let c = created.json();
    assert_eq!(c["apiVersion"], "v1");
    assert_eq!(c["kind"], "ConfigMap");
    assert_eq!(c["metadata"]["namespace"], "default");
    assert_eq!(c["data"]["a"], "1");
    let uid = c["metadata"]["uid"].as_str().expect("uid");
    assert_eq!(
        uuid::Uuid::parse_str(uid).map(|u| u.get_version_num()),
        Ok(4)
    );
    let ts = c["metadata"]["creationTimestamp"]
        .as_str()
        .expect("timestamp");
    assert!(
        chrono::DateTime::parse_from_rfc3339(ts).is_ok() && ts.ends_with('Z') && ts.len() == 20,
        "{ts}"
    );
    let rv = c["metadata"]["resourceVersion"].as_str().expect("rv");
    assert!(rv.parse::<u64>().is_ok());
    assert!(
        c["metadata"].get("generation").is_none(),
        "ConfigMaps have no generation"
    );

    let got = admin_call(&app, "GET", &format!("{CM_PATH}/x"), None).await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.json(), c, "a read returns what the create answered");
    let again = admin_call(&app, "GET", &format!("{CM_PATH}/x?resourceVersion=0"), None).await;
    assert_eq!(
        again.json()["metadata"]["resourceVersion"],
        rv,
        "reads do not change it"
    );
    let not_older = admin_call(
        &app,
        "GET",
        &format!("{CM_PATH}/x?resourceVersion={rv}"),
        None,
    )
    .await;
    assert_eq!(not_older.status, StatusCode::OK);
}

// R-RES-006, R-RES-017, R-RES-032, R-RES-033, R-RES-037, R-RES-079, R-RES-084
#[tokio::test]
async fn lists_in_a_namespace_and_across_namespaces() {
    let (app, storage) = app().await;
    admin_call(
        &app,
        "POST",
        "/api/v1/namespaces",
        Some(r#"{"metadata":{"name":"other"}}"#),
    )
    .await;
    admin_call(&app, "POST", CM_PATH, Some(&cm("a"))).await;
    admin_call(&app, "POST", CM_PATH, Some(&cm("b"))).await;
    let o = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces/other/configmaps",
        Some(&cm("c")),
    )
    .await;
    assert_eq!(o.status, StatusCode::CREATED);

    let list = admin_call(&app, "GET", CM_PATH, None).await.json();
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["apiVersion"], "v1");
    assert_eq!(
        list["metadata"]["resourceVersion"],
        storage.revision().await.to_string()
    );
    let names: Vec<&str> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, vec!["a", "b"]);
    for item in list["items"].as_array().expect("items") {
        assert_eq!(item["kind"], "ConfigMap");
        assert!(item["metadata"]["resourceVersion"].is_string());
    }
    let a_rv = &list["items"][0]["metadata"]["resourceVersion"];
    assert_ne!(
        a_rv, &list["metadata"]["resourceVersion"],
        "items keep their own version"
    );

    let all = admin_call(&app, "GET", "/api/v1/configmaps", None)
        .await
        .json();
    assert_eq!(all["items"].as_array().map(Vec::len), Some(3));
    let empty = admin_call(
        &app,
        "GET",
        "/api/v1/namespaces/kube-public/configmaps",
        None,
    )
    .await
    .json();
    assert_eq!(empty["items"], json!([]));
}

// R-RES-069, R-RES-088, R-RES-024
#[tokio::test]
async fn update_with_current_version_then_stale_version_conflicts() {
    let (app, _) = app().await;
    let c = admin_call(&app, "POST", CM_PATH, Some(&cm("x")))
        .await
        .json();
    let mut next = c.clone();
    next["data"]["a"] = "2".into();
    let updated = admin_call(
        &app,
        "PUT",
        &format!("{CM_PATH}/x"),
        Some(&next.to_string()),
    )
    .await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());
    let u = updated.json();
    assert_eq!(u["data"]["a"], "2");
    assert_ne!(
        u["metadata"]["resourceVersion"],
        c["metadata"]["resourceVersion"]
    );
    assert_eq!(u["metadata"]["uid"], c["metadata"]["uid"]);
    assert_eq!(
        u["metadata"]["creationTimestamp"],
        c["metadata"]["creationTimestamp"]
    );

    // R-RES-070: the first version is stale now.
    next["data"]["a"] = "3".into();
    let stale = admin_call(
        &app,
        "PUT",
        &format!("{CM_PATH}/x"),
        Some(&next.to_string()),
    )
    .await;
    let s = assert_status(&stale, 409, "Conflict");
    assert_eq!(
        s["message"],
        "Operation cannot be fulfilled on configmaps \"x\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(s["details"], json!({"name":"x","kind":"configmaps"}));
    let after = admin_call(&app, "GET", &format!("{CM_PATH}/x"), None)
        .await
        .json();
    assert_eq!(after, u, "a conflicting update changes nothing");

    // Without resourceVersion the update is unconditional (CHECKLIST table, R-RES-197).
    next["metadata"]
        .as_object_mut()
        .map(|m| m.remove("resourceVersion"));
    let blind = admin_call(
        &app,
        "PUT",
        &format!("{CM_PATH}/x"),
        Some(&next.to_string()),
    )
    .await;
    assert_eq!(blind.status, StatusCode::OK);
    assert_eq!(blind.json()["data"]["a"], "3");

    // An update that changes nothing keeps the version.
    let same = blind.json();
    let noop = admin_call(
        &app,
        "PUT",
        &format!("{CM_PATH}/x"),
        Some(&same.to_string()),
    )
    .await;
    assert_eq!(
        noop.json()["metadata"]["resourceVersion"],
        same["metadata"]["resourceVersion"]
    );
}

// R-RES-089 (CHECKLIST table: no create-on-update for these kinds)
#[tokio::test]
async fn update_of_a_missing_object_is_not_found() {
    let (app, storage) = app().await;
    let before = storage.keys().await;
    let r = admin_call(&app, "PUT", &format!("{CM_PATH}/ghost"), Some(&cm("ghost"))).await;
    let s = assert_status(&r, 404, "NotFound");
    assert_eq!(s["message"], "configmaps \"ghost\" not found");
    assert_eq!(storage.keys().await, before);
}

// R-RES-062, R-RES-092, R-RES-013, R-RES-023
#[tokio::test]
async fn delete_removes_and_the_name_can_be_reused() {
    let (app, _) = app().await;
    let c = admin_call(&app, "POST", CM_PATH, Some(&cm("x")))
        .await
        .json();
    let d = admin_call(&app, "DELETE", &format!("{CM_PATH}/x"), None).await;
    assert_eq!(d.status, StatusCode::OK);
    assert_eq!(
        d.json(),
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success",
               "details":{"name":"x","kind":"configmaps","uid":c["metadata"]["uid"]}})
    );
    let gone = admin_call(&app, "GET", &format!("{CM_PATH}/x"), None).await;
    assert_status(&gone, 404, "NotFound");
    let again = admin_call(&app, "DELETE", &format!("{CM_PATH}/x"), None).await;
    assert_status(&again, 404, "NotFound");
    let reborn = admin_call(&app, "POST", CM_PATH, Some(&cm("x")))
        .await
        .json();
    assert_ne!(reborn["metadata"]["uid"], c["metadata"]["uid"]);
}

// R-RES-055
#[tokio::test]
async fn delete_preconditions_are_honoured() {
    let (app, _) = app().await;
    let c = admin_call(&app, "POST", CM_PATH, Some(&cm("x")))
        .await
        .json();
    let path = format!("{CM_PATH}/x");
    let wrong_uid = admin_call(
        &app,
        "DELETE",
        &path,
        Some(r#"{"preconditions":{"uid":"nope"}}"#),
    )
    .await;
    let s = assert_status(&wrong_uid, 409, "Conflict");
    assert!(
        s["message"]
            .as_str()
            .is_some_and(|m| m.contains("Precondition failed: UID in precondition: nope")),
        "{s}"
    );
    let wrong_rv = admin_call(
        &app,
        "DELETE",
        &path,
        Some(r#"{"preconditions":{"resourceVersion":"1"}}"#),
    )
    .await;
    assert_status(&wrong_rv, 409, "Conflict");
    assert_eq!(
        admin_call(&app, "GET", &path, None).await.status,
        StatusCode::OK
    );
    let body = json!({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{
        "uid": c["metadata"]["uid"], "resourceVersion": c["metadata"]["resourceVersion"]}});
    let ok = admin_call(&app, "DELETE", &path, Some(&body.to_string())).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text());
}

// R-RES-060, R-RES-061, R-RES-026
#[tokio::test]
async fn finalizers_hold_a_deleted_object_until_removed() {
    let (app, _) = app().await;
    let body = r#"{"metadata":{"name":"f","finalizers":["example.com/hold"]},"data":{}}"#;
    admin_call(&app, "POST", CM_PATH, Some(body)).await;
    let path = format!("{CM_PATH}/f");
    let marked = admin_call(&app, "DELETE", &path, None).await;
    assert_eq!(marked.status, StatusCode::OK);
    let m = marked.json();
    let ts = m["metadata"]["deletionTimestamp"].clone();
    assert!(ts.is_string(), "{m}");
    let second = admin_call(&app, "DELETE", &path, None).await.json();
    assert_eq!(
        second["metadata"]["deletionTimestamp"], ts,
        "later deletes do not move it"
    );
    let mut release = admin_call(&app, "GET", &path, None).await.json();
    release["metadata"]["finalizers"] = json!([]);
    let r = admin_call(&app, "PUT", &path, Some(&release.to_string())).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_status(&admin_call(&app, "GET", &path, None).await, 404, "NotFound");
}

// R-RES-021, R-RES-011
#[tokio::test]
async fn generate_name_appends_a_random_suffix() {
    let (app, _) = app().await;
    let body = r#"{"metadata":{"generateName":"web-"},"data":{}}"#;
    let a = admin_call(&app, "POST", CM_PATH, Some(body)).await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.text());
    let b = admin_call(&app, "POST", CM_PATH, Some(body)).await.json();
    let a = a.json();
    let name = a["metadata"]["name"].as_str().expect("name");
    assert_eq!(name.len(), "web-".len() + 5);
    assert!(name.starts_with("web-"));
    assert!(
        name[4..]
            .bytes()
            .all(|c| b"bcdfghjklmnpqrstvwxz2456789".contains(&c))
    );
    assert_ne!(a["metadata"]["name"], b["metadata"]["name"]);
    assert_eq!(a["metadata"]["generateName"], "web-");

    let nameless = admin_call(&app, "POST", CM_PATH, Some(r#"{"data":{}}"#)).await;
    let s = assert_status(&nameless, 422, "Invalid");
    assert_eq!(s["details"]["causes"][0]["field"], "metadata.name");
    assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueRequired");
}

// R-RES-080, R-RES-014, R-RES-073
#[tokio::test]
async fn namespaces_are_cluster_scoped_with_kubernetes_lifecycle() {
    let (app, _) = app().await;
    let list = admin_call(&app, "GET", "/api/v1/namespaces", None)
        .await
        .json();
    let names: Vec<&Value> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|n| &n["metadata"]["name"])
        .collect();
    assert_eq!(
        names,
        vec!["default", "kube-node-lease", "kube-public", "kube-system"]
    );

    let created = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces",
        Some(r#"{"metadata":{"name":"team","namespace":"ignored"}}"#),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let ns = created.json();
    assert_eq!(ns["kind"], "Namespace");
    assert!(ns["metadata"].get("namespace").is_none());
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(ns["status"]["phase"], "Active");
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "team"
    );
    let got = admin_call(&app, "GET", "/api/v1/namespaces/team", None).await;
    assert_eq!(got.json(), ns);

    let dup = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces",
        Some(r#"{"metadata":{"name":"team"}}"#),
    )
    .await;
    assert_eq!(
        assert_status(&dup, 409, "AlreadyExists")["message"],
        "namespaces \"team\" already exists"
    );
    let bad = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces",
        Some(r#"{"metadata":{"name":"a.b"}}"#),
    )
    .await;
    assert_status(&bad, 422, "Invalid");

    let deleting = admin_call(&app, "DELETE", "/api/v1/namespaces/team", None).await;
    assert_eq!(deleting.status, StatusCode::OK);
    let d = deleting.json();
    assert_eq!(d["status"]["phase"], "Terminating");
    assert!(d["metadata"]["deletionTimestamp"].is_string());
    let refused = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces/team/configmaps",
        Some(&cm("late")),
    )
    .await;
    let s = assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        s["message"],
        "configmaps \"late\" is forbidden: unable to create new content in namespace team because it is being terminated"
    );
    let again = admin_call(&app, "DELETE", "/api/v1/namespaces/team", None).await;
    assert_status(&again, 409, "Conflict");
}

// R-RES-075, R-RES-012
#[tokio::test]
async fn secrets_service_accounts_and_events_are_served() {
    let (app, _) = app().await;
    let secret =
        r#"{"metadata":{"name":"s"},"stringData":{"user":"admin"},"data":{"pw":"c2VjcmV0"}}"#;
    let s = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces/default/secrets",
        Some(secret),
    )
    .await;
    assert_eq!(s.status, StatusCode::CREATED, "{}", s.text());
    let s = s.json();
    assert_eq!(s["data"], json!({"pw":"c2VjcmV0","user":"YWRtaW4="}));
    assert!(s.get("stringData").is_none());
    assert_eq!(s["type"], "Opaque");
    let mut retyped = s.clone();
    retyped["type"] = "example.com/other".into();
    let r = admin_call(
        &app,
        "PUT",
        "/api/v1/namespaces/default/secrets/s",
        Some(&retyped.to_string()),
    )
    .await;
    let st = assert_status(&r, 422, "Invalid");
    assert_eq!(st["details"]["causes"][0]["field"], "type");

    let sa = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces/default/serviceaccounts",
        Some(r#"{"metadata":{"name":"robot"}}"#),
    )
    .await;
    assert_eq!(sa.status, StatusCode::CREATED);
    let ev = r#"{"metadata":{"name":"e1"},"involvedObject":{"kind":"ConfigMap","name":"x","namespace":"default"},"reason":"Test","message":"hi"}"#;
    let e = admin_call(&app, "POST", "/api/v1/namespaces/default/events", Some(ev)).await;
    assert_eq!(e.status, StatusCode::CREATED, "{}", e.text());
    assert_eq!(e.json()["reason"], "Test");
}

// R-RES-031
#[tokio::test]
async fn immutable_config_maps_reject_data_changes() {
    let (app, _) = app().await;
    let c = admin_call(
        &app,
        "POST",
        CM_PATH,
        Some(r#"{"metadata":{"name":"i"},"immutable":true,"data":{"a":"1"}}"#),
    )
    .await
    .json();
    let mut next = c.clone();
    next["data"]["a"] = "2".into();
    let r = admin_call(
        &app,
        "PUT",
        &format!("{CM_PATH}/i"),
        Some(&next.to_string()),
    )
    .await;
    let s = assert_status(&r, 422, "Invalid");
    assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueForbidden");
    assert_eq!(s["details"]["causes"][0]["field"], "data");
}

// R-RES-005, R-RES-078, R-RES-073: a namespace is removed once `finalize` empties its
// finalizers; `status` writes only the status.
#[tokio::test]
async fn namespace_finalize_and_status_subresources() {
    let (app, _) = app().await;
    admin_call(
        &app,
        "POST",
        "/api/v1/namespaces",
        Some(r#"{"metadata":{"name":"gone"}}"#),
    )
    .await;
    let status = admin_call(&app, "GET", "/api/v1/namespaces/gone/status", None).await;
    assert_eq!(status.status, StatusCode::OK);
    let mut ns = status.json();
    ns["spec"]["finalizers"] = json!([]);
    ns["status"]["conditions"] = json!([{"type":"Checked","status":"True"}]);
    let via_status = admin_call(
        &app,
        "PUT",
        "/api/v1/namespaces/gone/status",
        Some(&ns.to_string()),
    )
    .await;
    assert_eq!(via_status.status, StatusCode::OK, "{}", via_status.text());
    let s = via_status.json();
    assert_eq!(s["status"]["conditions"][0]["type"], "Checked");
    assert_eq!(
        s["spec"]["finalizers"],
        json!(["kubernetes"]),
        "status does not write spec"
    );

    let deleting = admin_call(&app, "DELETE", "/api/v1/namespaces/gone", None)
        .await
        .json();
    assert_eq!(deleting["status"]["phase"], "Terminating");
    let mut fin = deleting.clone();
    fin["spec"]["finalizers"] = json!([]);
    fin["status"]["phase"] = "Active".into();
    let r = admin_call(
        &app,
        "PUT",
        "/api/v1/namespaces/gone/finalize",
        Some(&fin.to_string()),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        r.json()["status"]["phase"],
        "Terminating",
        "finalize does not write status"
    );
    assert_status(
        &admin_call(&app, "GET", "/api/v1/namespaces/gone", None).await,
        404,
        "NotFound",
    );

    let get_finalize = admin_call(&app, "GET", "/api/v1/namespaces/default/finalize", None).await;
    assert_status(&get_finalize, 405, "MethodNotAllowed");
    let cm_status = admin_call(&app, "GET", &format!("{CM_PATH}/x/status"), None).await;
    assert_status(&cm_status, 404, "NotFound");
}

// R-RES-093, R-RES-096, R-RES-110
#[tokio::test]
async fn selectors_filter_lists_and_deletecollection() {
    let (app, _) = app().await;
    for (name, app_label) in [("a", "web"), ("b", "web"), ("c", "db")] {
        let body = json!({"metadata":{"name":name,"labels":{"app":app_label}}});
        admin_call(&app, "POST", CM_PATH, Some(&body.to_string())).await;
    }
    let names = |list: Value| -> Vec<String> {
        list["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                i["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    };
    let web = admin_call(
        &app,
        "GET",
        &format!("{CM_PATH}?labelSelector=app%3Dweb"),
        None,
    )
    .await
    .json();
    assert_eq!(names(web), vec!["a", "b"]);
    let not_a = admin_call(
        &app,
        "GET",
        &format!("{CM_PATH}?fieldSelector=metadata.name!%3Da"),
        None,
    )
    .await
    .json();
    assert_eq!(names(not_a), vec!["b", "c"]);
    let bad = admin_call(
        &app,
        "GET",
        &format!("{CM_PATH}?fieldSelector=spec.x%3D1"),
        None,
    )
    .await;
    assert_status(&bad, 400, "BadRequest");

    let deleted = admin_call(
        &app,
        "DELETE",
        &format!("{CM_PATH}?labelSelector=app%3Dweb"),
        None,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    let d = deleted.json();
    assert_eq!(d["kind"], "ConfigMapList");
    assert_eq!(names(d), vec!["a", "b"]);
    let left = admin_call(&app, "GET", CM_PATH, None).await.json();
    assert_eq!(names(left), vec!["c"]);
    let all_ns = admin_call(&app, "DELETE", "/api/v1/configmaps", None).await;
    assert_status(&all_ns, 405, "MethodNotAllowed");
}

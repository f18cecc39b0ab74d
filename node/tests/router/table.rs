//! Tables through the router (spec 000 "Table representation", "Media types and headers"):
//! get, list with paging and watch answered as `meta.<domain>` Tables in both flavors, the
//! rows' objects as `includeObject` asks, `v1beta1`, the columns of the built-in printers and
//! the default ones, and the fallback to JSON.

use serde_json::Value;
use serde_json::json;

use super::*;

const CM_PATH: &str = "/api/v1/namespaces/default/configmaps";

/// A Table Accept of `version` in `flavor`'s meta group.
fn table_accept(flavor: Flavor, version: &str) -> String {
    format!(
        "application/json;as=Table;v={version};g={}",
        flavor.meta_group()
    )
}

fn config_map(name: &str) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1", "b": "2"}})
        .to_string()
}

/// The names of a Table's columns.
fn column_names(table: &Value) -> Vec<&str> {
    table["columnDefinitions"]
        .as_array()
        .expect("column definitions")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect()
}

/// GET `path` with a Table Accept of `version`; must answer 200 with a Table.
async fn table(app: &Router, flavor: Flavor, path: &str, version: &str) -> Value {
    let accept = table_accept(flavor, version);
    let r = get_with(app, path, &[("accept", &accept)]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(content_type(&r), accept);
    let t = r.json();
    assert_eq!(t["kind"], "Table", "{t}");
    assert_eq!(
        t["apiVersion"],
        format!("{}/{version}", flavor.meta_group())
    );
    t
}

// R-RES-131, R-RES-040
#[tokio::test]
async fn get_answers_a_table_of_one_row_in_both_flavors() {
    for flavor in [Flavor::Platform, Flavor::Kubernetes] {
        let (app, _) = app_in(flavor).await;
        let cm = created(&app, CM_PATH, &config_map("settings")).await;
        let t = table(&app, flavor, &format!("{CM_PATH}/settings"), "v1").await;
        assert_eq!(column_names(&t), ["Name", "Data", "Age"]);
        assert_eq!(t["columnDefinitions"][0]["type"], "string");
        assert_eq!(t["columnDefinitions"][0]["format"], "name");
        assert_eq!(
            t["metadata"]["resourceVersion"],
            cm["metadata"]["resourceVersion"]
        );
        let row = &t["rows"][0];
        assert_eq!(row["cells"][0], "settings");
        assert_eq!(row["cells"][1], 2);
        assert!(
            row["cells"][2]
                .as_str()
                .is_some_and(|age| age.ends_with('s')),
            "{row}"
        );
        assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(
            row["object"]["apiVersion"],
            format!("{}/v1", flavor.meta_group())
        );
        assert_eq!(row["object"]["metadata"]["uid"], cm["metadata"]["uid"]);
    }
}

// R-RES-131
#[tokio::test]
async fn list_pages_carry_continue_and_columns_on_every_page() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    for name in ["a", "b", "c"] {
        created(&app, CM_PATH, &config_map(name)).await;
    }
    let first = table(&app, flavor, &format!("{CM_PATH}?limit=2"), "v1").await;
    assert_eq!(column_names(&first), ["Name", "Data", "Age"]);
    let names: Vec<&Value> = first["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["cells"][0])
        .collect();
    assert_eq!(names, [&json!("a"), &json!("b")]);
    assert_eq!(first["metadata"]["remainingItemCount"], 1);
    let token = first["metadata"]["continue"].as_str().expect("continue");
    let rv = first["metadata"]["resourceVersion"]
        .as_str()
        .expect("resourceVersion");
    assert!(!rv.is_empty());
    let next = table(
        &app,
        flavor,
        &format!("{CM_PATH}?limit=2&continue={token}"),
        "v1",
    )
    .await;
    assert_eq!(column_names(&next), ["Name", "Data", "Age"]);
    assert_eq!(next["rows"].as_array().unwrap().len(), 1);
    assert_eq!(next["rows"][0]["cells"][0], "c");
    assert!(next["metadata"].get("continue").is_none(), "{next}");
}

#[tokio::test]
async fn include_object_none_object_and_unknown_values() {
    let flavor = Flavor::Platform;
    let (app, _) = app_in(flavor).await;
    created(&app, CM_PATH, &config_map("a")).await;
    let none = table(&app, flavor, &format!("{CM_PATH}?includeObject=None"), "v1").await;
    assert_eq!(none["rows"][0]["object"], Value::Null);
    let whole = table(
        &app,
        flavor,
        &format!("{CM_PATH}?includeObject=Object"),
        "v1",
    )
    .await;
    let object = &whole["rows"][0]["object"];
    assert_eq!(
        (&object["kind"], &object["apiVersion"]),
        (&json!("ConfigMap"), &json!("v1"))
    );
    assert_eq!(object["data"], json!({"a": "1", "b": "2"}));
    let accept = table_accept(flavor, "v1");
    let bad = get_with(
        &app,
        &format!("{CM_PATH}/a?includeObject=All"),
        &[("accept", &accept)],
    )
    .await;
    let status = assert_status(&bad, 400, "BadRequest");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("includeObject"),
        "{status}"
    );
}

#[tokio::test]
async fn v1beta1_tables_and_their_row_metadata() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    created(&app, CM_PATH, &config_map("a")).await;
    let t = table(&app, flavor, CM_PATH, "v1beta1").await;
    assert_eq!(t["rows"][0]["object"]["apiVersion"], "meta.k8s.io/v1beta1");
}

// R-RES-041
#[tokio::test]
async fn kinds_without_a_printer_have_name_and_created_at() {
    for flavor in [Flavor::Platform, Flavor::Kubernetes] {
        let (app, _) = app_in(flavor).await;
        let path = format!(
            "/apis/rbac.authorization.{}/v1/namespaces/default/roles",
            flavor.group_domain()
        );
        let role = json!({"apiVersion": format!("rbac.authorization.{}/v1", flavor.group_domain()), "kind": "Role",
            "metadata": {"name": "reader"}, "rules": []});
        let made = created(&app, &path, &role.to_string()).await;
        let t = table(&app, flavor, &path, "v1").await;
        let types: Vec<(&Value, &Value)> = t["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (&c["name"], &c["type"]))
            .collect();
        assert_eq!(
            types,
            [
                (&json!("Name"), &json!("string")),
                (&json!("Created At"), &json!("date"))
            ]
        );
        assert_eq!(
            t["rows"][0]["cells"],
            json!(["reader", made["metadata"]["creationTimestamp"]])
        );
    }
}

#[tokio::test]
async fn pods_print_ready_status_restarts_and_the_wide_columns() {
    for flavor in [Flavor::Platform, Flavor::Kubernetes] {
        let (app, _) = app_in(flavor).await;
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        created(&app, "/api/v1/namespaces/default/pods", &pod.to_string()).await;
        let t = table(&app, flavor, "/api/v1/pods", "v1").await;
        assert_eq!(
            column_names(&t),
            [
                "Name",
                "Ready",
                "Status",
                "Restarts",
                "Age",
                "IP",
                "Node",
                "Nominated Node",
                "Readiness Gates"
            ]
        );
        let priorities: Vec<&Value> = t["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["priority"])
            .collect();
        assert_eq!(
            priorities,
            [
                &json!(0),
                &json!(0),
                &json!(0),
                &json!(0),
                &json!(0),
                &json!(1),
                &json!(1),
                &json!(1),
                &json!(1)
            ]
        );
        let cells = t["rows"][0]["cells"].as_array().expect("cells");
        assert_eq!(cells[0..2], [json!("web"), json!("0/1")]);
        assert_eq!(cells[3], "0");
        assert_eq!(
            cells[5..9],
            [
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>")
            ]
        );
    }
}

// R-RES-132: a target without Tables (a subresource) falls back to the JSON listed after the
// Table range. Moved from discovery.rs, where namespaces had no Table yet.
#[tokio::test]
async fn targets_without_tables_fall_back_to_json() {
    let (app, _) = app().await;
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let r = get_with(
        &app,
        "/api/v1/namespaces/default/status",
        &[("accept", accept)],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(content_type(&r), "application/json");
    assert_eq!(r.json()["kind"], "Namespace");
    let r = get_with(&app, "/api/v1/namespaces", &[("accept", accept)]).await;
    assert_eq!(r.json()["kind"], "Table");
}

// R-RES-137: only a Table is acceptable, and the target has none.
#[tokio::test]
async fn a_table_only_accept_for_a_target_without_tables_is_406() {
    let (app, _) = app().await;
    let accept = table_accept(Flavor::Kubernetes, "v1");
    let r = get_with(
        &app,
        "/api/v1/namespaces/default/status",
        &[("accept", &accept)],
    )
    .await;
    assert_status(&r, 406, "NotAcceptable");
}

#[tokio::test]
async fn errors_asked_as_tables_stay_json_statuses() {
    let (app, _) = app().await;
    let accept = table_accept(Flavor::Kubernetes, "v1");
    let r = get_with(&app, &format!("{CM_PATH}/missing"), &[("accept", &accept)]).await;
    assert_status(&r, 404, "NotFound");
}

/// The events of a watch of `query` on config maps that ends at once, asked as Tables.
async fn table_watch(app: &Router, flavor: Flavor, query: &str) -> Vec<Value> {
    let accept = table_accept(flavor, "v1");
    let path = format!("{CM_PATH}?watch=1&timeoutSeconds=-1&{query}");
    let r = get_with(app, &path, &[("accept", &accept)]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(content_type(&r), "application/json");
    r.text()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one event per line"))
        .collect()
}

#[tokio::test]
async fn watch_events_are_tables_with_columns_only_on_the_first() {
    for flavor in [Flavor::Platform, Flavor::Kubernetes] {
        let (app, _) = app_in(flavor).await;
        for name in ["a", "b"] {
            created(&app, CM_PATH, &config_map(name)).await;
        }
        let events = table_watch(&app, flavor, "resourceVersion=0").await;
        let summary: Vec<(&Value, &Value, &Value)> = events
            .iter()
            .map(|e| {
                (
                    &e["type"],
                    &e["object"]["kind"],
                    &e["object"]["rows"][0]["cells"][0],
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (&json!("ADDED"), &json!("Table"), &json!("a")),
                (&json!("ADDED"), &json!("Table"), &json!("b"))
            ]
        );
        assert_eq!(column_names(&events[0]["object"]), ["Name", "Data", "Age"]);
        assert_eq!(events[1]["object"]["columnDefinitions"], Value::Null);
        assert_eq!(
            events[1]["object"]["rows"].as_array().map(Vec::len),
            Some(1)
        );
        assert_eq!(
            events[0]["object"]["rows"][0]["object"]["kind"],
            "PartialObjectMetadata"
        );
    }
}

#[tokio::test]
async fn watch_bookmarks_are_tables_of_the_bookmark() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    created(&app, CM_PATH, &config_map("a")).await;
    let query = "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
    let events = table_watch(&app, flavor, query).await;
    assert_eq!(events.len(), 2, "{events:?}");
    let bookmark = &events[1];
    assert_eq!(bookmark["type"], "BOOKMARK");
    assert_eq!(bookmark["object"]["kind"], "Table");
    assert_eq!(bookmark["object"]["columnDefinitions"], Value::Null);
    assert!(
        bookmark["object"]["metadata"]["resourceVersion"]
            .as_str()
            .is_some_and(|rv| !rv.is_empty())
    );
    let partial = &bookmark["object"]["rows"][0]["object"];
    assert_eq!(
        partial["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
}

#[tokio::test]
async fn watch_with_an_unknown_include_object_is_400() {
    let (app, _) = app().await;
    let accept = table_accept(Flavor::Kubernetes, "v1");
    let r = get_with(
        &app,
        &format!("{CM_PATH}?watch=1&includeObject=Some"),
        &[("accept", &accept)],
    )
    .await;
    assert_status(&r, 400, "BadRequest");
}

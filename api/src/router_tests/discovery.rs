//! Discovery documents over HTTP, as kubectl asks for them.

use serde_json::json;

use super::*;

const KUBECTL_DISCOVERY_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

async fn discover(app: &Router, path: &str) -> Reply {
    let mut req = Request::builder()
        .method("GET")
        .uri(path)
        .header("accept", KUBECTL_DISCOVERY_ACCEPT)
        .body(Body::empty())
        .expect("request");
    req.extensions_mut().insert(admin());
    send(app, req).await
}

// R-RES-003, R-RES-019: documents generated from the table
#[tokio::test]
async fn legacy_discovery_documents() {
    let (app, _) = app().await;
    let api = discover(&app, "/api").await;
    assert_eq!(api.status, StatusCode::OK);
    // kubectl falls back to the legacy documents only when the type is not aggregated.
    assert_eq!(
        api.headers.get("content-type").map(|v| v.as_bytes()),
        Some(&b"application/json"[..])
    );
    assert_eq!(api.json(), json!({"kind":"APIVersions","versions":["v1"]}));

    let v1 = discover(&app, "/api/v1").await.json();
    assert_eq!(v1["kind"], "APIResourceList");
    assert_eq!(v1["groupVersion"], "v1");
    let names: Vec<&str> = v1["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    for n in [
        "configmaps",
        "events",
        "namespaces",
        "secrets",
        "serviceaccounts",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    let ns = v1["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|e| e["name"] == "namespaces"))
        .expect("namespaces");
    assert_eq!(ns["namespaced"], false);
    assert_eq!(ns["shortNames"], json!(["ns"]));
    assert!(
        ns["verbs"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("get")))
    );

    let apis = discover(&app, "/apis").await.json();
    assert_eq!(apis["kind"], "APIGroupList");
    let groups: Vec<&str> = apis["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    for g in [
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "storage.k8s.io",
    ] {
        assert!(groups.contains(&g), "{g} missing from {groups:?}");
    }
    assert_eq!(
        discover(&app, "/apis/apps").await.json()["preferredVersion"]["groupVersion"],
        "apps/v1"
    );
    let apps = discover(&app, "/apis/apps/v1").await.json();
    assert_eq!(apps["groupVersion"], "apps/v1");
    assert_status(&discover(&app, "/apis/apps/v2").await, 404, "NotFound");
    assert_status(&discover(&app, "/apis/example.com").await, 404, "NotFound");
    assert_status(&discover(&app, "/api/v2").await, 404, "NotFound");
}

// kubectl asks for Tables; plain JSON is an acceptable answer until Table encoding exists.
// R-RES-132
#[tokio::test]
async fn table_accept_header_gets_json() {
    let (app, _) = app().await;
    let mut req = Request::builder()
        .method("GET")
        .uri("/api/v1/namespaces")
        .header(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )
        .body(Body::empty())
        .expect("request");
    req.extensions_mut().insert(admin());
    let r = send(&app, req).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["kind"], "NamespaceList");
}

#[tokio::test]
async fn version_document() {
    let (app, _) = app().await;
    let v = call(&app, "GET", "/version", None, None).await.json();
    assert_eq!(v["major"], "1");
    // k8s-openapi's newest API, which the table serves.
    assert_eq!(v["minor"], "37");
    assert_eq!(v["gitVersion"], "v1.37.0");
    assert!(v["platform"].as_str().is_some_and(|p| p.contains('/')));
}

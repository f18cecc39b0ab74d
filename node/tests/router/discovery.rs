//! Discovery documents over HTTP, as kubectl asks for them: the legacy documents, aggregated
//! discovery negotiated through `Accept`, and `ETag`/304.

use serde_json::json;

use super::*;
use apiary_api::registry::RuntimeConfig;

const KUBECTL_DISCOVERY_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

const AGGREGATED_K8S: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

const AGGREGATED_PLATFORM: &str =
    "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList";

/// The server of `flavor` with `runtime_config` (`--runtime-config` values).
async fn flavored_app(flavor: Flavor, runtime_config: &[&str]) -> Router {
    let (storage, _) = backend_in(flavor).await;
    let mut config = ApiConfig::new(flavor, Arc::new(AlwaysReady));
    config.runtime_config =
        RuntimeConfig::parse(runtime_config.iter().copied(), flavor).expect("runtime config");
    apiary_api::router(storage, config)
}

async fn discover(app: &Router, path: &str) -> Reply {
    get_with(app, path, &[("accept", "application/json")]).await
}

fn header<'a>(reply: &'a Reply, name: &str) -> Option<&'a str> {
    reply.headers.get(name).and_then(|v| v.to_str().ok())
}

fn names<'a>(list: &'a Value, field: &str, name: &str) -> Vec<&'a str> {
    list[field]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|e| e[name].as_str())
        .collect()
}

/// The named groups served by default, in upstream `/apis` order.
const KUBERNETES_GROUPS: [&str; 21] = [
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
    "storagemigration.k8s.io",
];

// R-RES-003, R-RES-010, R-RES-019: documents generated from the table
#[tokio::test]
async fn legacy_discovery_documents() {
    let (app, _) = app().await;
    let api = discover(&app, "/api").await;
    assert_eq!(api.status, StatusCode::OK);
    assert_eq!(header(&api, "content-type"), Some("application/json"));
    assert_eq!(header(&api, "vary"), Some("accept"));
    assert_eq!(api.json(), json!({"kind":"APIVersions","versions":["v1"]}));

    let v1 = discover(&app, "/api/v1").await;
    assert_eq!(header(&v1, "vary"), None, "only /api and /apis negotiate");
    let v1 = v1.json();
    assert_eq!(v1["kind"], "APIResourceList");
    assert_eq!(v1["groupVersion"], "v1");
    let resources = names(&v1, "resources", "name");
    for n in [
        "configmaps",
        "events",
        "namespaces",
        "secrets",
        "serviceaccounts",
        "pods/status",
    ] {
        assert!(resources.contains(&n), "{n} missing from {resources:?}");
    }
    let entry = |name: &str| {
        v1["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|e| e["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("{name} listed"))
    };
    assert_eq!(
        entry("configmaps"),
        json!({
            "name": "configmaps",
            "singularName": "configmap",
            "namespaced": true,
            "kind": "ConfigMap",
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update",
                      "watch"],
            "shortNames": ["cm"],
            "storageVersionHash": "qFsyl6wFWjQ=",
        })
    );
    assert_eq!(entry("pods")["storageVersionHash"], "xPOwRZ+Yhw8=");
    assert_eq!(entry("pods")["categories"], json!(["all"]));
    let ns = entry("namespaces");
    assert_eq!(ns["namespaced"], false);
    assert_eq!(ns["shortNames"], json!(["ns"]));
    assert!(
        !ns["verbs"]
            .as_array()
            .expect("verbs")
            .contains(&json!("deletecollection"))
    );
    assert_eq!(
        entry("pods/status"),
        json!({"name": "pods/status", "singularName": "", "namespaced": true, "kind": "Pod",
               "verbs": ["get", "patch", "update"]})
    );

    let apps = discover(&app, "/apis/apps/v1").await.json();
    assert_eq!(apps["groupVersion"], "apps/v1");
    let deploy = apps["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|e| e["name"] == "deployments"))
        .expect("deployments");
    assert_eq!(deploy["shortNames"], json!(["deploy"]));
    let expected_hash = apiary_api::discovery::storage_version_hash("apps", "v1", "Deployment");
    assert_eq!(deploy["storageVersionHash"], expected_hash.as_str());
    assert_status(&discover(&app, "/apis/apps/v2").await, 404, "NotFound");
    assert_status(&discover(&app, "/apis/example.com").await, 404, "NotFound");
    assert_status(&discover(&app, "/api/v2").await, 404, "NotFound");
}

// R-VER-059, R-VER-061, R-VER-095: the groups in Kubernetes' priority order, off versions absent
#[tokio::test]
async fn groups_in_priority_order_with_preferred_versions() {
    let (app, _) = app().await;
    let apis = discover(&app, "/apis").await;
    assert_eq!(header(&apis, "vary"), Some("accept"));
    let apis = apis.json();
    assert_eq!(apis["kind"], "APIGroupList");
    assert_eq!(names(&apis, "groups", "name"), KUBERNETES_GROUPS);
    let autoscaling = discover(&app, "/apis/autoscaling").await.json();
    assert_eq!(
        autoscaling,
        json!({
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": "autoscaling",
            "versions": [
                {"groupVersion": "autoscaling/v2", "version": "v2"},
                {"groupVersion": "autoscaling/v1", "version": "v1"}
            ],
            "preferredVersion": {"groupVersion": "autoscaling/v2", "version": "v2"},
        })
    );
    let scheduling = discover(&app, "/apis/scheduling.k8s.io").await.json();
    assert_eq!(
        names(&scheduling, "versions", "version"),
        ["v1"],
        "beta and alpha are off by default"
    );
}

// R-VER-059, R-VER-060, R-VER-064: versions enabled at start are listed GA, beta, alpha; GA
// stays preferred
#[tokio::test]
async fn enabled_versions_follow_priority() {
    let app = flavored_app(
        Flavor::Kubernetes,
        &["scheduling.k8s.io/v1alpha3,scheduling.k8s.io/v1beta1"],
    )
    .await;
    let scheduling = discover(&app, "/apis/scheduling.k8s.io").await.json();
    assert_eq!(
        names(&scheduling, "versions", "version"),
        ["v1", "v1beta1", "v1alpha3"]
    );
    assert_eq!(scheduling["preferredVersion"]["version"], "v1");
    let beta = discover(&app, "/apis/scheduling.k8s.io/v1beta1")
        .await
        .json();
    assert!(names(&beta, "resources", "name").contains(&"podgroups"));
    let aggregated = get_with(&app, "/apis", &[("accept", AGGREGATED_K8S)])
        .await
        .json();
    let group = aggregated["items"]
        .as_array()
        .and_then(|i| {
            i.iter()
                .find(|g| g["metadata"]["name"] == "scheduling.k8s.io")
        })
        .expect("scheduling");
    assert_eq!(
        names(group, "versions", "version"),
        ["v1", "v1beta1", "v1alpha3"]
    );
}

// R-RES-003: aggregated discovery when asked for in the flavor's domain
#[tokio::test]
async fn aggregated_discovery_in_the_kubernetes_flavor() {
    let (app, _) = app().await;
    let apis = get_with(&app, "/apis", &[("accept", KUBECTL_DISCOVERY_ACCEPT)]).await;
    assert_eq!(apis.status, StatusCode::OK);
    assert_eq!(header(&apis, "content-type"), Some(AGGREGATED_K8S));
    assert_eq!(header(&apis, "vary"), Some("accept"));
    let apis = apis.json();
    assert_eq!(apis["kind"], "APIGroupDiscoveryList");
    assert_eq!(apis["apiVersion"], "apidiscovery.k8s.io/v2");
    let groups: Vec<&str> = apis["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|g| g["metadata"]["name"].as_str())
        .collect();
    assert_eq!(groups, KUBERNETES_GROUPS);
    let autoscaling = &apis["items"][5];
    assert_eq!(autoscaling["versions"][0]["version"], "v2");
    let hpa = &autoscaling["versions"][0]["resources"][0];
    assert_eq!(hpa["resource"], "horizontalpodautoscalers");
    assert_eq!(hpa["shortNames"], json!(["hpa"]));
    assert_eq!(hpa["scope"], "Namespaced");
    assert_eq!(hpa["categories"], json!(["all"]));

    let api = get_with(&app, "/api", &[("accept", KUBECTL_DISCOVERY_ACCEPT)]).await;
    assert_eq!(header(&api, "content-type"), Some(AGGREGATED_K8S));
    let api = api.json();
    assert_eq!(api["items"].as_array().map(Vec::len), Some(1));
    let core = &api["items"][0];
    assert_eq!(core["metadata"], json!({"creationTimestamp": null}));
    assert_eq!(core["versions"][0]["version"], "v1");
    assert_eq!(core["versions"][0]["freshness"], "Current");
    let ns = core["versions"][0]["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["resource"] == "namespaces"))
        .expect("namespaces");
    assert_eq!(
        ns["responseKind"],
        json!({"group": "", "version": "v1", "kind": "Namespace"})
    );
    assert_eq!(ns["scope"], "Cluster");
    assert_eq!(ns["singularResource"], "namespace");
    assert_eq!(
        names(ns, "subresources", "subresource"),
        ["finalize", "status"]
    );

    // Only /api and /apis are aggregated; a group version is always the legacy list.
    let v1 = get_with(&app, "/api/v1", &[("accept", KUBECTL_DISCOVERY_ACCEPT)]).await;
    assert_eq!(header(&v1, "content-type"), Some("application/json"));
    assert_eq!(v1.json()["kind"], "APIResourceList");
}

// R-RES-003: the platform flavor answers in its own domain, and falls back to the legacy
// document for a client asking in the other one
#[tokio::test]
async fn aggregated_discovery_in_the_platform_flavor() {
    let app = flavored_app(Flavor::Platform, &[]).await;
    let apis = get_with(&app, "/apis", &[("accept", AGGREGATED_PLATFORM)]).await;
    assert_eq!(header(&apis, "content-type"), Some(AGGREGATED_PLATFORM));
    let apis = apis.json();
    assert_eq!(apis["apiVersion"], "apidiscovery.platform.io/v2");
    let groups: Vec<&str> = apis["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|g| g["metadata"]["name"].as_str())
        .collect();
    let expected: Vec<String> = KUBERNETES_GROUPS
        .iter()
        .map(|g| g.replace(".k8s.io", ".platform.io"))
        .collect();
    assert_eq!(groups, expected);

    let fallback = get_with(&app, "/apis", &[("accept", KUBECTL_DISCOVERY_ACCEPT)]).await;
    assert_eq!(header(&fallback, "content-type"), Some("application/json"));
    assert_eq!(fallback.json()["kind"], "APIGroupList");
    let none = get_with(&app, "/api", &[]).await;
    assert_eq!(header(&none, "content-type"), Some("application/json"));
    assert_eq!(none.json()["kind"], "APIVersions");
}

// The documents carry an ETag; If-None-Match with it answers 304 without a body
#[tokio::test]
async fn etag_and_not_modified() {
    let (app, _) = app().await;
    for (path, accept) in [
        ("/apis", AGGREGATED_K8S),
        ("/apis", "application/json"),
        ("/api", AGGREGATED_K8S),
        ("/apis/apps/v1", "application/json"),
        ("/apis/apps", "application/json"),
    ] {
        let first = get_with(&app, path, &[("accept", accept)]).await;
        let etag = header(&first, "etag").expect("etag").to_owned();
        assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
        let again = get_with(&app, path, &[("accept", accept)]).await;
        assert_eq!(header(&again, "etag"), Some(etag.as_str()), "stable");
        let cached = get_with(
            &app,
            path,
            &[("accept", accept), ("if-none-match", etag.as_str())],
        )
        .await;
        assert_eq!(cached.status, StatusCode::NOT_MODIFIED, "{path} {accept}");
        assert!(cached.body.is_empty());
        assert_eq!(header(&cached, "etag"), Some(etag.as_str()));
        let stale = get_with(
            &app,
            path,
            &[("accept", accept), ("if-none-match", "\"0123\"")],
        )
        .await;
        assert_eq!(stale.status, StatusCode::OK);
        assert_eq!(stale.body, first.body);
    }
    let legacy = get_with(&app, "/apis", &[("accept", "application/json")]).await;
    let aggregated = get_with(&app, "/apis", &[("accept", AGGREGATED_K8S)]).await;
    assert_ne!(header(&legacy, "etag"), header(&aggregated, "etag"));
    let crossed = get_with(
        &app,
        "/apis",
        &[
            ("accept", AGGREGATED_K8S),
            ("if-none-match", header(&legacy, "etag").expect("etag")),
        ],
    )
    .await;
    assert_eq!(
        crossed.status,
        StatusCode::OK,
        "the legacy tag is not the aggregated one"
    );
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

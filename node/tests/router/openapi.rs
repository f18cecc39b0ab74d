//! OpenAPI over HTTP, as kubectl and client-go read it: the v3 index and per-group-version
//! documents (schemas with their GVK, PATCH operations that list `fieldValidation` and
//! `dryRun`, references that resolve), hash URLs with 301/304/`ETag`/`Cache-Control`, the v2
//! document as JSON and as protobuf (client-go's `Accept`), and 406 for a v3 protobuf
//! `Accept`, in both flavors.

use serde_json::json;

use super::*;
use apiary_api::registry::Registry;
use apiary_api::registry::RuntimeConfig;

/// The server of `flavor` with `runtime_config` (`--runtime-config` values), and the registry
/// it serves.
async fn flavored(flavor: Flavor, runtime_config: &[&str]) -> (Router, Registry) {
    let (storage, _) = backend_in(flavor).await;
    let parsed =
        RuntimeConfig::parse(runtime_config.iter().copied(), flavor).expect("runtime config");
    let registry = Registry::new(flavor, &parsed);
    let mut config = ApiConfig::new(flavor, Arc::new(AlwaysReady));
    config.runtime_config = parsed;
    (apiary_api::router(storage, config), registry)
}

async fn get(app: &Router, path: &str) -> Reply {
    get_with(app, path, &[]).await
}

fn header<'a>(reply: &'a Reply, name: &str) -> Option<&'a str> {
    reply.headers.get(name).and_then(|v| v.to_str().ok())
}

/// Every `$ref` in `doc` names a definition under `prefix` that `doc` carries at `defs`.
fn assert_references_resolve(doc: &Value, defs: &str, prefix: &str, what: &str) {
    fn walk<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    match (k.as_str(), v) {
                        ("$ref", Value::String(r)) => out.push(r),
                        _ => walk(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut refs = Vec::new();
    walk(doc, &mut refs);
    assert!(!refs.is_empty(), "{what}: no references");
    for r in refs {
        let name = r
            .strip_prefix(prefix)
            .unwrap_or_else(|| panic!("{what}: {r} outside {prefix}"));
        assert!(
            doc.pointer(defs).and_then(|d| d.get(name)).is_some(),
            "{what}: {r} does not resolve"
        );
    }
}

/// Whether `schemas` has a definition whose GVK extension lists `gvk`.
fn has_kind(schemas: &Value, gvk: &Value) -> bool {
    schemas.as_object().is_some_and(|all| {
        all.values().any(|s| {
            s["x-kubernetes-group-version-kind"]
                .as_array()
                .is_some_and(|l| l.contains(gvk))
        })
    })
}

/// The PATCH operations of `paths` whose GVK is `gvk` (cli-runtime's query param verifier
/// looks exactly there).
fn patch_ops<'a>(paths: &'a Value, gvk: &Value) -> Vec<&'a Value> {
    paths
        .as_object()
        .into_iter()
        .flat_map(|p| p.values())
        .filter_map(|item| item.get("patch"))
        .filter(|op| &op["x-kubernetes-group-version-kind"] == gvk)
        .collect()
}

fn param_names(op: &Value) -> Vec<&str> {
    op["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["name"].as_str())
        .collect()
}

/// Every served row, in both document versions: its kind's schema with the GVK extension,
/// a PATCH operation with `fieldValidation` and `dryRun`, references that resolve.
async fn every_served_kind_is_documented(flavor: Flavor) {
    let (app, registry) = flavored(flavor, &[]).await;
    let index = get(&app, "/openapi/v3").await;
    assert_eq!(index.status, StatusCode::OK);
    let index = index.json();
    let v2 = get(&app, "/openapi/v2").await.json();
    assert_eq!(v2["swagger"], "2.0");
    assert_references_resolve(&v2, "/definitions", "#/definitions/", "v2");

    let mut checked = std::collections::HashSet::new();
    for store in registry.stores() {
        let r = store.resource();
        let key = if r.group.is_empty() {
            format!("api/{}", r.version)
        } else {
            format!("apis/{}/{}", r.group, r.version)
        };
        let url = index["paths"][&key]["serverRelativeURL"]
            .as_str()
            .unwrap_or_else(|| panic!("{key} in the index"));
        let doc = get(&app, url).await.json();
        assert_eq!(doc["openapi"], "3.0.0");
        if checked.insert(key.clone()) {
            assert_references_resolve(&doc, "/components/schemas", "#/components/schemas/", &key);
        }
        let gvk = json!({"group": r.group, "kind": r.kind, "version": r.version});
        let list_gvk = json!({"group": r.group, "kind": r.list_kind, "version": r.version});
        for (what, schemas, paths) in [
            ("v3", &doc["components"]["schemas"], &doc["paths"]),
            ("v2", &v2["definitions"], &v2["paths"]),
        ] {
            assert!(has_kind(schemas, &gvk), "{what}: {gvk} has a schema");
            // Computed kinds without a list or a patch are checked in `reviews`.
            if r.list_kind.is_empty() || !r.supports("patch") {
                continue;
            }
            assert!(
                has_kind(schemas, &list_gvk),
                "{what}: {list_gvk} has a schema"
            );
            let patches = patch_ops(paths, &gvk);
            assert!(!patches.is_empty(), "{what}: {gvk} has a PATCH operation");
            for op in patches {
                let names = param_names(op);
                assert!(
                    names.contains(&"fieldValidation") && names.contains(&"dryRun"),
                    "{what}: {} lists {names:?}",
                    op["operationId"]
                );
            }
        }
    }
}

// R-RES-006 (list kinds), R-RES-191 (kubectl learns the server validates fields)
#[tokio::test]
async fn every_served_kind_is_documented_in_the_kubernetes_flavor() {
    every_served_kind_is_documented(Flavor::Kubernetes).await;
}

// R-RES-006, R-RES-191
#[tokio::test]
async fn every_served_kind_is_documented_in_the_platform_flavor() {
    every_served_kind_is_documented(Flavor::Platform).await;
}

#[tokio::test]
async fn operations_are_named_as_upstream() {
    let (app, _) = flavored(Flavor::Platform, &[]).await;
    let core = get(&app, "/openapi/v3/api/v1").await.json();
    let paths = &core["paths"];
    let collection = &paths["/api/v1/namespaces/{namespace}/configmaps"];
    assert_eq!(
        collection["get"]["operationId"],
        "listCoreV1NamespacedConfigMap"
    );
    assert_eq!(collection["get"]["x-kubernetes-action"], "list");
    assert!(param_names(&collection["get"]).contains(&"watch"));
    assert_eq!(
        collection["delete"]["operationId"],
        "deleteCoreV1CollectionNamespacedConfigMap"
    );
    let item = &paths["/api/v1/namespaces/{namespace}/configmaps/{name}"];
    assert_eq!(
        item["patch"]["operationId"],
        "patchCoreV1NamespacedConfigMap"
    );
    assert_eq!(
        item["patch"]["requestBody"]["content"]["application/strategic-merge-patch+json"]["schema"]
            ["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
    );
    assert_eq!(
        item["put"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.core.v1.ConfigMap"
    );
    assert_eq!(
        paths["/api/v1/configmaps"]["get"]["operationId"],
        "listCoreV1ConfigMapForAllNamespaces"
    );
    // A delete answers a Status, or the deleted object for the kinds that return it.
    let deleted = |path: &str| {
        paths[path]["delete"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
            .clone()
    };
    assert_eq!(
        deleted("/api/v1/namespaces/{namespace}/configmaps/{name}"),
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Status"
    );
    assert_eq!(
        deleted("/api/v1/namespaces/{namespace}/pods/{name}"),
        "#/components/schemas/io.k8s.api.core.v1.Pod"
    );
    assert_eq!(
        paths["/api/v1/namespaces/{name}/finalize"]["put"]["operationId"],
        "replaceCoreV1NamespaceFinalize"
    );
    assert!(
        paths["/api/v1/namespaces"].get("delete").is_none(),
        "namespaces have no deletecollection"
    );
    assert_eq!(
        paths["/api/v1/namespaces/{namespace}/pods/{name}/status"]["patch"]["operationId"],
        "patchCoreV1NamespacedPodStatus"
    );

    let rbac = get(&app, "/openapi/v3/apis/rbac.authorization.platform.io/v1")
        .await
        .json();
    let roles = &rbac["paths"]["/apis/rbac.authorization.platform.io/v1/clusterroles/{name}"];
    assert_eq!(
        roles["get"]["operationId"],
        "readRbacAuthorizationV1ClusterRole"
    );
    assert_eq!(
        roles["get"]["x-kubernetes-group-version-kind"],
        json!({"group": "rbac.authorization.platform.io", "kind": "ClusterRole", "version": "v1"})
    );
    assert!(
        rbac["components"]["schemas"]
            .get("io.k8s.api.core.v1.ConfigMap")
            .is_none(),
        "a group version's document carries only what it references"
    );
    let group = get(&app, "/openapi/v3/apis/rbac.authorization.platform.io")
        .await
        .json();
    assert_eq!(
        group["paths"]["/apis/rbac.authorization.platform.io/"]["get"]["operationId"],
        "getRbacAuthorizationAPIGroup"
    );
}

#[tokio::test]
async fn hash_urls_redirect_and_cache() {
    let (app, _) = flavored(Flavor::Kubernetes, &[]).await;
    let index = get(&app, "/openapi/v3").await;
    let index_etag = header(&index, "etag").expect("index etag").to_owned();
    let url = index.json()["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .expect("apps/v1")
        .to_owned();
    let hash = url.split("?hash=").nth(1).expect("hash").to_owned();
    assert_eq!(hash.len(), 128);
    assert!(
        hash.chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    );

    let fresh = get(&app, &url).await;
    assert_eq!(fresh.status, StatusCode::OK);
    assert_eq!(header(&fresh, "etag"), Some(format!("\"{hash}\"").as_str()));
    assert_eq!(
        header(&fresh, "cache-control"),
        Some("public, immutable, max-age=31536000")
    );
    assert_eq!(header(&fresh, "content-type"), Some("application/json"));

    let unhashed = get(&app, "/openapi/v3/apis/apps/v1").await;
    assert_eq!(unhashed.status, StatusCode::OK);
    assert_eq!(
        header(&unhashed, "cache-control"),
        Some("no-cache, private")
    );
    assert_eq!(unhashed.body, fresh.body);

    let stale = get(&app, "/openapi/v3/apis/apps/v1?hash=0123ABCD").await;
    assert_eq!(stale.status, StatusCode::MOVED_PERMANENTLY);
    assert_eq!(header(&stale, "location"), Some(url.as_str()));

    let etag = format!("\"{hash}\"");
    let cached = get_with(&app, &url, &[("if-none-match", &etag)]).await;
    assert_eq!(cached.status, StatusCode::NOT_MODIFIED);
    assert!(cached.body.is_empty());
    let index_cached = get_with(&app, "/openapi/v3", &[("if-none-match", &index_etag)]).await;
    assert_eq!(index_cached.status, StatusCode::NOT_MODIFIED);

    let v2 = get(&app, "/openapi/v2").await;
    let v2_etag = header(&v2, "etag").expect("v2 etag").to_owned();
    let v2_cached = get_with(&app, "/openapi/v2", &[("if-none-match", &v2_etag)]).await;
    assert_eq!(v2_cached.status, StatusCode::NOT_MODIFIED);
    assert_eq!(
        get(&app, "/openapi/v3/apis/apps/v9").await.status,
        StatusCode::NOT_FOUND
    );
}

// R-RES-120, R-RES-137: client-go's `OpenAPISchema()` Accept gets the v2 protobuf (both
// spellings), with its own ETag and 304; JSON stays the default; v3 has no protobuf (406)
#[tokio::test]
async fn client_go_gets_the_v2_protobuf() {
    let (app, _) = flavored(Flavor::Kubernetes, &[]).await;
    let proto = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
    let answered = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
    let reply = get_with(&app, "/openapi/v2", &[("accept", proto)]).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(header(&reply, "content-type"), Some(answered));
    assert_eq!(header(&reply, "vary"), Some("accept"));
    // The gnostic document opens with its field 1, `swagger`, and names the Deployment's spec
    // by reference (its whole content is checked against the JSON in the openapi unit tests).
    assert!(
        reply.body.starts_with(b"\x0a\x032.0"),
        "not a gnostic v2 document"
    );
    let has = |needle: &[u8]| reply.body.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"io.k8s.api.apps.v1.Deployment"));
    assert!(has(b"#/definitions/io.k8s.api.apps.v1.DeploymentSpec"));
    let proto_etag = header(&reply, "etag").expect("protobuf etag").to_owned();

    let same = get_with(&app, "/openapi/v2", &[("accept", answered)]).await;
    assert_eq!(same.body, reply.body);
    let both = format!("{proto}, application/json");
    let preferred = get_with(&app, "/openapi/v2", &[("accept", &both)]).await;
    assert_eq!(preferred.body, reply.body);

    let json = get(&app, "/openapi/v2").await;
    assert_eq!(header(&json, "content-type"), Some("application/json"));
    assert_ne!(header(&json, "etag"), Some(proto_etag.as_str()));
    let cached = get_with(
        &app,
        "/openapi/v2",
        &[("accept", proto), ("if-none-match", &proto_etag)],
    )
    .await;
    assert_eq!(cached.status, StatusCode::NOT_MODIFIED);
    assert!(cached.body.is_empty());
    let json_etag = header(&json, "etag").expect("json etag").to_owned();
    let stale = get_with(
        &app,
        "/openapi/v2",
        &[("accept", proto), ("if-none-match", &json_etag)],
    )
    .await;
    assert_eq!(
        stale.status,
        StatusCode::OK,
        "the JSON tag is not the protobuf's"
    );

    let v3_proto = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf";
    let reply = get_with(&app, "/openapi/v3/api/v1", &[("accept", v3_proto)]).await;
    assert_eq!(reply.status, StatusCode::NOT_ACCEPTABLE);
    let reply = get_with(&app, "/openapi/v2", &[("accept", "text/html")]).await;
    assert_eq!(reply.status, StatusCode::NOT_ACCEPTABLE);
}

// R-VER-059, R-VER-060, R-VER-064: rows that are off are not documented until enabled;
// served versions of shared storage are
#[tokio::test]
async fn unserved_rows_are_absent() {
    let (app, _) = flavored(Flavor::Kubernetes, &[]).await;
    let index = get(&app, "/openapi/v3").await.json();
    for absent in [
        "apis/coordination.k8s.io/v1beta1",
        "apis/resource.k8s.io/v1beta2",
    ] {
        assert!(index["paths"].get(absent).is_none(), "{absent} listed");
    }
    // Versions that share another's storage are documented once served.
    for shared in ["apis/autoscaling/v1", "apis/events.k8s.io/v1"] {
        assert!(index["paths"].get(shared).is_some(), "{shared} missing");
    }
    let v2 = get(&app, "/openapi/v2").await.json();
    assert!(
        v2["paths"]
            .as_object()
            .expect("paths")
            .keys()
            .all(|p| !p.starts_with("/apis/coordination.k8s.io/v1beta1/"))
    );

    let (app, _) = flavored(Flavor::Kubernetes, &["coordination.k8s.io/v1beta1"]).await;
    let index = get(&app, "/openapi/v3").await.json();
    assert!(
        index["paths"]
            .get("apis/coordination.k8s.io/v1beta1")
            .is_some()
    );
}

#[tokio::test]
async fn openapi_needs_credentials_like_discovery() {
    let (app, _) = flavored(Flavor::Kubernetes, &[]).await;
    let reply = call(&app, "GET", "/openapi/v3", None, None).await;
    assert_eq!(
        reply.status,
        StatusCode::FORBIDDEN,
        "anonymous may not read it"
    );
    let reply = call(&app, "POST", "/openapi/v2", None, Some(admin())).await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
}

//! No request reaches a handler without an allow from the authorizer chain: a property over
//! the router's whole surface. Every resource of every group and version discovery lists,
//! with every verb it supports (subresources included), on items and collections, namespaced
//! and across namespaces, plus the non-resource paths, is sent by an anonymous caller and by
//! an authenticated user with no grants. Whatever the chain does not allow is a 403 with the
//! authorization's own message and changes nothing stored; the same request by a
//! `system:masters` member is never a 403. Health and `/version` are served to everyone
//! outside the chain (Kubernetes grants them to all through `system:public-info-viewer`).

use std::sync::Arc;

use apiary_api::auth::Attributes;
use apiary_api::auth::AuthorizerChain;
use apiary_api::auth::Decision;
use apiary_api::auth::UserInfo;
use apiary_api::auth::rbac::RbacAuthorizer;
use apiary_api::request::QueryParams;
use apiary_api::request::RequestInfo;
use serde_json::Value;

use super::*;

/// One request of the sweep.
struct Probe {
    method: &'static str,
    path: String,
}

/// `path` with `plural` (and `name`, `sub`) under `base`, in `default` when `namespaced`.
fn resource_path(base: &str, namespaced: bool, plural: &str, name: &str, sub: &str) -> String {
    let mut path = base.to_owned();
    if namespaced {
        path.push_str("/namespaces/default");
    }
    path.push('/');
    path.push_str(plural);
    for part in [name, sub] {
        if !part.is_empty() {
            path.push('/');
            path.push_str(part);
        }
    }
    path
}

/// The requests that exercise `verb` on the entry `name` of the resource list at `base`.
fn probes_for(base: &str, name: &str, namespaced: bool, verb: &str) -> Vec<Probe> {
    let (plural, sub) = name.split_once('/').unwrap_or((name, ""));
    let item = |ns| resource_path(base, ns, plural, "x", sub);
    let collection = |ns| resource_path(base, ns, plural, "", "");
    let mut scopes = vec![namespaced];
    if namespaced && sub.is_empty() && matches!(verb, "list" | "watch") {
        scopes.push(false);
    }
    let mut probes = Vec::new();
    for ns in scopes {
        let (method, path) = match (verb, sub.is_empty()) {
            ("get", _) => ("GET", item(ns)),
            ("list", true) => ("GET", collection(ns)),
            ("watch", true) => (
                "GET",
                format!("{}?watch=1&timeoutSeconds=1", collection(ns)),
            ),
            ("watch", false) => ("GET", format!("{}?watch=1&timeoutSeconds=1", item(ns))),
            ("create", true) => ("POST", collection(ns)),
            ("create", false) => ("POST", item(ns)),
            ("update", _) => ("PUT", item(ns)),
            ("patch", _) => ("PATCH", item(ns)),
            ("delete", _) => ("DELETE", item(ns)),
            ("deletecollection", true) => ("DELETE", collection(ns)),
            _ => continue,
        };
        probes.push(Probe { method, path });
    }
    probes
}

/// The paths of every served resource list, from discovery.
async fn resource_lists(app: &Router) -> Vec<String> {
    let mut lists = vec!["/api/v1".to_owned()];
    let groups = fetched(app, "/apis").await;
    for group in groups["groups"].as_array().expect("groups") {
        for version in group["versions"].as_array().expect("versions") {
            let gv = version["groupVersion"].as_str().expect("groupVersion");
            lists.push(format!("/apis/{gv}"));
        }
    }
    lists
}

/// Every request of the sweep: each verb of each resource and subresource, and the
/// non-resource paths with reads and writes.
async fn surface(app: &Router) -> Vec<Probe> {
    let mut probes = Vec::new();
    for base in resource_lists(app).await {
        let list = fetched(app, &base).await;
        for resource in list["resources"].as_array().expect("resources") {
            let name = resource["name"].as_str().expect("name");
            let namespaced = resource["namespaced"].as_bool().unwrap_or(false);
            let verbs = resource["verbs"].as_array().cloned().unwrap_or_default();
            for verb in verbs.iter().filter_map(Value::as_str) {
                probes.extend(probes_for(&base, name, namespaced, verb));
            }
        }
    }
    let paths = [
        "/",
        "/api",
        "/api/v1",
        "/apis",
        "/apis/apps",
        "/apis/apps/v1",
        "/openapi/v2",
        "/openapi/v3",
        "/openapi/v3/apis/apps/v1",
        "/metrics",
        "/.well-known/openid-configuration",
        "/openid/v1/jwks",
        "/debug/api_priority_and_fairness/dump_priority_levels",
        "/logs",
        "/nowhere",
    ];
    for path in paths {
        for method in ["GET", "POST", "DELETE"] {
            probes.push(Probe {
                method,
                path: path.to_owned(),
            });
        }
    }
    probes
}

/// The reply to `probe` sent as `who`, without a started watch's body.
async fn status_of(app: &Router, probe: &Probe, who: Option<ClientCertificate>) -> Reply {
    let content_type = match probe.method {
        "PATCH" => "application/merge-patch+json",
        _ => "application/json",
    };
    let body = if matches!(probe.method, "POST" | "PUT" | "PATCH") {
        "{}"
    } else {
        ""
    };
    let mut req = Request::builder()
        .method(probe.method)
        .uri(&probe.path)
        .header("content-type", content_type)
        .body(Body::from(body))
        .expect("request");
    if let Some(c) = who {
        req.extensions_mut().insert(c);
    }
    let res = app.clone().oneshot(req).await.expect("infallible");
    let (status, headers) = (res.status(), res.headers().clone());
    // A watch that started streams until its timeout: its status is all that is needed.
    let body = if status.is_success() && probe.path.contains("watch=1") {
        Vec::new()
    } else {
        let collected = res.into_body().collect().await.expect("body");
        collected.to_bytes().to_vec()
    };
    Reply {
        status,
        headers,
        body,
    }
}

/// The decision the chain takes on `probe` by `user`.
async fn decision(chain: &AuthorizerChain, probe: &Probe, user: &UserInfo) -> (Decision, String) {
    let (path, query) = match probe.path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (probe.path.as_str(), None),
    };
    let method = http::Method::from_bytes(probe.method.as_bytes()).expect("method");
    let info = RequestInfo::parse(&method, path, &QueryParams::parse(query));
    let attributes = Attributes {
        user,
        request: &info,
    };
    let message = attributes.forbidden_message();
    (chain.decide(&attributes).await, message)
}

// R-ACC-002, R-ACC-086, R-ACC-087, R-ACC-088, R-ACC-168: nothing the chain does not allow
// reaches a handler; `system:masters` reaches every handler.
#[tokio::test]
async fn no_handler_runs_without_an_allow() {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config
        .authorizers
        .push(RbacAuthorizer::new(Flavor::Kubernetes, storage.clone()));
    let chain = AuthorizerChain::new(config.authorizers.clone());
    let app = apiary_api::router(storage.clone(), config);
    let probes = surface(&app).await;
    assert!(
        probes.len() > 500,
        "the sweep covers the surface: {}",
        probes.len()
    );
    let nobody = UserInfo {
        name: "nobody".into(),
        groups: vec!["nogroup".into(), "system:authenticated".into()],
        ..UserInfo::default()
    };
    let anonymous = UserInfo {
        name: "system:anonymous".into(),
        groups: vec!["system:unauthenticated".into()],
        ..UserInfo::default()
    };
    let before = snapshot(&storage).await;
    let mut refused = 0;
    for probe in &probes {
        let callers = [
            (
                &nobody,
                Some(ClientCertificate::new(cert("nobody", Some("nogroup")))),
            ),
            (&anonymous, None),
        ];
        for (user, who) in callers {
            let (decided, message) = decision(&chain, probe, user).await;
            if decided == Decision::Allow {
                continue;
            }
            refused += 1;
            let reply = status_of(&app, probe, who).await;
            let what = format!("{} {} as {}", probe.method, probe.path, user.name);
            assert_eq!(
                reply.status,
                StatusCode::FORBIDDEN,
                "{what}: {}",
                reply.text()
            );
            let text = reply.json()["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            assert!(text.contains(&message), "{what}: {text} lacks {message}");
        }
    }
    assert!(refused > 1000, "most of the surface is refused: {refused}");
    assert!(
        snapshot(&storage).await == before,
        "a refused request changed the store"
    );
    for probe in &probes {
        let reply = status_of(&app, probe, Some(admin())).await;
        assert_ne!(
            reply.status,
            StatusCode::FORBIDDEN,
            "{} {} as admin: {}",
            probe.method,
            probe.path,
            reply.text()
        );
    }
}

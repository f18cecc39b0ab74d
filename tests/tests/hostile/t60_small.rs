//! The smaller deviations (C9): YAML errors worded without Rust internals, a failed JSON Patch
//! `test` that names its path, `-0` in an integer field, and a lone UTF-16 surrogate escape in
//! a string, each answered as Kubernetes answers it.

use apiary_tests::Flavor;
use apiary_tests::objects;
use http::Method;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use crate::Hostile;
use crate::JSON_PATCH;
use crate::MERGE_PATCH;
use crate::assert_error;

/// Words of Rust types and crates that a message to a client must not carry.
const RUST_ISMS: [&str; 5] = ["Option<", "String>", "Vec<", "serde", "::"];

/// YAML bodies that Kubernetes refuses with 400: a null map key (which sigs.k8s.io/yaml cannot
/// turn into JSON), and a list where a string belongs.
const BAD_YAML: [(&str, &str); 2] = [
    (
        "yaml-null-key",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-null-key\ndata:\n  ~: a\n",
    ),
    (
        "yaml-list-value",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-list-value\ndata:\n  a: [1]\n",
    ),
];

/// The Deployments of the harness namespace.
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

// R-RES-115
#[tokio::test]
async fn small_deviations_are_answered_as_kubernetes_answers_them() {
    let hostile = Hostile::start(Flavor::Platform).await;
    let configmaps = objects::configmaps_path();

    for (name, yaml) in BAD_YAML {
        let reply = hostile
            .send(1, Method::POST, &configmaps, "application/yaml", yaml)
            .await;
        assert_error(&reply, StatusCode::BAD_REQUEST, "BadRequest", "");
        let status: Value = reply.json(&configmaps).expect("a Status");
        let message = status["message"].as_str().unwrap_or_default();
        assert!(
            !RUST_ISMS.iter().any(|word| message.contains(word)),
            "{name}: {message}"
        );
        hostile.assert_absent(&objects::configmap_path(name)).await;
    }

    // A failed `test` answers 422 with the operation's error, which names its path.
    let path = objects::configmap_path("tested");
    let before = hostile
        .create(&configmaps, &objects::configmap("tested", &[("a", "1")]))
        .await;
    let patch = json!([
        {"op": "replace", "path": "/data/a", "value": "2"},
        {"op": "test", "path": "/data/a", "value": "1"},
    ]);
    let reply = hostile
        .send(2, Method::PATCH, &path, JSON_PATCH, patch.to_string())
        .await;
    assert_error(
        &reply,
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        "/data/a",
    );
    hostile.assert_unchanged(&path, &before).await;

    // `-0` is an integer, zero.
    let deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": "zero" },
        "spec": {
            "replicas": 2,
            "selector": { "matchLabels": { "app": "zero" } },
            "template": {
                "metadata": { "labels": { "app": "zero" } },
                "spec": { "containers": [{ "name": "c", "image": "busybox" }] },
            },
        },
    });
    hostile.create(DEPLOYMENTS, &deployment).await;
    let zero = format!("{DEPLOYMENTS}/zero");
    let reply = hostile
        .send(
            3,
            Method::PATCH,
            &zero,
            MERGE_PATCH,
            r#"{"spec":{"replicas":-0}}"#,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    for replica in 1..=hostile.cluster.nodes() {
        let stored = hostile.read(replica, &zero).await;
        assert_eq!(stored["spec"]["replicas"], 0, "node-{replica}");
    }

    // A lone surrogate escape decodes to U+FFFD, as Go's decoder does.
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"surrogate"},"data":{"a":"x\ud800y"}}"#;
    let reply = hostile
        .send(1, Method::POST, &configmaps, "application/json", body)
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    for replica in 1..=hostile.cluster.nodes() {
        let stored = hostile
            .read(replica, &objects::configmap_path("surrogate"))
            .await;
        assert_eq!(stored["data"]["a"], "x\u{FFFD}y", "node-{replica}");
    }

    hostile.assert_unharmed().await;
}

//! Wide Deployments (C5): a strategic merge patch of 20,000 containers is answered in bounded
//! time (its list merge is not quadratic), and an object larger than the stored-object limit
//! (1,572,864 bytes, etcd's request limit) is refused before it is proposed, by create, update,
//! patch and dry run alike, with nothing stored.

use apiary_tests::Flavor;
use http::Method;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use crate::Hostile;
use crate::STRATEGIC_MERGE_PATCH;
use crate::assert_error;

/// The Deployments of the harness namespace.
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

/// How many containers the strategic merge patch sends (the quadratic case).
const PATCHED_CONTAINERS: usize = 20_000;

/// How many containers the oversized Deployment has (the stored 1.65 MB one).
const OVERSIZED_CONTAINERS: usize = 10_001;

/// The stored-object limit the oversized writes exceed (`--max-object-bytes`' default).
const MAX_OBJECT_BYTES: &str = "1572864";

/// The Deployment `name` with `containers`.
fn deployment(name: &str, containers: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": name },
        "spec": {
            "replicas": 1,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": containers },
            },
        },
    })
}

/// `count` small containers, `c0` .. (each about 30 bytes of JSON).
fn small_containers(count: usize) -> Vec<Value> {
    (0..count)
        .map(|i| json!({ "name": format!("c{i}"), "image": "i" }))
        .collect()
}

/// `count` containers of about 165 bytes of JSON each, with long names and images.
fn large_containers(count: usize) -> Vec<Value> {
    (0..count)
        .map(|i| {
            json!({
                "name": format!("c-{i:05}-{}", "n".repeat(40)),
                "image": format!("registry.example.com/hostile/{}:v1", "i".repeat(65)),
            })
        })
        .collect()
}

/// Asserts `reply` is the 413 of an object over the stored-object limit.
fn assert_too_large(reply: &apiary_tests::Reply) {
    assert_error(
        reply,
        StatusCode::PAYLOAD_TOO_LARGE,
        "RequestEntityTooLarge",
        "request is too large",
    );
    assert!(reply.text().contains(MAX_OBJECT_BYTES), "{}", reply.text());
}

#[tokio::test]
async fn wide_deployments_are_answered_in_bounded_time_and_oversized_ones_are_not_stored() {
    let hostile = Hostile::start(Flavor::Platform).await;
    let path = format!("{DEPLOYMENTS}/wide");
    let before = hostile
        .create(DEPLOYMENTS, &deployment("wide", small_containers(1)))
        .await;

    // 20,000 containers merged by name: answered within the limit; the result, about 3 MB
    // once defaulted, is over the stored-object limit.
    let patch = json!({
        "spec": { "template": { "spec": { "containers": small_containers(PATCHED_CONTAINERS) } } },
    })
    .to_string();
    let reply = hostile
        .send(2, Method::PATCH, &path, STRATEGIC_MERGE_PATCH, patch)
        .await;
    assert_too_large(&reply);
    hostile.assert_unchanged(&path, &before).await;

    // The 1.65 MB Deployment of 10,001 containers, as a create (also a dry run) and
    // as an update of an existing one.
    let oversized = deployment("tall", large_containers(OVERSIZED_CONTAINERS)).to_string();
    assert!(
        (1_600_000..1_700_000).contains(&oversized.len()),
        "the oversized Deployment is {} bytes, meant to be 1.65 MB",
        oversized.len()
    );
    for query in ["?dryRun=All", ""] {
        let reply = hostile
            .send(
                3,
                Method::POST,
                &format!("{DEPLOYMENTS}{query}"),
                "application/json",
                oversized.clone(),
            )
            .await;
        assert_too_large(&reply);
    }
    hostile.assert_absent(&format!("{DEPLOYMENTS}/tall")).await;

    let mut update = deployment("wide", large_containers(OVERSIZED_CONTAINERS));
    update["metadata"] = before["metadata"].clone();
    let reply = hostile
        .send(
            1,
            Method::PUT,
            &path,
            "application/json",
            update.to_string(),
        )
        .await;
    assert_too_large(&reply);
    hostile.assert_unchanged(&path, &before).await;

    hostile.assert_unharmed().await;
}

//! Through the JavaScript client's own API classes and models, each call through a replica in
//! turn: create, a paged list (`limit` / `_continue`), JSON, merge and strategic merge patches, a
//! stale replace and delete (config maps, and a Deployment through `AppsV1Api`); then its `Watch`
//! and an informer see writes made through another replica.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::js;

use crate::run_script;

// R-HA-016, R-HA-008, R-RES-182, R-RES-183, R-RES-184, R-RES-114, R-RES-116, R-RES-117,
// R-HA-010
#[tokio::test]
async fn the_javascript_client_creates_pages_patches_deletes_and_watches() {
    // Before the cluster: a missing node or client fails at once.
    js::node().unwrap();
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let kubeconfig = cluster.kubeconfig();
    let kubeconfig = kubeconfig.to_str().expect("a UTF-8 path");

    let summary = run_script(
        "crud_paging.mjs",
        &[kubeconfig, "node-1,node-2,node-3", "25", "4"],
    )
    .await;
    assert!(summary["items"].as_u64() >= Some(25), "{summary}");
    assert!(summary["pages"].as_u64() >= Some(7), "{summary}");

    let summary = run_script(
        "watch_events.mjs",
        &[kubeconfig, "node-3", "node-2", "node-1"],
    )
    .await;
    assert_eq!(
        summary["events"].as_array().map(Vec::len),
        Some(3),
        "{summary}"
    );
    assert_eq!(
        summary["informer"],
        serde_json::json!(["add", "update", "delete"]),
        "{summary}"
    );
}

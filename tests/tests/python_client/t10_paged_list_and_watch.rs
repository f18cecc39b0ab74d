//! A paged list (`limit` / `_continue`) across replicas, and `watch.Watch().stream` seeing
//! writes made through another replica meanwhile.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::python;

use crate::run_script;

// R-HA-016, R-HA-008, R-RES-184, R-HA-010
#[tokio::test]
async fn the_python_client_pages_through_a_list_and_streams_a_watch() {
    // Before the cluster: a missing venv fails at once.
    python::python().unwrap();
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let kubeconfig = cluster.kubeconfig();
    let kubeconfig = kubeconfig.to_str().expect("a UTF-8 path");

    let out = run_script(
        "paged_list.py",
        &[kubeconfig, "node-1,node-2,node-3", "25", "4"],
    )
    .await;
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("a JSON summary");
    assert!(summary["items"].as_u64() >= Some(25), "{summary}");
    assert!(summary["pages"].as_u64() >= Some(7), "{summary}");

    let out = run_script("watch_events.py", &[kubeconfig, "node-3", "node-1"]).await;
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("a JSON summary");
    assert_eq!(
        summary["events"].as_array().map(Vec::len),
        Some(3),
        "{summary}"
    );
}

//! A paged list (`limit` / `_continue`) across replicas, and `watch.Watch().stream` seeing
//! writes made through another replica meanwhile.

use crate::cluster;
use crate::summary_of;

// R-HA-016, R-HA-008, R-RES-184, R-HA-010
#[tokio::test]
async fn the_python_client_pages_through_a_list_and_streams_a_watch() {
    let (_cluster, kubeconfig) = cluster().await;
    let kubeconfig = kubeconfig.as_str();

    let summary = summary_of(
        "paged_list.py",
        &[kubeconfig, "node-1,node-2,node-3", "25", "4"],
    )
    .await;
    assert!(summary["items"].as_u64() >= Some(25), "{summary}");
    assert!(summary["pages"].as_u64() >= Some(7), "{summary}");

    let summary = summary_of("watch_events.py", &[kubeconfig, "node-3", "node-1"]).await;
    assert_eq!(
        summary["events"].as_array().map(Vec::len),
        Some(3),
        "{summary}"
    );
}

//! What `/readyz` promises: a replica that answers 200 can serve requests, including those into
//! the `default` namespace that the cluster creates at start-up.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use http::StatusCode;

// R-VER-037, R-VER-044
#[tokio::test]
async fn once_every_replica_is_ready_each_serves_the_default_namespace() {
    let cluster = DevCluster::start(DevOptions {
        wait_for_default_namespace: false,
        ..DevOptions::default()
    })
    .await
    .unwrap();
    // Asked right after the last replica's first 200 from /readyz, with a quorum read.
    for replica in 1..=3 {
        let reply = cluster
            .client(replica)
            .unwrap()
            .get("/api/v1/namespaces/default")
            .await
            .unwrap();
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "node-{replica} is ready but: {}",
            reply.text()
        );
    }
}

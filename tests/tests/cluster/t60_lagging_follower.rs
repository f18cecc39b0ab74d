//! A follower that lags behind a write answers a "not older than" list only once it has applied
//! that write: it waits instead of serving its stale state.

use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::objects;
use http::StatusCode;

use crate::create_configmap;
use crate::item_names;
use crate::revision;

/// How long the follower stays frozen after the list was sent to it.
const FROZEN: Duration = Duration::from_millis(500);

// R-HA-007
#[tokio::test]
async fn a_not_older_than_list_on_a_lagging_follower_waits_for_the_version() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let leader = cluster
        .wait_leader(Duration::from_secs(30))
        .await
        .expect("a leader is elected");
    let follower = (1..=3).find(|&i| i != leader).expect("a follower");
    let writer = (1..=3)
        .find(|&i| i != leader && i != follower)
        .expect("another replica");

    // The follower is frozen, so the write commits on the other two without it.
    cluster.pause_replica(follower).unwrap();
    let written = create_configmap(cluster.client(writer).unwrap(), writer, "lagged", "1").await;
    let at = revision(&written);

    // Sent while the follower cannot have applied `at`; it thaws a little later.
    let client = cluster.client(follower).unwrap().clone();
    let path = format!(
        "{}?resourceVersion={at}&resourceVersionMatch=NotOlderThan",
        objects::configmaps_path()
    );
    let list = tokio::spawn(async move { client.get(&path).await });
    tokio::time::sleep(FROZEN).await;
    cluster.resume_replica(follower).unwrap();

    let list = list.await.unwrap().unwrap();
    assert_eq!(
        list.status,
        StatusCode::OK,
        "node-{follower}: {}",
        list.text()
    );
    let list = list.json("list").unwrap();
    assert!(
        revision(&list) >= at,
        "node-{follower} listed at {} < {at}",
        revision(&list)
    );
    assert!(
        item_names(&list).iter().any(|name| name == "lagged"),
        "node-{follower} served a list without the write at {at}: {list}"
    );
}

//! Watches on one replica see writes made through another, in revision order and exactly once,
//! and a watch resumed on yet another replica from the last version seen goes on without gap
//! or duplicate (revisions are the leader's log order, the same on every replica).

use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HttpClient;
use apiary_tests::objects;
use apiary_tests::watch_stream::EventStream;
use apiary_tests::watch_stream::WatchEvent;

use crate::create_configmap;
use crate::delete_configmap;
use crate::revision;
use crate::update_configmap;

/// How long one event may take to arrive.
const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens a watch of the config maps on `client` from `after`.
async fn watch_from(client: &HttpClient, after: u64) -> EventStream {
    let path = format!(
        "{}?watch=1&resourceVersion={after}",
        objects::configmaps_path()
    );
    EventStream::open(client, &path)
        .await
        .expect("the watch opens")
}

/// The next event that is not a BOOKMARK, as (type, name, revision).
async fn next_change(stream: &mut EventStream) -> (String, String, u64) {
    loop {
        let event: WatchEvent = stream
            .next(EVENT_TIMEOUT)
            .await
            .expect("an event in time")
            .expect("the stream goes on");
        if event.kind == "BOOKMARK" {
            continue;
        }
        let name = event.name().expect("a named object").to_owned();
        let revision = event.revision().expect("a resourceVersion");
        return (event.kind, name, revision);
    }
}

/// Reads `expected.len()` changes from `stream` and checks them against `expected`, in order.
async fn expect_changes(stream: &mut EventStream, expected: &[(&str, &str, u64)], watch: &str) {
    for (kind, name, revision) in expected {
        let got = next_change(stream).await;
        assert_eq!(
            got,
            ((*kind).to_owned(), (*name).to_owned(), *revision),
            "{watch}"
        );
    }
}

// R-HA-010, R-RES-175
#[tokio::test]
async fn a_watch_sees_other_replicas_writes_once_in_order_and_resumes_elsewhere() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let (node1, node2, node3) = (
        cluster.client(1).unwrap(),
        cluster.client(2).unwrap(),
        cluster.client(3).unwrap(),
    );

    // A version obtained from node-1, a watch from it on node-3, writes through node-2.
    let start = revision(&create_configmap(node1, 1, "w-start", "0").await);
    let mut on_node3 = watch_from(node3, start).await;
    let a = revision(&create_configmap(node2, 2, "w-a", "1").await);
    let b = revision(&update_configmap(node2, 2, "w-a", "2").await);
    let c = revision(&create_configmap(node2, 2, "w-b", "1").await);
    delete_configmap(node2, 2, "w-a").await;
    let marker = revision(&create_configmap(node2, 2, "w-marker", "1").await);
    assert!(start < a && a < b && b < c && c < marker);
    // The deletion's revision lies between `c` and the marker's; exactly these five changes,
    // in this order, and nothing in between (the marker proves nothing else came first).
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(next_change(&mut on_node3).await);
    }
    let kinds: Vec<(&str, &str)> = seen
        .iter()
        .map(|(kind, name, _)| (kind.as_str(), name.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("ADDED", "w-a"),
            ("MODIFIED", "w-a"),
            ("ADDED", "w-b"),
            ("DELETED", "w-a"),
            ("ADDED", "w-marker"),
        ],
        "node-3 from {start}: {seen:?}"
    );
    let revisions: Vec<u64> = seen.iter().map(|(_, _, r)| *r).collect();
    assert_eq!(&revisions[..3], &[a, b, c]);
    assert!(
        c < revisions[3] && revisions[3] < marker,
        "deletion at {}",
        revisions[3]
    );
    assert_eq!(revisions[4], marker);
    drop(on_node3);

    // The client switches replicas: writes happen while it has no watch, then it resumes on
    // node-2 from the last version it saw. The next changes are exactly the missed ones.
    let d = revision(&create_configmap(node1, 1, "w-c", "1").await);
    let e = revision(&update_configmap(node3, 3, "w-b", "2").await);
    let mut on_node2 = watch_from(node2, marker).await;
    let f = revision(&create_configmap(node3, 3, "w-d", "1").await);
    expect_changes(
        &mut on_node2,
        &[
            ("ADDED", "w-c", d),
            ("MODIFIED", "w-b", e),
            ("ADDED", "w-d", f),
        ],
        "node-2 resumed from the marker",
    )
    .await;

    // The same resume on node-1 delivers the same events with the same versions.
    let mut on_node1 = watch_from(node1, marker).await;
    expect_changes(
        &mut on_node1,
        &[
            ("ADDED", "w-c", d),
            ("MODIFIED", "w-b", e),
            ("ADDED", "w-d", f),
        ],
        "node-1 resumed from the marker",
    )
    .await;
}

//! With `--watch-history=2s` the leader compacts the history a few seconds after a write, and
//! every replica then answers 410 Gone for the compacted versions alike: an Exact list, a
//! continue token and a watch from before the compaction point.

use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HttpClient;
use apiary_tests::objects;
use apiary_tests::watch_stream::EventStream;
use http::StatusCode;
use serde_json::Value;

use crate::create_configmap;
use crate::list_configmaps;
use crate::query_value;
use crate::revision;

/// How long the compaction may take to reach every replica: the history length, the sampling
/// period and a commit, with room for a loaded machine.
const COMPACTION_DEADLINE: Duration = Duration::from_secs(30);

/// Asserts that `reply` is a 410 Gone Status with reason Expired.
fn assert_expired(status: StatusCode, body: &Value, what: &str) {
    assert_eq!(status, StatusCode::GONE, "{what}: {body}");
    assert_eq!(body["kind"], "Status", "{what}: {body}");
    assert_eq!(body["code"], 410, "{what}: {body}");
    assert_eq!(body["reason"], "Expired", "{what}: {body}");
}

/// GETs `path` on `client`, returning the status and the JSON body.
async fn get_json(client: &HttpClient, path: &str) -> (StatusCode, Value) {
    let reply = client.get(path).await.expect("the replica answers");
    let body = reply.json(path).expect("a JSON body");
    (reply.status, body)
}

// R-RES-072, R-RES-071, R-RES-166, R-RES-176, R-HA-009, R-HA-008
#[tokio::test]
async fn compacted_versions_are_gone_alike_on_every_replica() {
    let cluster = DevCluster::start(DevOptions::default().flag("--watch-history=2s"))
        .await
        .unwrap();
    let node1 = cluster.client(1).unwrap();
    create_configmap(node1, 1, "old-1", "1").await;
    create_configmap(node1, 1, "old-2", "1").await;
    // The version that will be compacted away: the first page's, which its token remembers.
    let paged = list_configmaps(node1, 1, "limit=1").await;
    let old = revision(&paged);
    let token = paged["metadata"]["continue"]
        .as_str()
        .expect("a continue token")
        .to_owned();
    // A later write, so that the compaction point can pass `old` (compacting to a version
    // keeps that version readable).
    create_configmap(node1, 1, "later", "1").await;
    let exact_old = format!(
        "{}?resourceVersion={old}&resourceVersionMatch=Exact",
        objects::configmaps_path()
    );

    // Before the history is gone, every replica serves the old version (so the 410s below are
    // the compaction's doing).
    for replica in 1..=3 {
        let (status, body) = get_json(cluster.client(replica).unwrap(), &exact_old).await;
        assert_eq!(status, StatusCode::OK, "node-{replica}: {body}");
        assert_eq!(revision(&body), old, "node-{replica}");
    }

    // Compaction is a log entry: once applied it holds on every replica. Wait until each has
    // applied it (a bounded poll: compaction is a background task with no event to await).
    let start = Instant::now();
    for replica in 1..=3 {
        let client = cluster.client(replica).unwrap();
        loop {
            let (status, body) = get_json(client, &exact_old).await;
            if status == StatusCode::GONE {
                assert_expired(status, &body, &format!("Exact {old} on node-{replica}"));
                break;
            }
            assert_eq!(status, StatusCode::OK, "node-{replica}: {body}");
            assert!(
                start.elapsed() < COMPACTION_DEADLINE,
                "{old} still readable on node-{replica} after {COMPACTION_DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    // The same compaction point everywhere: the continue token and a watch from the old
    // version are gone on every replica too.
    let next_page = format!(
        "{}?limit=1&continue={}",
        objects::configmaps_path(),
        query_value(&token)
    );
    let watch_old = format!(
        "{}?watch=1&resourceVersion={old}",
        objects::configmaps_path()
    );
    for replica in 1..=3 {
        let client = cluster.client(replica).unwrap();
        let (status, body) = get_json(client, &next_page).await;
        assert_expired(status, &body, &format!("continue on node-{replica}"));

        // Kubernetes answers a watch from a compacted version with 200 and one ERROR event
        // carrying the 410 Status, then ends the stream.
        let mut watch = EventStream::open(client, &watch_old)
            .await
            .unwrap_or_else(|e| panic!("watch on node-{replica}: {e}"));
        let event = watch
            .next(Duration::from_secs(10))
            .await
            .unwrap()
            .expect("an ERROR event");
        assert_eq!(event.kind, "ERROR", "node-{replica}: {event:?}");
        assert_eq!(event.object["code"], 410, "node-{replica}: {event:?}");
        assert_eq!(
            event.object["reason"], "Expired",
            "node-{replica}: {event:?}"
        );
        assert_eq!(
            watch.next(Duration::from_secs(10)).await.unwrap(),
            None,
            "node-{replica}: the stream ends after the ERROR"
        );
    }

    // The recovery flow: a fresh list gives a version a new watch starts from (R-RES-176).
    for replica in 1..=3 {
        let client = cluster.client(replica).unwrap();
        let now = revision(&list_configmaps(client, replica, "").await);
        let path = format!(
            "{}?watch=1&resourceVersion={now}",
            objects::configmaps_path()
        );
        let mut watch = EventStream::open(client, &path).await.unwrap();
        let added = revision(&create_configmap(node1, 1, &format!("new-{replica}"), "1").await);
        let event = watch.next(Duration::from_secs(10)).await.unwrap().unwrap();
        assert_eq!(
            (event.kind.as_str(), event.revision()),
            ("ADDED", Some(added)),
            "node-{replica}"
        );
    }
}

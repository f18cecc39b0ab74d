//! Request-supplied numbers at and past their types' ends (C6): a watch with
//! `timeoutSeconds=9223372036854775807` (which panicked) streams, `timeoutSeconds=-1` is
//! accepted as Kubernetes accepts it, and other huge or negative limits, resourceVersions and
//! grace periods are answered without a server error; no replica restarts or logs a panic.

use std::time::Duration;

use apiary_tests::Flavor;
use apiary_tests::objects;
use apiary_tests::watch_stream::EventStream;
use http::Method;
use http::StatusCode;
use serde_json::json;

use crate::Hostile;
use crate::excerpt;

/// `i64::MAX`, the largest `timeoutSeconds` Kubernetes parses.
const I64_MAX: &str = "9223372036854775807";

/// How long the first event of the watch may take.
const FIRST_EVENT_LIMIT: Duration = Duration::from_secs(5);

/// Queries on the ConfigMap collection with numbers at or past their types' ends; each is
/// answered by anything but a server error.
const LIST_QUERIES: [&str; 8] = [
    "limit=9223372036854775807",
    "limit=18446744073709551616",
    "limit=-9223372036854775808",
    "timeoutSeconds=9223372036854775807",
    "resourceVersion=18446744073709551616",
    "resourceVersion=0&limit=9223372036854775807",
    "watch=true&timeoutSeconds=-9223372036854775808",
    "watch=true&timeoutSeconds=18446744073709551616",
];

#[tokio::test]
async fn huge_and_negative_numbers_in_requests_are_answered_without_a_panic() {
    let hostile = Hostile::start(Flavor::Platform).await;
    let collection = objects::configmaps_path();
    hostile
        .create(&collection, &objects::configmap("watched", &[("v", "1")]))
        .await;

    // The largest timeout saturates: the watch streams the initial events (one for "watched"
    // at least), then is dropped.
    for replica in 1..=hostile.cluster.nodes() {
        let path = format!("{collection}?watch=true&timeoutSeconds={I64_MAX}");
        let mut watch = EventStream::open(&hostile.hostile_client(replica), &path)
            .await
            .unwrap_or_else(|e| panic!("node-{replica}: {e}"));
        let event = watch
            .next(FIRST_EVENT_LIMIT)
            .await
            .unwrap_or_else(|e| panic!("node-{replica}: {e}"))
            .expect("an event before the stream ends");
        assert_eq!(event.kind, "ADDED", "node-{replica}: {:?}", event.object);
    }

    // A negative timeout is accepted (Kubernetes ends such a watch at once).
    let (status, _body) = hostile
        .hostile_client(2)
        .get_streaming(&format!("{collection}?watch=true&timeoutSeconds=-1"))
        .await
        .expect("an answer");
    assert_eq!(status, StatusCode::OK);

    for (i, query) in LIST_QUERIES.iter().enumerate() {
        let replica = i % hostile.cluster.nodes() + 1;
        let path = format!("{collection}?{query}");
        let (status, _body) = hostile
            .hostile_client(replica)
            .get_streaming(&path)
            .await
            .unwrap_or_else(|e| panic!("{path} on node-{replica}: {e}"));
        assert!(!status.is_server_error(), "{path}: {status}");
    }

    // Grace periods at the ends of int64, in the query and in the body, on a kind that has
    // graceful deletion.
    let pods = "/api/v1/namespaces/default/pods";
    // Pods run as the namespace's `default` account, which the leader's controller creates a
    // moment after the start: wait (up to 30 s) until replica 1 has it.
    let account = "/api/v1/namespaces/default/serviceaccounts/default";
    for _ in 0..300 {
        let reply = hostile.client(1).get(account).await;
        if reply.is_ok_and(|r| r.status == StatusCode::OK) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for (name, query, body) in [
        ("grace-max", format!("?gracePeriodSeconds={I64_MAX}"), None),
        (
            "grace-min",
            String::new(),
            Some(
                json!({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": i64::MIN}),
            ),
        ),
    ] {
        let pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": { "name": name },
            "spec": {
                "terminationGracePeriodSeconds": i64::MAX,
                "containers": [{ "name": "c", "image": "busybox" }],
            },
        });
        let created = hostile
            .send(1, Method::POST, pods, "application/json", pod.to_string())
            .await;
        assert_eq!(
            created.status,
            StatusCode::CREATED,
            "create {name}: {}",
            excerpt(&created.body)
        );
        let client = hostile.hostile_client(2);
        let path = format!("{pods}/{name}{query}");
        let deleted = match body {
            Some(body) => {
                client
                    .send_typed(
                        Method::DELETE,
                        &path,
                        "application/json",
                        body.to_string().into(),
                    )
                    .await
            }
            None => client.delete(&path).await,
        }
        .unwrap_or_else(|e| panic!("DELETE {path}: {e}"));
        assert!(
            !deleted.status.is_server_error(),
            "DELETE {path}: {}",
            excerpt(&deleted.body)
        );
    }

    hostile.assert_unharmed().await;
}

//! Namespace deletion on a real 3-replica cluster: the namespace controller (leader-only)
//! empties a terminating namespace of every kind, leaves objects held by finalizers and
//! reports them in the namespace's conditions, and the namespace disappears once the test
//! removes those finalizers; a watch sees MODIFIED (Terminating) then DELETED. Deletion half
//! done when the leader is killed is finished by the next leader.

use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::HttpClient;
use apiary_tests::watch_stream::EventStream;
use futures::StreamExt;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

/// How long the namespace controller may take to reach a state.
const CONVERGE: Duration = Duration::from_secs(60);

/// The finalizer the test puts on the objects it releases later.
const HOLD: &str = "example.com/hold";

/// A kind the tests create: its collection path under a namespace and a body for a name
/// in a namespace.
struct Kind {
    collection: &'static str,
    body: fn(&str, &str) -> Value,
}

/// Ten namespaced kinds of five API groups, with bodies their validation accepts.
const KINDS: [Kind; 10] = [
    Kind {
        collection: "/api/v1/namespaces/{ns}/configmaps",
        body: |n, _| json!({"metadata": {"name": n}, "data": {"k": "v"}}),
    },
    Kind {
        collection: "/api/v1/namespaces/{ns}/secrets",
        body: |n, _| json!({"metadata": {"name": n}, "data": {}}),
    },
    Kind {
        collection: "/api/v1/namespaces/{ns}/serviceaccounts",
        body: |n, _| json!({"metadata": {"name": n}}),
    },
    Kind {
        collection: "/api/v1/namespaces/{ns}/endpoints",
        body: |n, _| json!({"metadata": {"name": n}, "subsets": []}),
    },
    Kind {
        collection: "/api/v1/namespaces/{ns}/resourcequotas",
        body: |n, _| json!({"metadata": {"name": n}, "spec": {}}),
    },
    Kind {
        collection: "/api/v1/namespaces/{ns}/events",
        body: |n, ns| {
            json!({"metadata": {"name": n}, "reason": "Test", "message": "m",
                "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": ns}})
        },
    },
    Kind {
        collection: "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
        body: |n, _| json!({"metadata": {"name": n}, "spec": {}}),
    },
    Kind {
        collection: "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
        body: |n, _| json!({"metadata": {"name": n}, "rules": []}),
    },
    Kind {
        collection: "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
        body: |n, _| {
            json!({"metadata": {"name": n},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}})
        },
    },
    Kind {
        collection: "/apis/apps/v1/namespaces/{ns}/controllerrevisions",
        body: |n, _| json!({"metadata": {"name": n}, "data": {"k": "v"}, "revision": 1}),
    },
];

impl Kind {
    fn path(&self, ns: &str) -> String {
        self.collection.replace("{ns}", ns)
    }
}

/// Creates `name` of `kind` in `ns`, with the [`HOLD`] finalizer when `held`; retried while
/// the cluster elects a leader.
async fn create(client: &HttpClient, kind: &Kind, ns: &str, name: &str, held: bool) {
    let mut body = (kind.body)(name, ns);
    if held {
        body["metadata"]["finalizers"] = json!([HOLD]);
    }
    let path = kind.path(ns);
    let mut last = String::new();
    for _ in 0..50 {
        match client.post(&path, &body).await {
            Ok(r) if r.status == StatusCode::CREATED || r.status == StatusCode::CONFLICT => return,
            Ok(r) => last = format!("{}: {}", r.status, r.text()),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("create {path} {name}: {last}");
}

/// The items at `path`; an unreachable replica or an error answer is `None`.
async fn items(client: &HttpClient, path: &str) -> Option<Vec<Value>> {
    let reply = client.get(path).await.ok()?;
    if reply.status != StatusCode::OK {
        return None;
    }
    reply.json(path).ok()?["items"].as_array().cloned()
}

/// The namespace `ns` as `client` reads it (`None`: 404); an error answer is retried.
async fn namespace(client: &HttpClient, ns: &str) -> Option<Value> {
    let path = format!("/api/v1/namespaces/{ns}");
    for _ in 0..50 {
        if let Ok(reply) = client.get(&path).await {
            match reply.status {
                StatusCode::OK => return reply.json(&path).ok(),
                StatusCode::NOT_FOUND => return None,
                _ => {}
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{path} cannot be read");
}

/// The condition `kind` of `ns`.
fn condition(ns: &Value, kind: &str) -> Value {
    ns["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind)
        .cloned()
        .unwrap_or(Value::Null)
}

/// Polls `ns` through `client` until `done` holds for it (`None`: it is gone), within
/// [`CONVERGE`]; the last state read.
async fn until(
    client: &HttpClient,
    ns: &str,
    what: &str,
    done: impl Fn(&Option<Value>) -> bool,
) -> Option<Value> {
    let deadline = Instant::now() + CONVERGE;
    loop {
        let state = namespace(client, ns).await;
        if done(&state) {
            return state;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not reached; last {state:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Removes the [`HOLD`] finalizer from every object of `kind` in `ns` that has it.
async fn release(client: &HttpClient, kind: &Kind, ns: &str) {
    let path = kind.path(ns);
    for _ in 0..50 {
        let Some(list) = items(client, &path).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let held: Vec<&Value> = list
            .iter()
            .filter(|o| {
                o["metadata"]["finalizers"]
                    .as_array()
                    .is_some_and(|f| !f.is_empty())
            })
            .collect();
        if held.is_empty() {
            return;
        }
        for object in held {
            let mut object = object.clone();
            object["metadata"]["finalizers"] = json!([]);
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            // A conflict or an election is retried by the next round.
            let _ = client.put(&format!("{path}/{name}"), &object).await;
        }
    }
    panic!("the objects at {path} could not be released");
}

/// The next event of `stream` about `name` of type `wanted` (others are skipped).
async fn next_of(stream: &mut EventStream, name: &str, wanted: &str) -> Value {
    let deadline = Instant::now() + CONVERGE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = stream
            .next(left)
            .await
            .unwrap_or_else(|e| panic!("waiting for {wanted} of {name}: {e}"))
            .unwrap_or_else(|| panic!("the watch ended before {wanted} of {name}"));
        if event.kind == wanted && event.name() == Some(name) {
            return event.object;
        }
    }
}

// R-RES-015, R-RES-026, R-RES-060, R-RES-061: deleting a namespace marks it Terminating (a
// watch sees MODIFIED with deletionTimestamp), the controller deletes every object of every
// kind in it but those held by finalizers, reports them in the namespace's conditions, and
// the namespace is DELETED once the test removes the finalizers; other namespaces keep
// their content.
#[tokio::test]
async fn a_deleted_namespace_is_emptied_and_removed() {
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let (one, two, three) = (
        cluster.client(1).unwrap(),
        cluster.client(2).unwrap(),
        cluster.client(3).unwrap(),
    );
    for ns in ["doomed", "kept"] {
        let created = one
            .post("/api/v1/namespaces", &json!({"metadata": {"name": ns}}))
            .await
            .unwrap();
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
        for (i, kind) in KINDS.iter().take(6).enumerate() {
            create(one, kind, ns, &format!("o{i}"), false).await;
        }
        create(one, &KINDS[0], ns, "held", true).await;
        create(one, &KINDS[7], ns, "held", true).await;
    }
    let watch = "/api/v1/namespaces?watch=1&fieldSelector=metadata.name%3Ddoomed";
    let mut stream = EventStream::open(three, watch).await.unwrap();
    next_of(&mut stream, "doomed", "ADDED").await;

    let deleted = two.delete("/api/v1/namespaces/doomed").await.unwrap();
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    let answer = deleted.json("/api/v1/namespaces/doomed").unwrap();
    assert_eq!(answer["status"]["phase"], "Terminating");
    let marked = next_of(&mut stream, "doomed", "MODIFIED").await;
    assert_eq!(marked["status"]["phase"], "Terminating");
    let since = marked["metadata"]["deletionTimestamp"].clone();
    assert!(since.is_string(), "{marked}");

    let ns = until(one, "doomed", "the finalizers reported", |ns| {
        ns.as_ref()
            .is_some_and(|ns| condition(ns, "NamespaceFinalizersRemaining")["status"] == "True")
    })
    .await
    .expect("the namespace is held");
    assert_eq!(ns["metadata"]["deletionTimestamp"], since, "never moved");
    let remaining = condition(&ns, "NamespaceContentRemaining");
    assert_eq!(remaining["status"], "True", "{ns}");
    assert_eq!(remaining["reason"], "SomeResourcesRemain");
    assert_eq!(
        remaining["message"],
        "Some resources are remaining: configmaps. has 1 resource instances, roles.rbac.authorization.k8s.io has 1 resource instances"
    );
    let finalizers = condition(&ns, "NamespaceFinalizersRemaining");
    assert_eq!(finalizers["reason"], "SomeFinalizerRemain");
    assert_eq!(
        finalizers["message"],
        "Some finalizers are remaining: example.com/hold in 2 resource instances"
    );
    assert_eq!(
        condition(&ns, "NamespaceDeletionContentFailure")["status"],
        "False"
    );
    for (i, kind) in KINDS.iter().take(8).enumerate() {
        let left = items(two, &kind.path("doomed")).await.expect("a list");
        let names: Vec<&str> = left
            .iter()
            .filter_map(|o| o["metadata"]["name"].as_str())
            .collect();
        let expected: &[&str] = if i == 0 || i == 7 { &["held"] } else { &[] };
        assert_eq!(names, expected, "{}", kind.collection);
    }
    let refused = three
        .post(&KINDS[0].path("doomed"), &(KINDS[0].body)("late", "doomed"))
        .await
        .unwrap();
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text());
    let status = refused.json("refusal").unwrap();
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "NamespaceTerminating"
    );

    release(three, &KINDS[0], "doomed").await;
    release(three, &KINDS[7], "doomed").await;
    next_of(&mut stream, "doomed", "DELETED").await;
    assert!(namespace(one, "doomed").await.is_none());
    for (i, kind) in KINDS.iter().take(6).enumerate() {
        let kept = items(one, &kind.path("kept")).await.expect("a list");
        // What the controllers publish in every namespace is not the test's.
        let published = ["kube-root-ca.crt", "default"];
        let own = (kept.iter())
            .filter(|o| !published.iter().any(|p| o["metadata"]["name"] == *p))
            .count();
        let expected = if i == 0 { 2 } else { 1 };
        assert_eq!(own, expected, "{} in kept", kind.collection);
    }
    let kept = namespace(one, "kept").await.expect("kept stays");
    assert_eq!(kept["status"]["phase"], "Active");
}

/// Objects per kind in the failover test (10 kinds: 1,000 objects).
const PER_KIND: usize = 100;

/// Every how many objects one is held by a finalizer.
const HELD_EVERY: usize = 20;

// R-RES-015, R-RES-061 (issue 19 item 6): a namespace of 1,000 objects of 10 kinds, some held
// by finalizers, is deleted; the leader (which runs the namespace controller) is killed once
// deletion has started; the next leader finishes it: after the test removes the finalizers the
// namespace is empty and gone.
#[tokio::test]
async fn namespace_deletion_survives_the_loss_of_the_leader() {
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let leader = cluster
        .wait_leader(Duration::from_secs(10))
        .await
        .expect("the logs name a leader");
    let survivors: Vec<usize> = (1..=3).filter(|&i| i != leader).collect();
    let writer = cluster.client(survivors[0]).unwrap();
    let reader = cluster.client(survivors[1]).unwrap();
    let created = writer
        .post("/api/v1/namespaces", &json!({"metadata": {"name": "big"}}))
        .await
        .unwrap();
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let work: Vec<(usize, usize)> = (0..KINDS.len())
        .flat_map(|k| (0..PER_KIND).map(move |i| (k, i)))
        .collect();
    futures::stream::iter(work)
        .for_each_concurrent(16, |(k, i)| async move {
            let held = i % HELD_EVERY == 0;
            create(writer, &KINDS[k], "big", &format!("o{i}"), held).await;
        })
        .await;

    let deleted = writer.delete("/api/v1/namespaces/big").await.unwrap();
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    // Kill the leader once the controller has begun to delete (some config maps are gone).
    let first = KINDS[0].path("big");
    let deadline = Instant::now() + CONVERGE;
    loop {
        let left = items(reader, &first).await.map_or(PER_KIND, |l| l.len());
        if left < PER_KIND {
            break;
        }
        assert!(Instant::now() < deadline, "deletion never began");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!("deletion began; killing the leader, node-{leader}");
    cluster.kill_replica(leader).unwrap();

    // The next leader carries on: the held objects are all that remain, and reported. Events
    // are served by two groups (core and events.k8s.io), so, as in Kubernetes, they are
    // counted twice.
    let ns = until(
        reader,
        "big",
        "the finalizers reported by the next leader",
        |ns| {
            ns.as_ref().is_some_and(|ns| {
                condition(ns, "NamespaceFinalizersRemaining")["message"]
                    == format!(
                        "Some finalizers are remaining: {HOLD} in {} resource instances",
                        (KINDS.len() + 1) * PER_KIND / HELD_EVERY
                    )
            })
        },
    )
    .await
    .expect("the namespace is held");
    assert_eq!(
        condition(&ns, "NamespaceContentRemaining")["status"],
        "True"
    );
    for kind in &KINDS {
        let left = items(reader, &kind.path("big")).await.expect("a list");
        assert_eq!(left.len(), PER_KIND / HELD_EVERY, "{}", kind.collection);
    }
    for kind in &KINDS {
        release(writer, kind, "big").await;
    }
    until(reader, "big", "the namespace removed", Option::is_none).await;
    for kind in &KINDS {
        let left = items(reader, &kind.path("big")).await.expect("a list");
        assert!(
            left.is_empty(),
            "{} outlived its namespace",
            kind.collection
        );
    }
}

//! The unknown-field bomb (C4): a 2.9 MB body whose 250,000 unknown fields all sit below one
//! 1.4 MB map key, so that a decoder building every unknown field's path copies the key each
//! time. Each field validation mode answers in bounded time with bounded warnings and errors,
//! and two such requests at the leader neither freeze the replicas nor cost it its leadership.

use std::cell::Cell;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::Flavor;
use apiary_tests::Reply;
use bytes::Bytes;
use http::Method;
use http::StatusCode;
use http::header;
use serde_json::Value;
use serde_json::json;

use crate::ANSWER_LIMIT;
use crate::Hostile;
use crate::assert_error;
use crate::excerpt;

/// The collection of the kind: `ResourceSlice` has a map whose values are objects
/// (`spec.devices[].attributes`), so unknown fields can sit below a map key of any length.
const RESOURCE_SLICES: &str = "/apis/resource.k8s.io/v1/resourceslices";

/// The length of the one map key every unknown field's path goes through.
const BIG_KEY_BYTES: usize = 1_400_000;

/// How many unknown fields the body holds below the big key.
const UNKNOWN_FIELDS: usize = 250_000;

/// How many of the unknown fields have names of their own (the rest repeat one name), more than
/// the 100 findings a decoder reports.
const DISTINCT_UNKNOWN_FIELDS: usize = 200;

/// The most bytes of `Warning` headers one answer may carry: Kubernetes keeps 4,096 runes of
/// warnings in total (`endpoints/filters/warning.go`), here ASCII, plus each header's
/// `299 - "..."` framing and escapes.
const MAX_WARNING_BYTES: usize = 8 * 1024;

/// How long each probe of a replica may take while the bombs run at the leader.
const PROBE_LIMIT: Duration = Duration::from_secs(5);

/// The pause between two rounds of probes.
const PROBE_PAUSE: Duration = Duration::from_millis(200);

/// The most rounds of probes (a bound on the loop besides the bombs' own deadline).
const MAX_PROBE_ROUNDS: usize = 200;

/// How long after the bombs the logs are read for an election (a few election timeouts).
const ELECTION_SETTLE: Duration = Duration::from_secs(3);

/// A `ResourceSlice` named `name` whose one device attribute has a [`BIG_KEY_BYTES`] key and
/// holds [`UNKNOWN_FIELDS`] unknown fields besides its known `bool`.
fn bomb(name: &str) -> Bytes {
    const PLACEHOLDER: &str = "BIG-KEY";
    let skeleton = json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": { "name": name },
        "spec": {
            "driver": "hostile.example.com",
            "pool": { "name": "pool", "generation": 1, "resourceSliceCount": 1 },
            "allNodes": true,
            "devices": [{ "name": "device", "attributes": { PLACEHOLDER: { "bool": true } } }],
        },
    })
    .to_string();
    let mut inner = format!("\"{}\":{{", "k".repeat(BIG_KEY_BYTES));
    for i in 0..UNKNOWN_FIELDS {
        if i < DISTINCT_UNKNOWN_FIELDS {
            inner.push_str(&format!("\"u{i}\":0,"));
        } else {
            inner.push_str("\"x\":0,");
        }
    }
    let body = skeleton.replacen(&format!("\"{PLACEHOLDER}\":{{"), &inner, 1);
    assert!(
        (2_800_000..3 * 1024 * 1024).contains(&body.len()),
        "the bomb is {} bytes, meant to be 2.9 MB and under the 3 MiB body limit",
        body.len()
    );
    Bytes::from(body)
}

/// The item path of the slice `name`.
fn slice_path(name: &str) -> String {
    format!("{RESOURCE_SLICES}/{name}")
}

/// Creates the bomb `name` on replica `replica` with `?fieldValidation=mode`.
async fn create(hostile: &Hostile, replica: usize, name: &str, mode: &str) -> Reply {
    hostile
        .send(
            replica,
            Method::POST,
            &format!("{RESOURCE_SLICES}?fieldValidation={mode}"),
            "application/json",
            bomb(name),
        )
        .await
}

/// The stored slice keeps the big key with only its known field.
fn assert_stored_without_unknown_fields(slice: &Value) {
    let attributes = slice["spec"]["devices"][0]["attributes"]
        .as_object()
        .expect("the device's attributes");
    assert_eq!(attributes.len(), 1);
    let (key, attribute) = attributes.iter().next().expect("one attribute");
    assert_eq!(key.len(), BIG_KEY_BYTES);
    assert_eq!(*attribute, json!({ "bool": true }));
}

// R-RES-185
#[tokio::test]
async fn unknown_field_bombs_are_answered_in_bounded_time_and_size_and_spare_the_leader() {
    let hostile = Hostile::start(Flavor::Kubernetes).await;

    // Ignore: stored without the unknown fields, silently.
    let reply = create(&hostile, 2, "bomb-ignore", "Ignore").await;
    assert_eq!(
        reply.status,
        StatusCode::CREATED,
        "{}",
        excerpt(&reply.body)
    );
    assert!(reply.headers.get(header::WARNING).is_none());
    let stored = hostile.read(3, &slice_path("bomb-ignore")).await;
    assert_stored_without_unknown_fields(&stored);

    // Warn: stored, with a capped set of warnings.
    let reply = create(&hostile, 2, "bomb-warn", "Warn").await;
    assert_eq!(
        reply.status,
        StatusCode::CREATED,
        "{}",
        excerpt(&reply.body)
    );
    let warnings: Vec<&[u8]> = reply
        .headers
        .get_all(header::WARNING)
        .iter()
        .map(|value| value.as_bytes())
        .collect();
    let warning_bytes: usize = warnings.iter().map(|w| w.len()).sum();
    assert!(
        !warnings.is_empty() && warning_bytes <= MAX_WARNING_BYTES,
        "{} warnings of {warning_bytes} bytes in all",
        warnings.len()
    );
    if let Some(other) = warnings
        .iter()
        .find(|w| !String::from_utf8_lossy(w).contains("unknown field"))
    {
        panic!("a warning not about an unknown field: {}", excerpt(other));
    }
    let stored = hostile.read(1, &slice_path("bomb-warn")).await;
    assert_stored_without_unknown_fields(&stored);

    // Strict: refused with a bounded list of the unknown fields, nothing stored.
    let reply = create(&hostile, 2, "bomb-strict", "Strict").await;
    assert_error(
        &reply,
        StatusCode::BAD_REQUEST,
        "BadRequest",
        "unknown field",
    );
    hostile.assert_absent(&slice_path("bomb-strict")).await;

    // Two at once at the leader.
    let leader = hostile
        .cluster
        .wait_leader(Duration::from_secs(10))
        .await
        .expect("the logs name a leader");
    let elections = hostile.leader_elections();

    let done = Cell::new(false);
    let bombs = async {
        let answers = futures::future::join(
            create(&hostile, leader, "bomb-a", "Strict"),
            create(&hostile, leader, "bomb-b", "Strict"),
        )
        .await;
        done.set(true);
        answers
    };
    // Every replica keeps answering its readiness probe and a read while the bombs run.
    let probes = async {
        let mut stalls = Vec::new();
        let mut rounds = 0;
        while (!done.get() || rounds == 0) && rounds < MAX_PROBE_ROUNDS {
            for replica in 1..=hostile.cluster.nodes() {
                let client = hostile.client(replica).clone().with_timeout(PROBE_LIMIT);
                for path in ["/readyz", "/api/v1/namespaces/default"] {
                    let start = Instant::now();
                    match client.get(path).await {
                        Ok(reply) if reply.status == StatusCode::OK => {}
                        Ok(reply) => stalls.push(format!(
                            "node-{replica} {path}: {} after {:?}",
                            reply.status,
                            start.elapsed()
                        )),
                        Err(e) => stalls.push(format!("node-{replica} {path}: {e}")),
                    }
                }
            }
            rounds += 1;
            tokio::time::sleep(PROBE_PAUSE).await;
        }
        (rounds, stalls)
    };
    let ((first, second), (rounds, stalls)) = futures::join!(bombs, probes);
    for reply in [first, second] {
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "unknown field",
        );
    }
    eprintln!("{rounds} rounds of probes while the bombs ran (answer limit {ANSWER_LIMIT:?})");
    assert!(stalls.is_empty(), "replicas stalled: {stalls:#?}");
    hostile.assert_absent(&slice_path("bomb-a")).await;
    hostile.assert_absent(&slice_path("bomb-b")).await;

    tokio::time::sleep(ELECTION_SETTLE).await;
    assert_eq!(hostile.cluster.leader(), Some(leader), "the leader changed");
    assert_eq!(
        hostile.leader_elections(),
        elections,
        "a replica became leader during the bombs"
    );

    hostile.assert_unharmed().await;
}

//! Consensus is not at the mercy of request work: a leader whose API is saturated with expensive
//! requests keeps its leadership (raft and the peer transport run on their own threads), and a
//! dead follower costs the leader's log a line or two, not one per failed heartbeat.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::Reply;
use apiary_tests::objects;
use bytes::Bytes;
use http::Method;
use http::StatusCode;
use serde_json::Value;

use crate::create_configmap;

/// How long the leader's API is flooded.
const FLOOD: Duration = Duration::from_secs(20);

/// Concurrent clients of the flood: many times the cores of a small machine, so the API always
/// has work queued.
const FLOODERS: usize = 48;

/// Keys of each large ConfigMap: 60,000 one-byte entries (about 1 MiB of JSON, under the
/// 1.5 MiB object limit) cost far more to decode, validate and encode than one large value.
const KEYS: usize = 60_000;

/// Stored large ConfigMaps: the items of the flood's lists (the first is the one it updates).
const STORED: usize = 4;

/// How long every replica gets to report ready after the flood.
const READY_LIMIT: Duration = Duration::from_secs(30);

/// The line openraft logs (at info, which the harness enables for it) when a replica wins an
/// election.
const LEADERSHIP_LINE: &str = "becomes leader";

/// How long the leader runs with a dead follower.
const DEAD_FOLLOWER: Duration = Duration::from_secs(10);

/// Warnings the leader may log in [`DEAD_FOLLOWER`] about the dead follower: the line saying it
/// became unreachable, and some slack. Before the peer logging had a back-off, it was one per
/// failed heartbeat and replication attempt (hundreds in that time).
const DEAD_FOLLOWER_WARNINGS: usize = 5;

/// A ConfigMap named `name` with [`KEYS`] entries, encoded.
fn large_configmap(name: &str) -> Bytes {
    let data: serde_json::Map<String, Value> = (0..KEYS)
        .map(|i| (format!("k-{i:05}"), Value::from("v")))
        .collect();
    let mut object = objects::configmap(name, &[]);
    object["data"] = Value::Object(data);
    Bytes::from(object.to_string())
}

/// The lines of replica `index`'s log.
fn log_lines(cluster: &DevCluster, index: usize) -> Vec<String> {
    std::fs::read_to_string(cluster.log_file(index))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// How many lines of replica `index`'s log contain `needle`.
fn count_lines(cluster: &DevCluster, index: usize, needle: &str) -> usize {
    log_lines(cluster, index)
        .iter()
        .filter(|line| line.contains(needle))
        .count()
}

/// Counts of a flood's answers.
#[derive(Default)]
struct Tally {
    succeeded: AtomicU64,
    failed: AtomicU64,
    /// The first failure, for the report.
    first_failure: Mutex<Option<String>>,
}

impl Tally {
    fn record(&self, reply: Result<Reply, HarnessError>) {
        let failure = match reply {
            Ok(reply) if reply.status.is_success() => {
                self.succeeded.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Ok(reply) => format!("{}: {}", reply.status, reply.text()),
            Err(error) => error.to_string(),
        };
        self.failed.fetch_add(1, Ordering::Relaxed);
        self.first_failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(failure);
    }
}

/// One flooding client: until `deadline`, sends request after request of one `kind` to
/// `client`: a dry-run create of a large ConfigMap (`create`), a dry-run update of a stored one
/// (`update`), or a list of them all. Dry runs do all the work of a write but store nothing, so
/// the flood burns CPU, not disk.
async fn flood(
    client: HttpClient,
    kind: usize,
    create: Bytes,
    update: Bytes,
    deadline: Instant,
    tally: Arc<Tally>,
) {
    let collection = objects::configmaps_path();
    let create_path = format!("{collection}?dryRun=All");
    let update_path = format!("{}?dryRun=All", objects::configmap_path("large-0"));
    while Instant::now() < deadline {
        let reply = match kind % 3 {
            0 => {
                client
                    .send_bytes(Method::POST, &create_path, Some(create.clone()))
                    .await
            }
            1 => {
                client
                    .send_bytes(Method::PUT, &update_path, Some(update.clone()))
                    .await
            }
            _ => client.get(&collection).await,
        };
        tally.record(reply);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_keeps_its_leadership_while_its_api_is_flooded() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let leader = cluster
        .wait_leader(Duration::from_secs(30))
        .await
        .expect("a leader is elected");
    let client = cluster.client(leader).unwrap().clone();
    for i in 0..STORED {
        let name = format!("large-{i}");
        let reply = client
            .send_bytes(
                Method::POST,
                &objects::configmaps_path(),
                Some(large_configmap(&name)),
            )
            .await
            .unwrap();
        assert_eq!(
            reply.status,
            StatusCode::CREATED,
            "{name}: {}",
            reply.text()
        );
    }
    let elections = |cluster: &DevCluster| -> Vec<usize> {
        (1..=cluster.nodes())
            .map(|i| count_lines(cluster, i, LEADERSHIP_LINE))
            .collect()
    };
    let before = elections(&cluster);

    let tally = Arc::new(Tally::default());
    let deadline = Instant::now() + FLOOD;
    let create = large_configmap("flood");
    let update = large_configmap("large-0");
    let flooders: Vec<_> = (0..FLOODERS)
        .map(|kind| {
            tokio::spawn(flood(
                client.clone(),
                kind,
                create.clone(),
                update.clone(),
                deadline,
                tally.clone(),
            ))
        })
        .collect();
    for flooder in flooders {
        flooder.await.unwrap();
    }
    let succeeded = tally.succeeded.load(Ordering::Relaxed);
    let failed = tally.failed.load(Ordering::Relaxed);
    let first_failure = tally.first_failure.lock().unwrap().take();
    eprintln!(
        "flood of node-{leader}: {succeeded} requests answered, {failed} failed (first: {})",
        first_failure.as_deref().unwrap_or("none")
    );

    assert_eq!(
        elections(&cluster),
        before,
        "no replica won an election during the flood of node-{leader}\n{}",
        cluster.log_tails(20)
    );
    assert_eq!(cluster.leader(), Some(leader), "node-{leader} still leads");
    assert!(
        succeeded >= FLOODERS as u64,
        "the flood was served: {succeeded} answered, {failed} failed"
    );
    let ready_by = Instant::now() + READY_LIMIT;
    for i in 1..=cluster.nodes() {
        let waited = cluster
            .client(i)
            .unwrap()
            .wait_until_ok("/readyz", ready_by, Duration::from_millis(100), || Ok(()))
            .await
            .unwrap();
        assert!(
            waited.is_ok(),
            "node-{i} is ready after the flood: {waited:?}"
        );
    }
}

#[tokio::test]
async fn a_dead_follower_costs_the_leaders_log_a_line_not_one_per_heartbeat() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let leader = cluster
        .wait_leader(Duration::from_secs(30))
        .await
        .expect("a leader is elected");
    let follower = (1..=cluster.nodes())
        .find(|&i| i != leader)
        .expect("a follower");
    let client = cluster.client(leader).unwrap();
    let logged_before = log_lines(&cluster, leader).len();

    cluster.kill_replica(follower).unwrap();
    // Writes keep flowing, as in production: each one is replicated (or tried) to every peer.
    let start = Instant::now();
    let mut written = 0usize;
    while start.elapsed() < DEAD_FOLLOWER {
        create_configmap(client, leader, &format!("written-{written}"), "v").await;
        written += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let warnings: Vec<String> = log_lines(&cluster, leader)
        .into_iter()
        .skip(logged_before)
        .filter(|line| line.contains(" WARN "))
        .collect();
    assert!(
        warnings.len() <= DEAD_FOLLOWER_WARNINGS,
        "node-{leader} logged {} warnings in {DEAD_FOLLOWER:?} with node-{follower} dead \
         ({written} writes):\n{}",
        warnings.len(),
        warnings
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        warnings.iter().any(|line| line.contains("unreachable")),
        "node-{leader} says that node-{follower} is unreachable: {warnings:#?}"
    );
}

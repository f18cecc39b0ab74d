//! Rolling upgrade and rollback against an older build: a cluster of the binary built from the
//! commit pinned in `scripts/old-apiary-commit` (`APIARY_OLD_BIN`, built by
//! `scripts/old-apiary`) is upgraded replica by replica to the current build under steady
//! create, get and watch load, then one replica is rolled back to the old build.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::Reply;
use apiary_tests::binary::apiary_binary;
use apiary_tests::objects;
use apiary_tests::watch_stream::EventStream;
use http::StatusCode;
use serde_json::Value;

/// The environment variable naming the old build.
const OLD_BIN: &str = "APIARY_OLD_BIN";

/// How long the load runs on its own between two steps.
const STEP_LOAD: Duration = Duration::from_secs(3);

/// How long a retried request, a read-back or the effective version may take.
const SETTLE: Duration = Duration::from_secs(30);

/// A pause between two attempts.
const PAUSE: Duration = Duration::from_millis(100);

/// The line the leader logs when it records the cluster's effective version.
const EFFECTIVE_LINE: &str = "recorded the cluster's effective version";

/// The old build, which the test requires: it fails rather than skip without one.
fn old_binary() -> PathBuf {
    let path = std::env::var_os(OLD_BIN).map(PathBuf::from);
    match path {
        Some(path) if path.is_file() => path,
        other => panic!(
            "{OLD_BIN} is {other:?}: the rolling upgrade test needs the old build; run \
             `export {OLD_BIN}=\"$(scripts/old-apiary)\"` (scripts/test does)"
        ),
    }
}

/// What the load saw.
#[derive(Default)]
struct Record {
    /// Acknowledged creates: name to resourceVersion.
    acked: BTreeMap<String, u64>,
    /// Creates whose outcome is unknown (504), to read back at the end.
    unknown: BTreeSet<String>,
    /// Answers the clients retried (503, 429).
    retried: usize,
    /// Requests that failed otherwise: the test fails on any.
    failures: Vec<String>,
}

/// What became of one request.
enum Settled {
    /// An answer to judge.
    Answered(Reply),
    /// A retriable answer: send again.
    Retry,
    /// Recorded as a failure.
    Failed,
}

/// The shared state of the load: which replica is being replaced (0: none) and what happened.
struct Load {
    clients: Vec<HttpClient>,
    down: AtomicUsize,
    stop: AtomicBool,
    record: Mutex<Record>,
}

impl Load {
    fn record(&self) -> std::sync::MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A replica that is not being replaced, rotating with `turn`.
    fn client(&self, turn: usize) -> (usize, &HttpClient) {
        let down = self.down.load(Ordering::SeqCst);
        let up: Vec<usize> = (1..=self.clients.len()).filter(|i| *i != down).collect();
        let index = up[turn % up.len()];
        (index, &self.clients[index - 1])
    }

    /// Creates `name` until it is acknowledged or its outcome is unknown, retrying 503 and
    /// 429; a 409 after an earlier attempt means that attempt took effect.
    async fn create(&self, turn: usize, name: &str) {
        let path = objects::configmaps_path();
        let body = objects::configmap(name, &[("v", name)]);
        let start = Instant::now();
        for attempt in 0.. {
            let (index, client) = self.client(turn + attempt);
            let reply = client.post(&path, &body).await;
            let what = format!("create {name} on node-{index}");
            match self.settle(&what, reply, start) {
                Settled::Answered(reply) if reply.status == StatusCode::CREATED => {
                    let created = reply.json(&path).unwrap_or_default();
                    self.record()
                        .acked
                        .insert(name.to_owned(), revision(&created));
                    return;
                }
                Settled::Answered(reply)
                    if reply.status == StatusCode::GATEWAY_TIMEOUT
                        || (reply.status == StatusCode::CONFLICT && attempt > 0) =>
                {
                    self.record().unknown.insert(name.to_owned());
                    return;
                }
                Settled::Answered(reply) => {
                    self.failed(format!("{what}: {}: {}", reply.status, reply.text()));
                    return;
                }
                Settled::Retry => tokio::time::sleep(PAUSE).await,
                Settled::Failed => return,
            }
        }
    }

    /// Reads `name` (acknowledged) until it is served, retrying 503 and 429.
    async fn get(&self, turn: usize, name: &str) {
        let path = objects::configmap_path(name);
        let start = Instant::now();
        for attempt in 0.. {
            let (index, client) = self.client(turn + attempt);
            let reply = client.get(&path).await;
            let what = format!("get {name} on node-{index}");
            match self.settle(&what, reply, start) {
                Settled::Answered(reply) if reply.status == StatusCode::OK => return,
                Settled::Answered(reply) => {
                    self.failed(format!("{what}: {}: {}", reply.status, reply.text()));
                    return;
                }
                Settled::Retry => tokio::time::sleep(PAUSE).await,
                Settled::Failed => return,
            }
        }
    }

    /// Sorts an answer: a 503 or 429 is retried (for a while), a transport error fails.
    fn settle(&self, what: &str, reply: Result<Reply, HarnessError>, start: Instant) -> Settled {
        match reply {
            Ok(reply)
                if matches!(
                    reply.status,
                    StatusCode::SERVICE_UNAVAILABLE | StatusCode::TOO_MANY_REQUESTS
                ) && start.elapsed() < SETTLE =>
            {
                self.record().retried += 1;
                Settled::Retry
            }
            Ok(reply) => Settled::Answered(reply),
            Err(error) => {
                self.failed(format!("{what}: {error}"));
                Settled::Failed
            }
        }
    }

    fn failed(&self, failure: String) {
        self.record().failures.push(failure);
    }

    /// Creates one object after the other, reading back the previous acknowledged one, until
    /// told to stop.
    async fn run(self: Arc<Self>, writer: usize) {
        let mut turn = writer;
        while !self.stop.load(Ordering::SeqCst) {
            let name = format!("{PREFIX}{writer}-{turn}");
            self.create(turn, &name).await;
            let acked = self.record().acked.contains_key(&name);
            if acked {
                self.get(turn + 1, &name).await;
            }
            turn += 2;
        }
    }
}

fn revision(object: &Value) -> u64 {
    objects::resource_version(object)
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

/// A watcher that follows every change from revision `from`, resuming on another replica from
/// the last revision it saw whenever its stream ends (its replica stops); until `stop` and it
/// has seen `until` (once set). Returns the (name, revision) of every event, in order.
async fn watch(load: Arc<Load>, from: u64, until: Arc<Mutex<Option<u64>>>) -> Vec<(String, u64)> {
    let mut seen = Vec::new();
    let mut last = from;
    let mut turn = 0;
    let start = Instant::now();
    loop {
        let target = *until.lock().unwrap_or_else(PoisonError::into_inner);
        if target.is_some_and(|target| last >= target) {
            return seen;
        }
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "the watcher never caught up: last {last}, target {target:?}"
        );
        let (index, client) = load.client(turn);
        turn += 1;
        let path = format!(
            "{}?watch=1&resourceVersion={last}",
            objects::configmaps_path()
        );
        let Ok(mut stream) = EventStream::open(client, &path).await else {
            tokio::time::sleep(PAUSE).await;
            continue;
        };
        while let Ok(Some(event)) = stream.next(Duration::from_secs(2)).await {
            assert_ne!(
                event.kind, "ERROR",
                "the watch resumed at {last} on node-{index} failed: {}",
                event.object
            );
            if event.kind == "BOOKMARK" {
                continue;
            }
            let revision = event.revision().expect("a resourceVersion");
            assert!(
                revision > last,
                "node-{index} sent revision {revision} after {last}: a duplicate or reordering"
            );
            last = revision;
            seen.push((event.name().unwrap_or_default().to_owned(), revision));
            let target = *until.lock().unwrap_or_else(PoisonError::into_inner);
            if target.is_some_and(|target| last >= target) {
                return seen;
            }
        }
    }
}

/// The effective versions the leaders recorded, in the order of each replica's log.
fn recorded_versions(cluster: &DevCluster) -> Vec<u32> {
    (1..=cluster.nodes())
        .flat_map(|index| {
            std::fs::read_to_string(cluster.log_file(index))
                .unwrap_or_default()
                .lines()
                .filter(|line| line.contains(EFFECTIVE_LINE))
                .filter_map(|line| {
                    let (_, rest) = line.split_once(" version=")?;
                    rest.split_whitespace().next()?.parse().ok()
                })
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Waits until some leader recorded `version` more often than `before` times.
async fn wait_recorded(cluster: &DevCluster, version: u32, before: usize) {
    let start = Instant::now();
    loop {
        let count = recorded_versions(cluster)
            .iter()
            .filter(|v| **v == version)
            .count();
        if count > before {
            return;
        }
        assert!(
            start.elapsed() < SETTLE,
            "no leader recorded effective version {version}; recorded: {:?}",
            recorded_versions(cluster)
        );
        tokio::time::sleep(PAUSE).await;
    }
}

/// The prefix of every config map the load writes.
const PREFIX: &str = "upgrade-";

/// The load's config maps a replica lists (a quorum read): name to resourceVersion.
async fn listed(client: &HttpClient) -> BTreeMap<String, u64> {
    let path = objects::configmaps_path();
    let reply = client.get(&path).await.expect("the replica answers");
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let list = reply.json(&path).expect("a list");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            let name = item["metadata"]["name"].as_str().unwrap_or_default();
            (name.to_owned(), revision(item))
        })
        .filter(|(name, _)| name.starts_with(PREFIX))
        .collect()
}

// R-HA-015
#[tokio::test]
async fn a_cluster_of_the_old_build_upgrades_then_rolls_back_one_replica_under_load() {
    let old = old_binary();
    let new = apiary_binary().expect("the current apiary binary");
    let options = DevOptions {
        binary: Some(old.clone()),
        ..DevOptions::default()
    };
    let mut cluster = DevCluster::start(options).await.unwrap();
    let clients = (1..=3).map(|i| cluster.client(i).unwrap().clone());
    let load = Arc::new(Load {
        clients: clients.collect(),
        down: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        record: Mutex::default(),
    });
    let path = objects::configmaps_path();
    let before = cluster.client(1).unwrap().get(&path).await.unwrap();
    let from = revision(&before.json(&path).unwrap());
    let until = Arc::new(Mutex::new(None));
    let watcher = tokio::spawn(watch(load.clone(), from, until.clone()));
    let writers: Vec<_> = (0..2)
        .map(|writer| tokio::spawn(load.clone().run(writer)))
        .collect();
    tokio::time::sleep(STEP_LOAD).await;

    for index in 1..=3 {
        load.down.store(index, Ordering::SeqCst);
        cluster.replace_replica(index, &new).await.unwrap();
        load.down.store(0, Ordering::SeqCst);
        tokio::time::sleep(STEP_LOAD).await;
        if index < 3 {
            let versions = recorded_versions(&cluster);
            assert!(
                versions.iter().all(|v| *v == 1),
                "with an old voter left the effective version must stay 1: {versions:?}"
            );
        }
    }
    wait_recorded(&cluster, 2, 0).await;

    let ones = recorded_versions(&cluster)
        .iter()
        .filter(|v| **v == 1)
        .count();
    load.down.store(2, Ordering::SeqCst);
    cluster.replace_replica(2, &old).await.unwrap();
    load.down.store(0, Ordering::SeqCst);
    wait_recorded(&cluster, 1, ones).await;
    tokio::time::sleep(STEP_LOAD).await;

    load.stop.store(true, Ordering::SeqCst);
    for writer in writers {
        writer.await.unwrap();
    }
    let fence_name = format!("{PREFIX}fence");
    load.create(0, &fence_name).await;
    let fence_revision = *load
        .record()
        .acked
        .get(&fence_name)
        .expect("the fence write is acknowledged");
    *until.lock().unwrap_or_else(PoisonError::into_inner) = Some(fence_revision);
    let events = watcher.await.unwrap();

    let record = std::mem::take(&mut *load.record());
    assert!(
        record.failures.is_empty(),
        "requests failed beyond retriable ones: {:?}",
        record.failures
    );
    let lists = [
        listed(cluster.client(1).unwrap()).await,
        listed(cluster.client(2).unwrap()).await,
        listed(cluster.client(3).unwrap()).await,
    ];
    assert_eq!(lists[0], lists[1], "node-1 and node-2 disagree");
    assert_eq!(lists[0], lists[2], "node-1 and node-3 disagree");
    let stored = &lists[0];
    for (name, rv) in &record.acked {
        assert_eq!(stored.get(name), Some(rv), "acknowledged {name} at {rv}");
    }
    let attempted: BTreeSet<&String> = record.acked.keys().chain(&record.unknown).collect();
    for name in stored.keys() {
        assert!(
            attempted.contains(name),
            "{name} was stored but never written"
        );
    }
    let events: Vec<(String, u64)> = events
        .into_iter()
        .filter(|(name, _)| name.starts_with(PREFIX))
        .collect();
    let watched: BTreeMap<String, u64> = events.iter().cloned().collect();
    assert_eq!(watched.len(), events.len(), "a change was watched twice");
    assert_eq!(
        &watched, stored,
        "the watch saw exactly the stored creates, once each"
    );
    eprintln!(
        "{} creates acknowledged, {} read back, {} retried answers, {} watch events",
        record.acked.len(),
        record.unknown.len(),
        record.retried,
        events.len()
    );
}

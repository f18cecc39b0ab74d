//! Graceful shutdown of a leader under steady load: clients keep reading, writing and watching
//! on every replica of a 3-replica cluster while the leader gets SIGTERM. The stopping replica
//! serves through its shutdown delay, then refuses connections; nothing else fails anywhere, its
//! watches end with a clean end of stream, and it hands raft leadership to another replica
//! before it exits.
//!
//! One failure is inherent to HTTP/1.1 keep-alive and not the replica's to avoid: when the
//! listener closes, a connection idle in a client's pool is closed, and a request the client sent
//! on it at that very moment gets no answer (kube-apiserver's clients meet the same race). The
//! test allows it only from the end of the delay on, and checks that such a request had no effect.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::Reply;
use apiary_tests::objects;
use apiary_tests::process;
use apiary_tests::watch_stream::EventStream;

/// `--shutdown-delay-duration` of every replica: how long the stopping one keeps serving.
const DELAY: Duration = Duration::from_secs(2);

/// Writers and readers per replica, each sending one request after the other.
const WRITERS: usize = 2;
const READERS: usize = 2;

/// The pause of each client between two requests: a steady stream, not a flood.
const PAUSE: Duration = Duration::from_millis(20);

/// How long the load runs before the SIGTERM, and after the stopped replica exited.
const BEFORE: Duration = Duration::from_secs(2);
const AFTER: Duration = Duration::from_secs(3);

/// The longest the stopping replica may take to exit (drain and hand-over included).
const EXIT_LIMIT: Duration = Duration::from_secs(40);

/// How long a watch reader waits for an event before it looks at the stop flag again.
const WATCH_POLL: Duration = Duration::from_millis(500);

/// The line the stopping replica logs once another replica leads after its hand-over.
const HANDED_OVER: &str = "raft leadership handed over";

/// What the clients of one replica saw.
#[derive(Debug, Default)]
struct Seen {
    /// Requests answered with a success.
    served: u64,
    /// When the last success was answered.
    last_served: Option<Instant>,
    /// Successes answered after the SIGTERM.
    served_after_signal: u64,
    /// When connections were refused (the request never reached the replica).
    refused: Vec<Instant>,
    /// Requests sent on a kept-alive connection as the replica closed it, unanswered: when, and
    /// the ConfigMap it would have created.
    unanswered: Vec<(Instant, Option<String>)>,
    /// Every other failure: a status that is not a success, a timeout.
    failures: Vec<String>,
    /// When the watch ended with a clean end of stream, if it did.
    watch_ended: Option<Instant>,
    /// Events the watch received.
    watch_events: u64,
    /// When `/readyz` first answered with a failure.
    not_ready: Option<Instant>,
}

/// The load on one replica and what it saw.
struct Load {
    client: HttpClient,
    replica: usize,
    seen: Mutex<Seen>,
    stop: Arc<AtomicBool>,
    signalled: Arc<OnceLock<Instant>>,
}

impl Load {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, what: &str, reply: Result<Reply, HarnessError>) {
        let mut seen = self.seen();
        match reply {
            Ok(reply) if reply.status.is_success() => {
                seen.served += 1;
                seen.last_served = Some(Instant::now());
                if self.signalled.get().is_some() {
                    seen.served_after_signal += 1;
                }
            }
            Err(HarnessError::Request { source, .. }) if source.is_connect() => {
                seen.refused.push(Instant::now());
            }
            Err(error) if closed_unanswered(&error) => {
                let created = what.strip_prefix("create ").map(str::to_owned);
                seen.unanswered.push((Instant::now(), created));
            }
            Ok(reply) => seen.failures.push(format!(
                "{what} on node-{}: {} {}",
                self.replica,
                reply.status,
                reply.text()
            )),
            Err(error) => {
                let mut chain = error.to_string();
                let mut source = std::error::Error::source(&error);
                while let Some(cause) = source {
                    chain.push_str(&format!(": {cause}"));
                    source = cause.source();
                }
                seen.failures
                    .push(format!("{what} on node-{}: {chain}", self.replica));
            }
        }
    }

    /// Creates ConfigMaps, one after the other, until stopped.
    async fn write(self: Arc<Self>, writer: usize) {
        let path = objects::configmaps_path();
        let mut n = 0u64;
        while !self.stop.load(Ordering::Relaxed) {
            let name = format!("n{}-w{writer}-{n}", self.replica);
            let body = objects::configmap(&name, &[("v", "x")]);
            let reply = self.client.post(&path, &body).await;
            self.record(&format!("create {name}"), reply);
            n += 1;
            tokio::time::sleep(PAUSE).await;
        }
    }

    /// Lists ConfigMaps and reads the namespace, one after the other, until stopped.
    async fn read(self: Arc<Self>, reader: usize) {
        let list = format!("{}?limit=5", objects::configmaps_path());
        let paths = [list.as_str(), "/api/v1/namespaces/default"];
        let mut n = 0usize;
        while !self.stop.load(Ordering::Relaxed) {
            let path = paths[(n + reader) % paths.len()];
            let reply = self.client.get(path).await;
            self.record(&format!("get {path}"), reply);
            n += 1;
            tokio::time::sleep(PAUSE).await;
        }
    }

    /// Probes `/readyz` until stopped and notes when it first fails (a refused connection is
    /// not an answer).
    async fn probe(self: Arc<Self>) {
        while !self.stop.load(Ordering::Relaxed) && self.seen().not_ready.is_none() {
            if let Ok(reply) = self.client.get("/readyz").await
                && !reply.status.is_success()
            {
                self.seen().not_ready = Some(Instant::now());
            }
            tokio::time::sleep(PAUSE).await;
        }
    }

    /// Watches ConfigMaps until stopped or until the replica ends the watch.
    async fn watch(self: Arc<Self>) {
        let path = format!("{}?watch=1", objects::configmaps_path());
        let mut stream = match EventStream::open(&self.client, &path).await {
            Ok(stream) => stream,
            Err(error) => {
                self.record("open the watch", Err(error));
                return;
            }
        };
        while !self.stop.load(Ordering::Relaxed) {
            match stream.next(WATCH_POLL).await {
                Ok(Some(event)) if event.kind == "ERROR" => {
                    self.seen().failures.push(format!(
                        "watch on node-{}: an ERROR event {}",
                        self.replica, event.object
                    ));
                    return;
                }
                Ok(Some(_)) => self.seen().watch_events += 1,
                Ok(None) => {
                    self.seen().watch_ended = Some(Instant::now());
                    return;
                }
                Err(HarnessError::Timeout { .. }) => {}
                Err(error) => {
                    self.record("watch", Err(error));
                    return;
                }
            }
        }
    }
}

/// Whether `error` says the connection closed before any answer came: an end of stream or a
/// reset where the response should have been.
fn closed_unanswered(error: &HarnessError) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if cause
            .downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_incomplete_message)
            || cause.downcast_ref::<std::io::Error>().is_some_and(|io| {
                matches!(
                    io.kind(),
                    std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset
                )
            })
        {
            return true;
        }
        source = cause.source();
    }
    false
}

/// The replica that `index`'s log says took over in its hand-over, and whether the hand-over
/// line comes before the line saying it stopped.
fn handed_over_to(cluster: &DevCluster, index: usize) -> Option<(usize, bool)> {
    let log = std::fs::read_to_string(cluster.log_file(index)).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    let at = lines.iter().rposition(|line| line.contains(HANDED_OVER))?;
    let leader = lines[at]
        .split_whitespace()
        .find_map(|field| field.strip_prefix("leader="))?
        .parse()
        .ok()?;
    let stopped_after = lines[at + 1..]
        .iter()
        .any(|line| line.trim_end().ends_with(" stopped") || line.contains(": stopped"));
    Some((leader, stopped_after))
}

// R-VER-038: /readyz fails once shutdown begins while the replica keeps serving for the delay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_stopped_under_load_drains_and_hands_leadership_over() {
    let options =
        DevOptions::default().flag(&format!("--shutdown-delay-duration={}s", DELAY.as_secs()));
    let cluster = DevCluster::start(options).await.unwrap();
    let leader = cluster
        .wait_leader(Duration::from_secs(30))
        .await
        .expect("a leader is elected");
    let stop = Arc::new(AtomicBool::new(false));
    let signalled = Arc::new(OnceLock::new());
    let loads: Vec<Arc<Load>> = (1..=cluster.nodes())
        .map(|replica| {
            Arc::new(Load {
                client: cluster.client(replica).unwrap().clone(),
                replica,
                seen: Mutex::new(Seen::default()),
                stop: stop.clone(),
                signalled: signalled.clone(),
            })
        })
        .collect();
    let mut tasks = Vec::new();
    for load in &loads {
        tasks.push(tokio::spawn(load.clone().watch()));
        tasks.push(tokio::spawn(load.clone().probe()));
        for writer in 0..WRITERS {
            tasks.push(tokio::spawn(load.clone().write(writer)));
        }
        for reader in 0..READERS {
            tasks.push(tokio::spawn(load.clone().read(reader)));
        }
    }

    tokio::time::sleep(BEFORE).await;
    let sent = Instant::now();
    signalled.set(sent).unwrap();
    let pid = cluster.terminate_replica(leader).unwrap();
    eprintln!("SIGTERM to the leader, node-{leader} (pid {pid})");
    while process::is_alive(pid) {
        assert!(
            sent.elapsed() < EXIT_LIMIT,
            "node-{leader} still runs {EXIT_LIMIT:?} after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let exited = Instant::now();
    eprintln!("node-{leader} exited after {:?}", exited - sent);
    tokio::time::sleep(AFTER).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }

    let mut unanswered_creates = Vec::new();
    for load in &loads {
        let seen = load.seen();
        eprintln!(
            "node-{}: {} served ({} after the SIGTERM), {} refused, {} unanswered, \
             {} watch events, failures: {:#?}",
            load.replica,
            seen.served,
            seen.served_after_signal,
            seen.refused.len(),
            seen.unanswered.len(),
            seen.watch_events,
            seen.failures
        );
        assert!(
            seen.failures.is_empty(),
            "node-{}'s clients saw failures other than refused or unanswered requests: {:#?}",
            load.replica,
            seen.failures
        );
        if load.replica == leader {
            let not_ready = seen.not_ready.expect("node-{leader}'s /readyz fails");
            assert!(
                not_ready >= sent,
                "node-{leader} was ready until the SIGTERM"
            );
            assert!(
                seen.served_after_signal > 0 && seen.last_served.is_some_and(|at| at > not_ready),
                "node-{leader} served through its shutdown delay, after /readyz failed"
            );
            assert!(
                seen.refused.iter().all(|at| *at >= sent + DELAY),
                "node-{leader} refused connections only after its shutdown delay"
            );
            assert!(
                seen.unanswered.iter().all(|(at, _)| *at >= sent + DELAY),
                "node-{leader} left requests unanswered only as its listener closed: {:?}",
                seen.unanswered
            );
            let ended = seen
                .watch_ended
                .expect("node-{leader}'s watch ended cleanly");
            assert!(
                ended >= sent + DELAY,
                "node-{leader}'s watch ended only after its shutdown delay"
            );
            unanswered_creates.extend(seen.unanswered.iter().filter_map(|(_, name)| name.clone()));
        } else {
            assert!(
                seen.refused.is_empty() && seen.unanswered.is_empty(),
                "node-{} refused no connection and answered every request",
                load.replica
            );
            assert_eq!(seen.not_ready, None, "node-{} stays ready", load.replica);
            assert_eq!(
                seen.watch_ended, None,
                "node-{}'s watch runs on",
                load.replica
            );
            assert!(
                seen.last_served.is_some_and(|at| at > exited),
                "node-{} served after node-{leader} exited",
                load.replica
            );
        }
    }

    let survivor = cluster.client(leader % cluster.nodes() + 1).unwrap();
    for name in unanswered_creates {
        let path = format!("{}/{name}", objects::configmaps_path());
        let reply = survivor.get(&path).await.unwrap();
        assert_eq!(
            reply.status, 404,
            "{name}, whose create node-{leader} left unanswered, was not created"
        );
    }

    let (successor, stopped_after) = handed_over_to(&cluster, leader).unwrap_or_else(|| {
        panic!(
            "node-{leader} logs which replica took over\n{}",
            cluster.log_tails(40)
        )
    });
    assert_ne!(successor, leader, "another replica took over");
    assert!(
        stopped_after,
        "node-{leader} handed over before it stopped\n{}",
        cluster.log_tails(40)
    );
    assert_eq!(
        cluster.wait_leader(Duration::from_secs(10)).await,
        Some(successor),
        "node-{successor}, named in the hand-over, leads"
    );
    let dev_log = std::fs::read_to_string(cluster.dir().join("dev.log")).unwrap_or_default();
    assert!(
        dev_log.contains(&format!("replica node-{leader} exited (exit status: 0)")),
        "node-{leader} exited cleanly: {dev_log}"
    );
}

//! `apiary member ...` run as the real binary against a real `apiary dev` cluster through its
//! kubeconfig: list, add as a learner and start it, promote refused while it is behind and
//! accepted once caught up, auto-promotion, leadership transfer, removal of the leader, 3 -> 5
//! -> 3 and replacing a killed replica under steady writes, and the refusals (a URL in use, an
//! unknown member, a removal that would lose quorum).

use std::path::Path;
use std::process::Output;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::binary::apiary_binary;
use apiary_tests::objects;
use apiary_tests::ports::free_base_port;
use apiary_tests::process;
use http::StatusCode;
use serde_json::Value;
use tokio::process::Child;
use tokio::process::Command;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio::time::sleep;

/// How long a membership change may take to show.
const SETTLE: Duration = Duration::from_secs(60);

/// Runs `apiary <args> --kubeconfig <the cluster's>` and returns its output.
pub(crate) async fn apiary(cluster: &DevCluster, args: &[&str]) -> Output {
    Command::new(apiary_binary().expect("APIARY_BIN or a built apiary"))
        .args(args)
        .arg("--kubeconfig")
        .arg(cluster.kubeconfig())
        .output()
        .await
        .expect("apiary runs")
}

/// Runs `apiary <args>`, which must succeed; returns its stdout.
pub(crate) async fn apiary_ok(cluster: &DevCluster, args: &[&str]) -> String {
    let out = apiary(cluster, args).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "apiary {args:?}: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Runs `apiary <args>`, which must fail; returns its stderr.
async fn apiary_fails(cluster: &DevCluster, args: &[&str]) -> String {
    let out = apiary(cluster, args).await;
    assert!(
        !out.status.success(),
        "apiary {args:?} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The members from `apiary member list -o json`.
async fn members(cluster: &DevCluster) -> Vec<Value> {
    let out = apiary_ok(cluster, &["member", "list", "-o", "json"]).await;
    let list: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(list["kind"], "MemberList", "{list}");
    list["members"].as_array().expect("members").clone()
}

/// Member `id` of `members`.
fn member(members: &[Value], id: u64) -> Option<&Value> {
    members.iter().find(|m| m["id"] == id)
}

/// Polls the member list until `done` holds of it.
async fn wait_members(cluster: &DevCluster, what: &str, done: impl Fn(&[Value]) -> bool) {
    let deadline = Instant::now() + SETTLE;
    loop {
        let now = members(cluster).await;
        if done(&now) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {now:?}");
        sleep(Duration::from_millis(300)).await;
    }
}

/// The value of `--flag=` in `member add`'s output.
fn flag<'a>(added: &'a str, flag: &str) -> &'a str {
    let prefix = format!("--{flag}=");
    added
        .lines()
        .find_map(|line| line.trim().strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no --{flag} in {added}"))
}

/// A free peer URL and API address for one more replica.
fn free_addresses() -> (String, String) {
    let base = free_base_port(&[0, 1000]).expect("free ports");
    (
        format!("https://127.0.0.1:{}", base + 1000),
        format!("127.0.0.1:{base}"),
    )
}

/// Starts one more replica with the flags `member add` printed, using the dev cluster's
/// certificates (loopback names, so any replica's pair serves).
fn start_replica(dir: &Path, added: &str, api: &str) -> Child {
    let name = flag(added, "name");
    let peer_url = flag(added, "initial-cluster")
        .split(',')
        .find_map(|entry| entry.strip_prefix(&format!("{name}=")))
        .expect("the new replica in --initial-cluster");
    let file = |f: &str| dir.join(f);
    let (out, err) = process::log_output(&dir.join(format!("{name}.log"))).expect("log file");
    Command::new(apiary_binary().expect("apiary"))
        .arg("serve")
        .arg(format!("--name={name}"))
        .arg("--data-dir")
        .arg(dir.join(name))
        .arg(format!("--listen-api={api}"))
        .arg(format!(
            "--listen-peer={}",
            peer_url.trim_start_matches("https://")
        ))
        .arg(format!(
            "--initial-cluster={}",
            flag(added, "initial-cluster")
        ))
        .arg(format!(
            "--initial-cluster-state={}",
            flag(added, "initial-cluster-state")
        ))
        .arg("--tls-cert-file")
        .arg(file("node-1.crt"))
        .arg("--tls-private-key-file")
        .arg(file("node-1.key"))
        .arg("--client-ca-file")
        .arg(file("ca.crt"))
        .arg("--peer-cert-file")
        .arg(file("node-1-peer.crt"))
        .arg("--peer-key-file")
        .arg(file("node-1-peer.key"))
        .arg("--peer-trusted-ca-file")
        .arg(file("peer-ca.crt"))
        .arg("--service-account-signing-key-file")
        .arg(file("service-account.key"))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .kill_on_drop(true)
        .spawn()
        .expect("apiary serve starts")
}

/// What one writer of the steady load saw.
#[derive(Debug, Default)]
struct Tally {
    /// Config maps whose creation was acknowledged (or read back after an unknown outcome).
    written: Vec<String>,
    /// Answers other than success, retriable 503/429 and read-back 504s.
    failures: Vec<String>,
}

/// Creates config maps `<prefix>-<n>` through `client` one after another until `stop`,
/// retrying 503 and 429 and reading back a 504 (or a client-side timeout).
async fn writer(client: HttpClient, prefix: String, stop: Arc<AtomicBool>) -> Tally {
    let path = objects::configmaps_path();
    let mut tally = Tally::default();
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        let name = format!("{prefix}-{n}");
        n += 1;
        let body = objects::configmap(&name, &[("v", &name)]);
        let mut retried = false;
        loop {
            let unknown = match client.post(&path, &body).await {
                Ok(reply) if reply.status == StatusCode::CREATED => false,
                Ok(reply) if reply.status == StatusCode::CONFLICT && retried => false,
                Ok(reply)
                    if reply.status == StatusCode::SERVICE_UNAVAILABLE
                        || reply.status == StatusCode::TOO_MANY_REQUESTS =>
                {
                    retried = true;
                    sleep(Duration::from_millis(100)).await;
                    continue;
                }
                Ok(reply) if reply.status == StatusCode::GATEWAY_TIMEOUT => true,
                Err(HarnessError::Timeout { .. }) => true,
                Ok(reply) => {
                    tally
                        .failures
                        .push(format!("{name}: {} {}", reply.status, reply.text()));
                    break;
                }
                Err(e) => {
                    tally.failures.push(format!("{name}: {e}"));
                    break;
                }
            };
            if unknown {
                let read = client.get(&objects::configmap_path(&name)).await;
                match read.map(|r| r.status) {
                    Ok(StatusCode::OK) => {}
                    Ok(StatusCode::NOT_FOUND) => {
                        retried = true;
                        continue;
                    }
                    other => {
                        tally.failures.push(format!("{name}: read back {other:?}"));
                        break;
                    }
                }
            }
            tally.written.push(name);
            break;
        }
    }
    tally
}

/// Steady writes through replicas 1 and 2 (never removed here) while membership changes.
struct Load {
    stop: Arc<AtomicBool>,
    writers: Vec<JoinHandle<Tally>>,
}

impl Load {
    fn start(cluster: &DevCluster) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let writers = (0..4)
            .map(|i| {
                let client = cluster.client(i % 2 + 1).expect("replica").clone();
                tokio::spawn(writer(client, format!("load-{i}"), stop.clone()))
            })
            .collect();
        Self { stop, writers }
    }

    /// Stops the writers; every write they saw acknowledged must be readable, and none may
    /// have failed otherwise than retriably.
    async fn check(self, cluster: &DevCluster) {
        self.stop.store(true, Ordering::Relaxed);
        let mut written = Vec::new();
        for writer in self.writers {
            let tally = writer.await.expect("the writer ends");
            assert!(tally.failures.is_empty(), "{:?}", tally.failures);
            written.extend(tally.written);
        }
        assert!(written.len() > 10, "the load wrote only {}", written.len());
        let client = cluster.client(1).expect("replica 1");
        for name in &written {
            let read = client.get(&objects::configmap_path(name)).await;
            let read = read.expect("replica 1 answers");
            assert_eq!(read.status, StatusCode::OK, "{name}: {}", read.text());
        }
    }
}

// R-HA-011 (writes through the other two keep succeeding while replica 3 is killed)
#[tokio::test]
async fn members_are_listed_added_promoted_transferred_to_and_removed() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let dir = cluster.dir();

    let start = members(&cluster).await;
    assert_eq!(start.len(), 3, "{start:?}");
    let leaders = start.iter().filter(|m| m["role"] == "leader").count();
    assert_eq!(leaders, 1, "{start:?}");
    let load = Load::start(&cluster);
    let table = apiary_ok(&cluster, &["member", "list"]).await;
    assert!(table.contains("| ID | ROLE "), "{table}");
    assert!(table.contains("| leader "), "{table}");

    // A URL in use and an unknown member are refused with the server's reason.
    let taken = start[0]["peerURL"].as_str().unwrap();
    let refused = apiary_fails(&cluster, &["member", "add", "x", "--peer-url", taken]).await;
    assert!(refused.contains("already used by node"), "{refused}");
    let unknown = apiary_fails(&cluster, &["member", "remove", "99"]).await;
    assert!(unknown.contains("404"), "{unknown}");

    // Added as a plain learner: promotion is refused while it has not caught up.
    let (url4, api4) = free_addresses();
    let added4 = apiary_ok(&cluster, &["member", "add", "node-4", "--peer-url", &url4]).await;
    assert!(added4.contains("Member 4 added"), "{added4}");
    assert_eq!(flag(&added4, "initial-cluster-state"), "existing");
    let now = members(&cluster).await;
    let learner = member(&now, 4).expect("member 4 listed");
    assert_eq!(learner["role"], "learner", "{learner}");
    assert_eq!(learner["autoPromote"], false, "{learner}");
    let behind = apiary_fails(&cluster, &["member", "promote", "4"]).await;
    assert!(behind.contains("has not caught up"), "{behind}");

    // Started with the printed flags, it catches up and stays a learner until promoted.
    let node4 = start_replica(dir, &added4, &api4);
    wait_members(&cluster, "node 4 catches up", |m| {
        member(m, 4).is_some_and(|m| m["lag"].as_u64().is_some_and(|lag| lag < 100))
    })
    .await;
    assert_eq!(
        member(&members(&cluster).await, 4).unwrap()["role"],
        "learner"
    );
    let deadline = Instant::now() + SETTLE;
    while !apiary(&cluster, &["member", "promote", "4"])
        .await
        .status
        .success()
    {
        assert!(Instant::now() < deadline, "promoting node 4");
        sleep(Duration::from_millis(300)).await;
    }
    wait_members(&cluster, "node 4 votes", |m| {
        member(m, 4).is_some_and(|m| m["role"] != "learner")
    })
    .await;

    // With --auto-promote the fifth becomes a voter on its own: 3 -> 5.
    let (url5, api5) = free_addresses();
    let args = [
        "member",
        "add",
        "node-5",
        "--peer-url",
        &url5,
        "--auto-promote",
    ];
    let added5 = apiary_ok(&cluster, &args).await;
    let node5 = start_replica(dir, &added5, &api5);
    wait_members(&cluster, "node 5 is promoted on its own", |m| {
        m.len() == 5 && m.iter().all(|m| m["role"] != "learner")
    })
    .await;

    // Leadership goes where asked; removing the leader hands it over first: 5 -> 3.
    let moved = apiary_ok(&cluster, &["member", "transfer-leadership", "4"]).await;
    assert!(moved.contains("member 4"), "{moved}");
    wait_members(&cluster, "node 4 leads", |m| {
        member(m, 4).is_some_and(|m| m["role"] == "leader")
    })
    .await;
    apiary_ok(&cluster, &["member", "remove", "4"]).await;
    apiary_ok(&cluster, &["member", "remove", "5"]).await;
    wait_members(&cluster, "back to 3 with a leader", |m| {
        m.len() == 3 && m.iter().any(|m| m["role"] == "leader")
    })
    .await;
    drop((node4, node5));

    // A killed replica is replaced: removed, and a new one (a new id) added and started.
    cluster.kill_replica(3).unwrap();
    let deadline = Instant::now() + SETTLE;
    while !apiary(&cluster, &["member", "remove", "3"])
        .await
        .status
        .success()
    {
        assert!(Instant::now() < deadline, "removing the killed node 3");
        sleep(Duration::from_millis(300)).await;
    }
    let (url6, api6) = free_addresses();
    let args = [
        "member",
        "add",
        "node-6",
        "--peer-url",
        &url6,
        "--id",
        "6",
        "--auto-promote",
    ];
    let added6 = apiary_ok(&cluster, &args).await;
    let positions = flag(&added6, "initial-cluster");
    assert_eq!(positions.split(',').count(), 6, "{added6}");
    assert!(positions.contains(",removed-3="), "{added6}");
    let _node6 = start_replica(dir, &added6, &api6);
    wait_members(&cluster, "node 6 replaces node 3", |m| {
        let ids: Vec<_> = m.iter().filter_map(|m| m["id"].as_u64()).collect();
        ids == [1, 2, 6] && m.iter().all(|m| m["role"] != "learner")
    })
    .await;
    load.check(&cluster).await;
}

#[tokio::test]
async fn a_removal_that_would_lose_the_quorum_is_refused() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    cluster.kill_replica(3).unwrap();
    // Status still answers, showing node 3 unreachable.
    let deadline = Instant::now() + SETTLE;
    loop {
        let out = apiary(&cluster, &["status", "-o", "json"]).await;
        let status: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let down = status["members"]
            .as_array()
            .and_then(|m| member(m, 3))
            .is_some_and(|m| m["reachable"] == false);
        if out.status.success() && down {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "node 3 never shown unreachable: {status}"
        );
        sleep(Duration::from_millis(300)).await;
    }
    // The leader counts a voter as answering for an election timeout (1 s) after its last
    // heartbeat; past that, removing another voter would leave 1 of the 2 remaining answering.
    sleep(Duration::from_secs(3)).await;
    let deadline = Instant::now() + SETTLE;
    loop {
        let out = apiary(&cluster, &["member", "remove", "2"]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "removing 2 with 3 down succeeded");
        if !stderr.contains("503") {
            assert!(stderr.contains("would leave"), "{stderr}");
            assert!(stderr.contains("409"), "{stderr}");
            break;
        }
        assert!(Instant::now() < deadline, "no leader: {stderr}");
        sleep(Duration::from_millis(500)).await;
    }
    let now = members(&cluster).await;
    assert_eq!(now.len(), 3, "{now:?}");
}

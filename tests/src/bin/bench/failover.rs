//! `--failover`: leader loss to the first accepted write. Each round starts a fresh 3-replica
//! `apiary dev` cluster (then a fresh 3-member etcd cluster, written through its native gRPC
//! API) with its default timeouts, and runs a steady single-client write loop round-robin over
//! the members; after [`STEADY`] the leader is killed with SIGKILL and the loop goes on over the
//! survivors. The figure is the time from the kill to the answer of the first write that was sent
//! after the kill and that a survivor accepted. A write that fails is retried after
//! [`RETRY_PAUSE`]; one that hangs is given up after `--write-timeout-ms`.

use std::cell::Cell;
use std::fmt::Write as _;
use std::future::Future;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::etcd_cluster;
use apiary_tests::etcd_cluster::EtcdCluster;
use apiary_tests::etcd_native;
use apiary_tests::load;
use apiary_tests::objects;
use apiary_tests::process;
use apiary_tests::process::Signal;
use etcd_client::KvClient;

use super::Args;
use super::created;
use super::ms;

/// How long the write loop runs before the leader is killed.
const STEADY: Duration = Duration::from_secs(2);
/// How long after the kill a round waits for an accepted write before it fails.
const GIVE_UP: Duration = Duration::from_secs(30);
/// The client's pause after a failed write, so that it does not spin on refused connections.
const RETRY_PAUSE: Duration = Duration::from_millis(10);

/// One round's outcome.
struct Outcome {
    /// From the kill to the first accepted write sent after it.
    recovered: Duration,
    /// Writes accepted before the kill.
    before: u64,
    /// Writes sent after the kill that failed or timed out.
    failed: u64,
    /// The last of their errors.
    last_error: Option<String>,
}

/// Runs `--failovers` rounds per system, interleaved, and answers the markdown table.
pub async fn run(args: &Args) -> Result<String, HarnessError> {
    let timeout = Duration::from_millis(args.write_timeout_ms);
    let with_etcd = if args.no_etcd {
        println!("etcd: skipped (--no-etcd)");
        false
    } else if !etcd_cluster::etcd_available() {
        println!("etcd: not found on PATH, baseline skipped (apt-get install -y etcd-server)");
        false
    } else {
        true
    };
    let mut apiary = Vec::new();
    let mut etcd = Vec::new();
    for round in 1..=args.failovers {
        let outcome = apiary_round(args, timeout).await?;
        print_round("apiary", round, &outcome);
        apiary.push(outcome.recovered);
        if with_etcd {
            let outcome = etcd_round(args, timeout).await?;
            print_round("etcd", round, &outcome);
            etcd.push(outcome.recovered);
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n| system | leader kills | min | p50 | max | every kill, in order |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---|");
    row(&mut out, "Apiary (create, full API)", apiary);
    if with_etcd {
        row(&mut out, "etcd (native put)", etcd);
    }
    Ok(out)
}

async fn apiary_round(args: &Args, timeout: Duration) -> Result<Outcome, HarnessError> {
    let options = DevOptions {
        flags: args.apiary_flags.clone(),
        ..DevOptions::default()
    };
    let cluster = DevCluster::start(options).await?;
    let leader = cluster
        .wait_leader(Duration::from_secs(10))
        .await
        .ok_or_else(|| HarnessError::NotReady {
            what: "an Apiary leader".to_owned(),
            waited: Duration::from_secs(10),
            last: "no replica's log names itself leader".to_owned(),
        })?;
    let replicas: Vec<HttpClient> = (1..=cluster.nodes())
        .map(|i| cluster.client(i).map(|c| c.clone().with_timeout(timeout)))
        .collect::<Result<_, _>>()?;
    let value = objects::payload(args.value_size);
    let pid = cluster.pid(leader)?;
    let outcome = measure(
        replicas.len(),
        leader - 1,
        |target, seq| {
            let client = replicas[target].clone();
            let body = objects::configmap(&format!("failover-{seq}"), &[("v", &value)]);
            async move { created(client.post(&objects::configmaps_path(), &body).await) }
        },
        || process::send(pid, Signal::Kill),
    )
    .await;
    process::wait_gone(pid, Signal::Kill, Duration::from_secs(10))?;
    outcome
}

async fn etcd_round(args: &Args, timeout: Duration) -> Result<Outcome, HarnessError> {
    let mut cluster = EtcdCluster::start(3, Duration::from_secs(60)).await?;
    let clients = etcd_native::connect(&cluster, timeout).await?;
    let leader = etcd_native::leader(&clients).await?;
    let kvs: Vec<KvClient> = clients.iter().map(etcd_native::kv).collect();
    let value = objects::payload(args.value_size).into_bytes();
    measure(
        kvs.len(),
        leader,
        |target, seq| {
            etcd_native::put(
                kvs[target].clone(),
                format!("/failover/{seq}"),
                value.clone(),
            )
        },
        || cluster.kill_member(leader),
    )
    .await
}

/// Runs the write loop over `members` (0-based targets), calls `kill` (which kills member
/// `leader`) after [`STEADY`], and goes on over the survivors until one accepts a write.
async fn measure<W, F>(
    members: usize,
    leader: usize,
    write: W,
    kill: impl FnOnce() -> Result<(), HarnessError>,
) -> Result<Outcome, HarnessError>
where
    W: Fn(usize, u64) -> F,
    F: Future<Output = Result<(), String>>,
{
    let survivors: Vec<usize> = (0..members).filter(|&m| m != leader).collect();
    let killed: Cell<Option<Instant>> = Cell::new(None);
    let writer = async {
        let mut before = 0;
        let mut failed = 0;
        let mut last_error = None;
        let mut seq = 0u64;
        loop {
            let at_send = killed.get();
            let target = match at_send {
                None => (seq as usize) % members,
                Some(_) => survivors[(seq as usize) % survivors.len()],
            };
            let result = write(target, seq).await;
            seq += 1;
            match (at_send, result) {
                (None, Ok(())) => before += 1,
                (None, Err(_)) => tokio::time::sleep(RETRY_PAUSE).await,
                (Some(at), Ok(())) => {
                    return Ok(Outcome {
                        recovered: at.elapsed(),
                        before,
                        failed,
                        last_error,
                    });
                }
                (Some(at), Err(last)) => {
                    failed += 1;
                    if at.elapsed() > GIVE_UP {
                        return Err(HarnessError::NotReady {
                            what: "a write accepted by a survivor of the leader's kill".to_owned(),
                            waited: GIVE_UP,
                            last,
                        });
                    }
                    last_error = Some(last);
                    tokio::time::sleep(RETRY_PAUSE).await;
                }
            }
        }
    };
    let killer = async {
        tokio::time::sleep(STEADY).await;
        killed.set(Some(Instant::now()));
        kill()
    };
    let (outcome, kill) = tokio::join!(writer, killer);
    kill?;
    let outcome = outcome?;
    if outcome.before == 0 {
        return Err(HarnessError::NotReady {
            what: "a write accepted before the leader's kill".to_owned(),
            waited: STEADY,
            last: "every write failed".to_owned(),
        });
    }
    Ok(outcome)
}

fn print_round(system: &str, round: usize, outcome: &Outcome) {
    println!(
        "{system} round {round}: first accepted write {} after the leader's kill \
         ({} writes accepted before it, {} failed after it{})",
        ms(Some(outcome.recovered)),
        outcome.before,
        outcome.failed,
        outcome
            .last_error
            .as_deref()
            .map(|e| format!(", the last: {e}"))
            .unwrap_or_default(),
    );
}

fn row(out: &mut String, system: &str, mut times: Vec<Duration>) {
    let every: Vec<String> = times.iter().map(|t| ms(Some(*t))).collect();
    times.sort_unstable();
    let _ = writeln!(
        out,
        "| {system} | {} | {} | {} | {} | {} |",
        times.len(),
        ms(times.first().copied()),
        ms(load::percentile(&times, 50.0)),
        ms(times.last().copied()),
        every.join(", "),
    );
}

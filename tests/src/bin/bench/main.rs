//! The benchmark: creates/s and latency of 1 KiB ConfigMaps on a 3-replica `apiary dev` cluster,
//! and quorum GETs/s on a follower, at several client concurrencies; then the same workload on a
//! 3-member etcd cluster (puts and linearizable reads through its native gRPC API, then through
//! its JSON gateway, `etcd.rs`) when `etcd` is installed, and a table of both side by side with
//! their ratio against etcd's native figures.
//!
//! ```sh
//! cargo build --release -p apiary-node --bin apiary
//! cargo run --release -p apiary-tests --bin bench -- --requests 2000
//! ```
//!
//! Both systems are measured by the same load generator over TLS with client certificates, one
//! client per server (Apiary's and etcd's gateway: a pooled HTTP/1.1 client; etcd's gRPC: one
//! HTTP/2 connection), and run one after the other so they never share the CPU. Apiary's
//! creates are measured a second time over HTTP/2, one multiplexed connection per replica as
//! client-go opens toward kube-apiserver, and each create level reports the CPU seconds every
//! replica spent per 1,000 creates (`cpu.rs`), a figure the machine's load changes far less than
//! throughput.
//!
//! `--apply` measures instead writes of a Deployment by PUT, merge patch and server-side apply,
//! interleaved (`apply.rs`); `--failover` the time from killing the leader to the first write a
//! survivor accepts, for Apiary and etcd (`failover.rs`); `--custom` creates of ConfigMaps and
//! of custom resources without and with ten CEL validation rules (`custom.rs`); `--admission`
//! creates that no admission configuration selects, that a ValidatingAdmissionPolicy selects,
//! and that both the policy and a validating webhook select (`admission.rs`). `--idle-watches`
//! holds watches open on every replica, on resource types the creates do not write, during the
//! create levels (`idle_watches.rs`).

mod admission;
mod apply;
mod cpu;
mod custom;
mod etcd;
mod failover;
mod idle_watches;
mod rounds;
mod ways;

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HttpClient;
use apiary_tests::etcd_cluster;
use apiary_tests::load;
use apiary_tests::load::LevelResult;
use apiary_tests::objects;
use clap::Parser;
use http::StatusCode;

/// Command line of the benchmark.
#[derive(Debug, Parser)]
#[command(
    name = "bench",
    about = "Apiary vs etcd: writes/s, latency, quorum reads/s"
)]
struct Args {
    /// Client concurrencies to measure, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 16, 64, 256])]
    levels: Vec<usize>,
    /// Writes per concurrency level.
    #[arg(long, default_value_t = 2000)]
    requests: u64,
    /// Quorum reads per concurrency level.
    #[arg(long, default_value_t = 4000)]
    reads: u64,
    /// Time budget of one level, in seconds; a level stops sending when it runs out.
    #[arg(long, default_value_t = 30)]
    level_budget: u64,
    /// Size of each value in bytes.
    #[arg(long, default_value_t = 1024)]
    value_size: usize,
    /// Unmeasured writes before the first level, at the highest concurrency, so that every
    /// level runs on open connections and a warmed-up server.
    #[arg(long, default_value_t = 300)]
    warmup: u64,
    /// Skip the etcd baseline even when etcd is installed.
    #[arg(long)]
    no_etcd: bool,
    /// Instead of the above: writes of a Deployment by PUT, merge patch and server-side apply,
    /// interleaved, `--requests` per way and level, `--rounds` rounds.
    #[arg(long)]
    apply: bool,
    /// Instead of the above: creates of ConfigMaps and of custom resources without and with
    /// ten CEL validation rules, interleaved, `--requests` per way and level, `--rounds` rounds.
    #[arg(long)]
    custom: bool,
    /// Instead of the above: creates that no admission configuration selects, that one
    /// ValidatingAdmissionPolicy selects, and that the policy and one validating webhook
    /// select, interleaved, `--requests` per way and level, `--rounds` rounds.
    #[arg(long)]
    admission: bool,
    /// With `--apply`, `--custom` or `--admission`: rounds over the three ways.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Instead of the above: the time from killing the leader (SIGKILL) to the first write a
    /// surviving replica accepts, under a steady single-client write loop, `--failovers` times
    /// on a fresh cluster each, Apiary and etcd interleaved.
    #[arg(long)]
    failover: bool,
    /// With `--failover`: leader kills per system.
    #[arg(long, default_value_t = 5)]
    failovers: usize,
    /// With `--failover`: the client's deadline of one write, after which it sends the next
    /// (the resolution of the figure when writes hang rather than fail).
    #[arg(long, default_value_t = 200)]
    write_timeout_ms: u64,
    /// A flag for every Apiary replica (repeatable), e.g. `--apiary-flag=--controllers=-garbagecollector`
    /// to compare a setting against the default in interleaved runs.
    #[arg(long = "apiary-flag", allow_hyphen_values = true)]
    apiary_flags: Vec<String>,
    /// Watches to hold open on every replica during the create levels, on resource types the
    /// creates do not write (Secrets, Services, Pods, ServiceAccounts, Deployments, Jobs).
    #[arg(long, default_value_t = 0)]
    idle_watches: usize,
}

/// Objects created before the read levels; reads cycle through them.
const READ_SET: u64 = 100;

/// What one system scored: writes, then reads, per level.
struct Scores {
    writes: Vec<LevelResult>,
    reads: Vec<LevelResult>,
}

/// Apiary's scores: over HTTP/1.1 (the etcd gateway's protocol, [`Scores`]) and its creates
/// again over HTTP/2.
struct ApiaryScores {
    http1: Scores,
    writes_http2: Vec<LevelResult>,
}

/// Prints the table of the `what` benchmark, or why it failed.
fn finish(what: &str, result: Result<String, apiary_tests::HarnessError>) -> ExitCode {
    match result {
        Ok(table) => {
            println!("{table}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{what} benchmark failed: {e}");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    println!("{}", apiary_tests::machine::describe());
    if args.apply {
        return finish("apply", apply::run(&args).await);
    }
    if args.custom {
        return finish("custom resource", custom::run(&args).await);
    }
    if args.admission {
        return finish("admission", admission::run(&args).await);
    }
    if args.failover {
        return finish("failover", failover::run(&args).await);
    }
    let apiary = match bench_apiary(&args).await {
        Ok(scores) => scores,
        Err(e) => {
            eprintln!("apiary benchmark failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let etcd = if args.no_etcd {
        println!("etcd: skipped (--no-etcd)");
        None
    } else if !etcd_cluster::etcd_available() {
        println!(
            "etcd: not found on PATH, baseline skipped \
             (install it with `apt-get install -y etcd-server`)"
        );
        None
    } else {
        match etcd::bench(&args).await {
            Ok(scores) => Some(scores),
            Err(e) => {
                eprintln!("etcd benchmark failed: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    println!("{}", table(&args, &apiary, etcd.as_ref()));
    ExitCode::SUCCESS
}

async fn bench_apiary(args: &Args) -> Result<ApiaryScores, apiary_tests::HarnessError> {
    let options = DevOptions {
        flags: args.apiary_flags.clone(),
        ..DevOptions::default()
    };
    let cluster = DevCluster::start(options).await?;
    let replicas: Vec<HttpClient> = (1..=cluster.nodes())
        .map(|i| cluster.client(i).cloned())
        .collect::<Result<_, _>>()?;
    let leader = cluster.wait_leader(Duration::from_secs(5)).await;
    let follower = match leader {
        Some(1) => 2,
        Some(_) => 1,
        None => 2,
    };
    println!(
        "apiary: 3 replicas in {}, leader {}, quorum reads on node-{follower}",
        cluster.dir().display(),
        leader.map_or("unknown".to_owned(), |l| format!("node-{l}")),
    );
    let value = objects::payload(args.value_size);
    let budget = Duration::from_secs(args.level_budget);
    let pids: Vec<u32> = (1..=cluster.nodes())
        .map(|i| cluster.pid(i))
        .collect::<Result<_, _>>()?;
    let mut http2 = Vec::new();
    for i in 1..=cluster.nodes() {
        let endpoint = cluster.endpoint(i).await?;
        http2.push(HttpClient::new_http2(
            &endpoint.server,
            Some(endpoint.tls.clone()),
        ));
    }
    let _idle = idle_watches::open(&replicas, args.idle_watches).await?;
    let protocols = [("http1", &replicas), ("http2", &http2)];
    for (protocol, clients) in protocols {
        let warm = creates(
            args,
            clients,
            max_level(args),
            args.warmup,
            protocol,
            "warm",
        )
        .await;
        report(&format!("apiary {protocol} warm-up"), &warm);
    }
    // The two protocols alternate level by level, so both meet the same store size.
    let mut writes = Vec::new();
    let mut writes_http2 = Vec::new();
    for &level in &args.levels {
        for (protocol, clients) in protocols {
            let before = cpu::snapshot(&pids);
            let tag = format!("c{level}");
            let result = creates(args, clients, level, args.requests, protocol, &tag).await;
            let spent = cpu::per_thousand(&before, &cpu::snapshot(&pids), result.ok);
            report(&format!("apiary {protocol} create"), &result);
            println!(
                "{:>24} c={level:<4} CPU s per 1,000 creates: {}",
                "",
                spent
                    .iter()
                    .enumerate()
                    .map(|(i, s)| format!("node-{} {s:.3}", i + 1))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            match protocol {
                "http1" => writes.push(result),
                _ => writes_http2.push(result),
            }
        }
    }
    for k in 0..READ_SET {
        let body = objects::configmap(&format!("bench-read-{k}"), &[("v", &value)]);
        created(replicas[0].post(&objects::configmaps_path(), &body).await).map_err(|e| {
            apiary_tests::HarnessError::UnexpectedStatus {
                what: "filling the read set".to_owned(),
                status: StatusCode::INTERNAL_SERVER_ERROR,
                body: e,
            }
        })?;
    }
    let reader = cluster.client(follower)?.clone();
    let mut reads = Vec::new();
    for &level in &args.levels {
        let reader = reader.clone();
        let result = load::run_warmed(level, args.reads, budget, move |i| {
            let reader = reader.clone();
            let path = objects::configmap_path(&format!("bench-read-{}", i % READ_SET));
            async move { ok(reader.get(&path).await) }
        })
        .await;
        report("apiary quorum get", &result);
        reads.push(result);
    }
    // Leader elections during the run explain write stalls (503s, long tails).
    let elections: usize = (1..=cluster.nodes())
        .map(|i| {
            std::fs::read_to_string(cluster.log_file(i))
                .unwrap_or_default()
                .matches("becomes leader")
                .count()
        })
        .sum();
    println!(
        "apiary: {elections} \"becomes leader\" log lines over the run (start-up included), \
         leader at the end {}",
        cluster
            .leader()
            .map_or("unknown".to_owned(), |l| format!("node-{l}"))
    );
    Ok(ApiaryScores {
        http1: Scores { writes, reads },
        writes_http2,
    })
}

/// `requests` creates of 1 KiB ConfigMaps from `concurrency` clients through `replicas` (round
/// robin); the objects are named after `protocol` and `tag`.
async fn creates(
    args: &Args,
    replicas: &[HttpClient],
    concurrency: usize,
    requests: u64,
    protocol: &'static str,
    tag: &str,
) -> LevelResult {
    let value = objects::payload(args.value_size);
    let budget = Duration::from_secs(args.level_budget);
    let replicas = replicas.to_vec();
    let prefix = format!("bench-{protocol}-{tag}");
    load::run(concurrency, requests, budget, move |i| {
        let client = replicas[(i as usize) % replicas.len()].clone();
        let body = objects::configmap(&format!("{prefix}-{i}"), &[("v", &value)]);
        async move { created(client.post(&objects::configmaps_path(), &body).await) }
    })
    .await
}

/// The highest concurrency measured.
fn max_level(args: &Args) -> usize {
    args.levels.iter().copied().max().unwrap_or(1)
}

/// A create succeeded: 201 (or 200, which Kubernetes also allows).
fn created(reply: apiary_tests::error::Result<apiary_tests::Reply>) -> Result<(), String> {
    match reply {
        Ok(r) if r.status == StatusCode::CREATED || r.status == StatusCode::OK => Ok(()),
        Ok(r) => Err(format!("{}: {}", r.status, r.text())),
        Err(e) => Err(e.to_string()),
    }
}

/// A request answered 200.
fn ok(reply: apiary_tests::error::Result<apiary_tests::Reply>) -> Result<(), String> {
    match reply {
        Ok(r) if r.status == StatusCode::OK => Ok(()),
        Ok(r) => Err(format!("{}: {}", r.status, r.text())),
        Err(e) => Err(e.to_string()),
    }
}

fn report(what: &str, r: &LevelResult) {
    println!(
        "{what:>24} c={:<4} ok={:<6} err={:<4} {:>9.0}/s p50={} p99={}{}{}",
        r.concurrency,
        r.ok,
        r.errors,
        r.per_second(),
        ms(r.percentile(50.0)),
        ms(r.percentile(99.0)),
        if r.truncated {
            " (time budget hit)"
        } else {
            ""
        },
        r.first_error
            .as_deref()
            .map(|e| format!(" first error: {e}"))
            .unwrap_or_default(),
    );
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("-".to_owned(), |d| {
        format!("{:.1}ms", d.as_secs_f64() * 1000.0)
    })
}

/// The markdown table of both systems, with the Apiary/etcd throughput ratio against etcd's
/// native gRPC figures; etcd's JSON gateway beside them.
fn table(args: &Args, apiary: &ApiaryScores, etcd: Option<&etcd::EtcdScores>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n| workload | clients | Apiary ops/s | Apiary p50 | Apiary p99 | etcd gRPC ops/s | etcd gRPC p50 | etcd gRPC p99 | etcd gateway ops/s | etcd gateway p50 | etcd gateway p99 | Apiary/etcd gRPC ops |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let rows = [
        (
            format!("create {} B", args.value_size),
            &apiary.http1.writes,
            etcd.map(|e| (&e.native.writes, &e.gateway.writes)),
        ),
        (
            format!("create {} B, Apiary over HTTP/2", args.value_size),
            &apiary.writes_http2,
            etcd.map(|e| (&e.native.writes, &e.gateway.writes)),
        ),
        (
            "quorum GET on a follower".to_owned(),
            &apiary.http1.reads,
            etcd.map(|e| (&e.native.reads, &e.gateway.reads)),
        ),
    ];
    for (name, ours, theirs) in rows {
        for (i, a) in ours.iter().enumerate() {
            let native = theirs.and_then(|(n, _)| n.get(i));
            let gateway = theirs.and_then(|(_, g)| g.get(i));
            let ratio = native
                .filter(|e| e.per_second() > 0.0)
                .map_or("-".to_owned(), |e| {
                    format!("{:.2}", a.per_second() / e.per_second())
                });
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} | {} | {ratio} |",
                a.concurrency,
                cells(Some(a)),
                cells(native),
                cells(gateway),
            );
        }
    }
    out
}

/// The ops/s, p50 and p99 cells of one level (dashes when not measured).
fn cells(level: Option<&LevelResult>) -> String {
    let Some(level) = level else {
        return "- | - | -".to_owned();
    };
    format!(
        "{:.0}{} | {} | {}",
        level.per_second(),
        if level.errors > 0 {
            format!(" ({} err)", level.errors)
        } else {
            String::new()
        },
        ms(level.percentile(50.0)),
        ms(level.percentile(99.0)),
    )
}

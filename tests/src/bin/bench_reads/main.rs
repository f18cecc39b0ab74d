//! The read-side benchmark: LIST of many 1 KiB ConfigMaps (whole and paged) on the leader and a
//! follower, watch delivery latency with many concurrent watchers on one replica while writing,
//! and the resident memory of replicas holding many objects with their history; etcd beside
//! it for the list and memory figures (ranges through its native gRPC API, and through its JSON
//! gateway with the same HTTP client as Apiary's).
//!
//! ```sh
//! cargo build --release -p apiary-node --bin apiary
//! cargo run --release -p apiary-tests --bin bench_reads
//! ```
//!
//! `--watch-only` runs only the watch delivery rows (`watch.rs`), Apiary's and etcd's, at each
//! `--watchers` level.
//!
//! `--formats` measures instead LIST of `--objects` pods in every wire format side by side
//! (`formats.rs`); `--restart` measures instead the memory of replicas holding
//! `--memory-objects` objects and their restart-to-ready (`restart.rs`).

mod formats;
mod list;
mod memory;
mod report;
mod restart;
mod watch;

use std::process::ExitCode;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::etcd_cluster;
use apiary_tests::etcd_cluster::EtcdCluster;
use apiary_tests::etcd_native;
use clap::Parser;

/// Command line of the read benchmark.
#[derive(Debug, Parser)]
#[command(
    name = "bench_reads",
    about = "Apiary vs etcd: LIST, watch latency, memory"
)]
pub struct Args {
    /// Objects in the listed collection.
    #[arg(long, default_value_t = 10_000)]
    objects: u64,
    /// Size of each object's value in bytes.
    #[arg(long, default_value_t = 1024)]
    value_size: usize,
    /// Measured lists (or paged traversals) per row.
    #[arg(long, default_value_t = 20)]
    lists: u64,
    /// Page size of the paged rows.
    #[arg(long, default_value_t = 500)]
    page: usize,
    /// Concurrent watchers on one replica; several levels (`1,100,1000`) run one after the
    /// other on the same cluster.
    #[arg(long, value_delimiter = ',', default_value = "1000")]
    watchers: Vec<usize>,
    /// Writes made while the watchers watch.
    #[arg(long, default_value_t = 300)]
    watch_writes: u64,
    /// Rate of those writes, per second.
    #[arg(long, default_value_t = 50)]
    watch_rate: u64,
    /// How Apiary's watchers read their streams.
    #[arg(long, value_enum, default_value_t = watch::Reader::Raw)]
    watch_reader: watch::Reader,
    /// Only the watch delivery rows (no fill, lists or memory).
    #[arg(long)]
    watch_only: bool,
    /// Objects held when resident memory is measured.
    #[arg(long, default_value_t = 100_000)]
    memory_objects: u64,
    /// Skip the memory phase (the slowest).
    #[arg(long)]
    no_memory: bool,
    /// Seconds without requests after the memory fill before resident memory is read again
    /// (0: read only right after the fill).
    #[arg(long, default_value_t = 30)]
    settle: u64,
    /// Instead of the phases above: fill `--memory-objects` objects, read the memory of every
    /// replica, then restart a follower, the leader and the whole cluster, `--restarts` times
    /// each, and report the time from each start to ready.
    #[arg(long)]
    restart: bool,
    /// Rounds of restarts with `--restart`.
    #[arg(long, default_value_t = 3)]
    restarts: u32,
    /// An extra `apiary dev` flag for the Apiary cluster (repeatable), e.g. for an A/B run of a
    /// setting.
    #[arg(long = "apiary-flag")]
    apiary_flags: Vec<String>,
    /// Skip the etcd baseline even when etcd is installed.
    #[arg(long)]
    no_etcd: bool,
    /// Instead of the phases above: LIST of `--objects` pods in each wire format (with and
    /// without gzip), interleaved, `--lists` rounds.
    #[arg(long)]
    formats: bool,
    /// With `--formats`: CBOR too (the cluster runs with the `CBORServingAndStorage` gate).
    #[arg(long)]
    formats_cbor: bool,
}

/// Concurrency of the unmeasured writes that fill collections.
const FILL_CONCURRENCY: usize = 64;
/// Time budget of one measured row or one fill.
const BUDGET: Duration = Duration::from_secs(600);

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    println!("{}", apiary_tests::machine::describe());
    if args.formats {
        return match bench_formats(&args).await {
            Ok(table) => {
                println!("{table}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("formats benchmark failed: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let mut rows = Vec::new();
    if args.restart {
        if let Err(e) = bench_restart(&args, &mut rows).await {
            eprintln!("restart benchmark failed: {e}");
            return ExitCode::FAILURE;
        }
        if !args.no_etcd
            && etcd_cluster::etcd_available()
            && let Err(e) = etcd_memory(&args, &mut rows).await
        {
            eprintln!("etcd benchmark failed: {e}");
            return ExitCode::FAILURE;
        }
        println!("{}", report::table(&rows));
        return ExitCode::SUCCESS;
    }
    if let Err(e) = bench_apiary(&args, &mut rows).await {
        eprintln!("apiary benchmark failed: {e}");
        return ExitCode::FAILURE;
    }
    if args.no_etcd {
        println!("etcd: skipped (--no-etcd)");
    } else if !etcd_cluster::etcd_available() {
        println!("etcd: not found on PATH, baseline skipped (apt-get install -y etcd-server)");
    } else if let Err(e) = bench_etcd(&args, &mut rows).await {
        eprintln!("etcd benchmark failed: {e}");
        return ExitCode::FAILURE;
    }
    println!("{}", report::table(&rows));
    ExitCode::SUCCESS
}

/// The Apiary cluster's options: the defaults plus `--apiary-flag`s.
fn apiary_options(args: &Args) -> DevOptions {
    (args.apiary_flags.iter()).fold(DevOptions::default(), |options, flag| options.flag(flag))
}

async fn bench_apiary(args: &Args, rows: &mut Vec<report::Row>) -> Result<(), HarnessError> {
    let cluster = DevCluster::start(apiary_options(args)).await?;
    let leader = cluster
        .wait_leader(Duration::from_secs(5))
        .await
        .unwrap_or(1);
    let follower = if leader == 1 { 2 } else { 1 };
    println!("apiary: 3 replicas, leader node-{leader}, follower node-{follower}");
    let replicas: Vec<HttpClient> = (1..=cluster.nodes())
        .map(|i| cluster.client(i).map(|c| c.clone().with_timeout(BUDGET)))
        .collect::<Result<_, _>>()?;
    if !args.watch_only {
        list::fill_apiary(&replicas, 0, args.objects, args.value_size).await?;
        rows.extend(memory::apiary_peaks(&cluster, "during the fill")?);
        for (role, index) in [("leader", leader), ("follower", follower)] {
            let server = cluster.pid(index)?;
            rows.extend(list::apiary_rows(args, role, &replicas[index - 1], server).await?);
        }
        rows.extend(memory::apiary_peaks(&cluster, "during the lists")?);
    }
    rows.extend(watch::apiary(args, &cluster, leader, follower).await?);
    if !args.no_memory && !args.watch_only {
        rows.extend(memory::apiary(args, &cluster, &replicas).await?);
    }
    Ok(())
}

async fn bench_restart(args: &Args, rows: &mut Vec<report::Row>) -> Result<(), HarnessError> {
    let mut cluster = DevCluster::start(apiary_options(args)).await?;
    let replicas: Vec<HttpClient> = (1..=cluster.nodes())
        .map(|i| cluster.client(i).map(|c| c.clone().with_timeout(BUDGET)))
        .collect::<Result<_, _>>()?;
    list::fill_apiary(&replicas, 0, args.objects, args.value_size).await?;
    rows.extend(memory::apiary(args, &cluster, &replicas).await?);
    rows.extend(memory::apiary_peaks(
        &cluster,
        "during the fill and the settle",
    )?);
    rows.extend(restart::apiary(args, &mut cluster).await?);
    Ok(())
}

/// etcd's memory beside `--restart`'s: the same fill, no lists.
async fn etcd_memory(args: &Args, rows: &mut Vec<report::Row>) -> Result<(), HarnessError> {
    let cluster = EtcdCluster::start(3, Duration::from_secs(60)).await?;
    let members: Vec<HttpClient> = (cluster.clients().iter())
        .map(|c| c.clone().with_timeout(BUDGET))
        .collect();
    list::fill_etcd(&members, 0, args.objects, args.value_size).await?;
    rows.extend(memory::etcd(args, &cluster, &members).await?);
    Ok(())
}

async fn bench_formats(args: &Args) -> Result<String, HarnessError> {
    let mut options = DevOptions::default();
    if args.formats_cbor {
        options = options.flag("--feature-gates=CBORServingAndStorage=true");
    }
    let cluster = DevCluster::start(options).await?;
    let leader = cluster
        .wait_leader(Duration::from_secs(5))
        .await
        .unwrap_or(1);
    println!("apiary: 3 replicas, listing on the leader node-{leader}");
    let replicas: Vec<HttpClient> = (1..=cluster.nodes())
        .map(|i| cluster.client(i).map(|c| c.clone().with_timeout(BUDGET)))
        .collect::<Result<_, _>>()?;
    formats::run(args, &replicas, leader).await
}

async fn bench_etcd(args: &Args, rows: &mut Vec<report::Row>) -> Result<(), HarnessError> {
    let cluster = EtcdCluster::start(3, Duration::from_secs(60)).await?;
    let leader = cluster.leader().await?;
    let follower = if leader == 0 { 1 } else { 0 };
    println!(
        "etcd: 3 members, leader m{}, follower m{}",
        leader + 1,
        follower + 1
    );
    let members: Vec<HttpClient> = cluster
        .clients()
        .iter()
        .map(|c| c.clone().with_timeout(BUDGET))
        .collect();
    if !args.watch_only {
        list::fill_etcd(&members, 0, args.objects, args.value_size).await?;
        let native = etcd_native::connect(&cluster, BUDGET).await?;
        for (role, index) in [("leader", leader), ("follower", follower)] {
            let kv = etcd_native::kv(&native[index]);
            let server = cluster.pids()[index];
            rows.extend(list::etcd_native_rows(args, role, &kv, server).await?);
            rows.extend(list::etcd_gateway_rows(args, role, &members[index], server).await?);
        }
    }
    rows.extend(watch::etcd(args, &cluster, leader, follower).await?);
    if !args.no_memory && !args.watch_only {
        rows.extend(memory::etcd(args, &cluster, &members).await?);
    }
    Ok(())
}

//! The interleaved create comparisons (`--custom`, `--admission`): several ways of creating an
//! object on one cluster, each run once per level per round in an order that rotates from round
//! to round, the requests round-robin over the replicas; the table gives each way's mean
//! creates/s and p50 and the ratios asked for.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::Reply;
use apiary_tests::load;
use apiary_tests::load::LevelResult;
use http::StatusCode;
use serde_json::Value;

use super::Args;
use super::ms;
use super::report;
use super::rounds::p50;
use super::rounds::rate;

/// One way of creating an object.
pub trait Way: Send + Sync + 'static {
    /// Its name in the table.
    fn name(&self) -> String;
    /// The collection it posts to.
    fn collection(&self) -> String;
    /// Object `i` of this way.
    fn object(&self, i: u64) -> Value;
}

/// Each way's results: `[level][way][round]`.
pub type Results = Vec<Vec<Vec<LevelResult>>>;

/// A 3-replica cluster of the kubernetes flavor and a client of each replica, once their
/// directory is printed.
pub async fn cluster() -> Result<(DevCluster, Vec<HttpClient>), HarnessError> {
    let cluster = DevCluster::start(DevOptions {
        flavor: Flavor::Kubernetes,
        ..DevOptions::default()
    })
    .await?;
    println!(
        "apiary: {} replicas in {}",
        cluster.nodes(),
        cluster.dir().display()
    );
    let replicas = (1..=cluster.nodes())
        .map(|i| cluster.client(i).cloned())
        .collect::<Result<_, _>>()?;
    Ok((cluster, replicas))
}

/// Sends `probe` every 100 ms until it is answered `wanted`, for at most 30 s (`what` names
/// the wait in the error).
pub async fn until<F, A>(what: &str, wanted: StatusCode, mut probe: F) -> Result<(), HarnessError>
where
    F: FnMut() -> A,
    A: Future<Output = Result<Reply, HarnessError>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let reply = probe().await?;
        if reply.status == wanted {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(HarnessError::UnexpectedStatus {
                what: format!("waiting for {what}"),
                status: reply.status,
                body: reply.text(),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One level of one way: `args.requests` creates from `level` clients, objects numbered from
/// `first`.
async fn level(
    args: &Args,
    replicas: &[HttpClient],
    way: &Arc<dyn Way>,
    level: usize,
    first: u64,
) -> LevelResult {
    let replicas = replicas.to_vec();
    let budget = Duration::from_secs(args.level_budget);
    let way = way.clone();
    load::run(level, args.requests, budget, move |i| {
        let client = replicas[(i as usize) % replicas.len()].clone();
        let way = way.clone();
        async move {
            match client.post(&way.collection(), &way.object(first + i)).await {
                Ok(r) if r.status == StatusCode::CREATED => Ok(()),
                Ok(r) => Err(format!("{}: {}", r.status, r.text())),
                Err(e) => Err(e.to_string()),
            }
        }
    })
    .await
}

/// A warm-up of every way at 16 clients, then `args.rounds` rounds over the levels.
pub async fn compare(args: &Args, replicas: &[HttpClient], ways: &[Arc<dyn Way>]) -> Results {
    let mut next = 0;
    for way in ways {
        let warm = level(args, replicas, way, 16, next).await;
        report(&format!("warm-up {}", way.name()), &warm);
    }
    next += args.requests;
    let mut results: Results = vec![vec![Vec::new(); ways.len()]; args.levels.len()];
    for round in 0..args.rounds {
        for (l, &clients) in args.levels.iter().enumerate() {
            for k in 0..ways.len() {
                let w = (round + k) % ways.len();
                let result = level(args, replicas, &ways[w], clients, next).await;
                report(&format!("round {round} {}", ways[w].name()), &result);
                results[l][w].push(result);
            }
            next += args.requests;
        }
    }
    results
}

/// The markdown table: per level, each way's mean creates/s, then each way's p50, then the
/// throughput ratio of each (numerator, denominator) pair of ways, then the errors.
pub fn table(
    args: &Args,
    ways: &[Arc<dyn Way>],
    results: &Results,
    ratios: &[(usize, usize)],
) -> String {
    let names: Vec<String> = ways.iter().map(|w| w.name()).collect();
    let mut header = vec!["clients".to_owned()];
    header.extend(names.iter().map(|n| format!("{n}/s")));
    header.extend(names.iter().map(|n| format!("{n} p50")));
    header.extend(
        ratios
            .iter()
            .map(|(a, b)| format!("{} / {}", names[*a], names[*b])),
    );
    header.push("errors".to_owned());
    let mut out = String::new();
    let _ = writeln!(out, "\n| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---:|".repeat(header.len()));
    for (l, clients) in args.levels.iter().enumerate() {
        let rates: Vec<f64> = results[l].iter().map(|runs| rate(runs).0).collect();
        let mut row = vec![clients.to_string()];
        row.extend(rates.iter().map(|r| format!("{r:.0}")));
        row.extend(results[l].iter().map(|runs| ms(p50(runs))));
        row.extend(ratios.iter().map(|(a, b)| match rates[*b] > 0.0 {
            true => format!("{:.2}", rates[*a] / rates[*b]),
            false => "-".to_owned(),
        }));
        let errors: u64 = results[l].iter().flatten().map(|r| r.errors).sum();
        row.push(errors.to_string());
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out
}

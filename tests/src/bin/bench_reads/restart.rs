//! Restart-to-ready (`--restart`): with the cluster holding `--memory-objects` objects, the
//! time from starting a stopped replica (a follower, then the leader) to its `/readyz` answering
//! 200, and from starting a whole stopped cluster (`apiary dev` on the same directory) to every
//! replica ready. Each is repeated `--restarts` times; a replica is stopped with SIGTERM (a
//! leader hands its leadership over first), and the stop is not part of the figure.

use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::HarnessError;

use super::Args;
use super::report::Measure;
use super::report::Row;
use super::report::System;

/// How long a restarted cluster gets to elect a leader before the next round.
const LEADER_LIMIT: Duration = Duration::from_secs(10);

/// The restart rows: one follower, the leader, the whole cluster.
pub async fn apiary(args: &Args, cluster: &mut DevCluster) -> Result<Vec<Row>, HarnessError> {
    let binary = apiary_tests::binary::apiary_binary()?;
    let mut follower_times = Vec::new();
    let mut leader_times = Vec::new();
    let mut cluster_times = Vec::new();
    for round in 0..args.restarts {
        let leader = leader(cluster).await?;
        let follower = if leader == 1 { 2 } else { 1 };
        let took = cluster.replace_replica(follower, &binary).await?;
        println!("round {round}: follower node-{follower} ready {took:.2?} after its start");
        follower_times.push(took);

        let leader = self::leader(cluster).await?;
        let took = cluster.replace_replica(leader, &binary).await?;
        println!("round {round}: leader node-{leader} ready {took:.2?} after its start");
        leader_times.push(took);

        cluster.stop()?;
        let started = Instant::now();
        cluster.start_again().await?;
        let took = started.elapsed();
        println!("round {round}: whole cluster ready {took:.2?} after its start");
        cluster_times.push(took);
    }
    let objects = args.memory_objects.max(args.objects);
    Ok(vec![
        row(
            format!("restart-to-ready, {objects} objects, a follower"),
            follower_times,
        ),
        row(
            format!("restart-to-ready, {objects} objects, the leader"),
            leader_times,
        ),
        row(
            format!("restart-to-ready, {objects} objects, whole cluster"),
            cluster_times,
        ),
    ])
}

/// The current leader's 1-based index.
async fn leader(cluster: &DevCluster) -> Result<usize, HarnessError> {
    cluster
        .wait_leader(LEADER_LIMIT)
        .await
        .ok_or_else(|| HarnessError::NotReady {
            what: "a leader".to_owned(),
            waited: LEADER_LIMIT,
            last: cluster.log_tails(20),
        })
}

/// A row of the median and the slowest of `times`.
fn row(workload: String, mut times: Vec<Duration>) -> Row {
    times.sort();
    let median = times.get(times.len() / 2).copied();
    let slowest = times.last().copied();
    println!("Apiary {workload}: {times:.2?}");
    Row {
        system: System::Apiary,
        workload,
        measure: Measure::Latency {
            p50: median,
            p99: slowest,
            errors: 0,
        },
        baseline: None,
    }
}

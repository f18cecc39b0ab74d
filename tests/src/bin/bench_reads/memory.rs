//! Resident memory of each replica (and each etcd member) once it holds `--memory-objects`
//! 1 KiB objects, all written within the last minutes, so the whole write history is still
//! kept (Apiary keeps `--watch-history`, 5 minutes by default): read right after the fill and
//! again after `--settle` seconds without requests, every replica named by its raft role
//! (the leader, then the followers in id order) so that Apiary's and etcd's rows line up.

use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::etcd_cluster::EtcdCluster;

use super::Args;
use super::list;
use super::report::Row;
use super::report::System;

/// Fills Apiary up to `--memory-objects` and reads every replica's resident memory, after the
/// fill and after the settle period.
pub async fn apiary(
    args: &Args,
    cluster: &DevCluster,
    replicas: &[HttpClient],
) -> Result<Vec<Row>, HarnessError> {
    if args.memory_objects > args.objects {
        list::fill_apiary(replicas, args.objects, args.memory_objects, args.value_size).await?;
    }
    let pids = (1..=cluster.nodes())
        .map(|i| cluster.pid(i))
        .collect::<Result<Vec<_>, _>>()?;
    let leader = cluster.wait_leader(LEADER_LIMIT).await.unwrap_or(1);
    read_twice(args, System::Apiary, &pids, leader - 1).await
}

/// Fills etcd up to `--memory-objects` and reads every member's resident memory, after the fill
/// and after the settle period.
pub async fn etcd(
    args: &Args,
    cluster: &EtcdCluster,
    members: &[HttpClient],
) -> Result<Vec<Row>, HarnessError> {
    if args.memory_objects > args.objects {
        list::fill_etcd(members, args.objects, args.memory_objects, args.value_size).await?;
    }
    let leader = cluster.leader().await?;
    read_twice(args, System::Etcd, &cluster.pids(), leader).await
}

/// One row per process right away, and one per process after `--settle` seconds.
async fn read_twice(
    args: &Args,
    system: System,
    pids: &[u32],
    leader: usize,
) -> Result<Vec<Row>, HarnessError> {
    let mut rows = read(args, system, pids, leader, "after the fill")?;
    if args.settle > 0 {
        tokio::time::sleep(Duration::from_secs(args.settle)).await;
        let when = format!("{} s later", args.settle);
        rows.extend(read(args, system, pids, leader, &when)?);
    }
    Ok(rows)
}

/// The resident memory of each of `pids` (index `leader` leads), leader first.
fn read(
    args: &Args,
    system: System,
    pids: &[u32],
    leader: usize,
    when: &str,
) -> Result<Vec<Row>, HarnessError> {
    let mut order: Vec<usize> = (0..pids.len()).collect();
    order.sort_by_key(|&i| i != leader);
    order
        .into_iter()
        .enumerate()
        .map(|(position, i)| {
            let role = if i == leader {
                "leader".to_owned()
            } else {
                format!("follower {position}")
            };
            let bytes = apiary_tests::memory::resident_bytes(pids[i])?;
            let workload = format!(
                "resident memory, {} objects of {} B, {role}, {when}",
                args.memory_objects, args.value_size
            );
            println!("{system:?} member {} is the {role}", i + 1);
            Ok(Row::memory(system, workload, bytes as f64 / MIB))
        })
        .collect()
}

/// How long the replicas' logs get to name the leader.
const LEADER_LIMIT: Duration = Duration::from_secs(5);

const MIB: f64 = 1024.0 * 1024.0;

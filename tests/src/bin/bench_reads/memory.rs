//! Resident memory of each replica (and each etcd member) once it holds `--memory-objects`
//! 1 KiB objects, all written within the last minutes, so the whole write history is still
//! kept (Apiary keeps `--watch-history`, 5 minutes by default): read right after the fill and
//! again after `--settle` seconds without requests, every replica named by its raft role
//! (the leader, then the followers in id order) so that Apiary's and etcd's rows line up; and
//! each replica's peak resident memory during the fill and then during the lists alone, which
//! shows what serving them costs.

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

/// Every replica's peak resident memory (`VmHWM`) since the last reset, in rows named after
/// `when`; then the peaks are reset (`clear_refs`), so the next rows show the peaks of what
/// runs in between.
pub fn apiary_peaks(cluster: &DevCluster, when: &str) -> Result<Vec<Row>, HarnessError> {
    (1..=cluster.nodes())
        .map(|i| {
            let pid = cluster.pid(i)?;
            let mib = status_mib(pid, "VmHWM:")?;
            let workload = format!("peak resident memory {when}, node-{i}");
            let path = std::path::PathBuf::from(format!("/proc/{pid}/clear_refs"));
            std::fs::write(&path, "5").map_err(|source| HarnessError::Io { path, source })?;
            Ok(Row::memory(System::Apiary, workload, mib))
        })
        .collect()
}

/// The `field` (`VmRSS:`, `VmHWM:`) of `pid`'s status, in MiB.
fn status_mib(pid: u32, field: &str) -> Result<f64, HarnessError> {
    let path = std::path::PathBuf::from(format!("/proc/{pid}/status"));
    let status = std::fs::read_to_string(&path).map_err(|source| HarnessError::Io {
        path: path.clone(),
        source,
    })?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    Ok(kib / 1024.0)
}

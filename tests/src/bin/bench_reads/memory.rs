//! Resident memory of each replica (and each etcd member) once it holds `--memory-objects`
//! 1 KiB objects, all written within the last minutes, so the whole write history is still
//! kept (Apiary keeps `--watch-history`, 5 minutes by default); and each replica's peak
//! resident memory during the fill and then during the lists alone, which shows what serving
//! them costs.

use apiary_tests::DevCluster;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::etcd_cluster::EtcdCluster;

use super::Args;
use super::list;
use super::report::Row;
use super::report::System;

/// Fills Apiary up to `--memory-objects` and reads every replica's resident memory.
pub async fn apiary(
    args: &Args,
    cluster: &DevCluster,
    replicas: &[HttpClient],
) -> Result<Vec<Row>, HarnessError> {
    if args.memory_objects > args.objects {
        list::fill_apiary(replicas, args.objects, args.memory_objects, args.value_size).await?;
    }
    (1..=cluster.nodes())
        .map(|i| {
            let mib = resident_mib(cluster.pid(i)?)?;
            Ok(Row::memory(System::Apiary, workload(args, i), mib))
        })
        .collect()
}

/// Fills etcd up to `--memory-objects` and reads every member's resident memory.
pub async fn etcd(
    args: &Args,
    cluster: &EtcdCluster,
    members: &[HttpClient],
) -> Result<Vec<Row>, HarnessError> {
    if args.memory_objects > args.objects {
        list::fill_etcd(members, args.objects, args.memory_objects, args.value_size).await?;
    }
    cluster
        .pids()
        .into_iter()
        .enumerate()
        .map(|(i, pid)| {
            let mib = resident_mib(pid)?;
            Ok(Row::memory(System::Etcd, workload(args, i + 1), mib))
        })
        .collect()
}

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

fn workload(args: &Args, member: usize) -> String {
    format!(
        "resident memory, {} objects of {} B, member {member}",
        args.memory_objects, args.value_size
    )
}

/// `VmRSS` of `pid`, in MiB.
fn resident_mib(pid: u32) -> Result<f64, HarnessError> {
    status_mib(pid, "VmRSS:")
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

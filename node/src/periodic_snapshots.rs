//! Periodic automatic snapshots (`--snapshot-interval`, `--snapshot-dir`,
//! `--snapshot-retention`, as k3s takes etcd snapshots): every replica writes a backup of its
//! own applied state, in the format of `apiary snapshot save`, under a timestamped name, and
//! keeps only the newest few.
//!
//! Every replica, not only the leader: each machine then holds recent backups on its own disk,
//! the loss of any machine loses none of them, and a replica cut off from its quorum still
//! backs up what it has. A replica's file records the highest revision it knew of, so a
//! cluster restored from it continues above that.

use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use apiary_api::Clock;
use apiary_raft::replica::Replica;
use clap::Args;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use crate::duration::format_duration;
use crate::duration::parse_duration;

/// Periodic snapshot files start with this, then the replica's name.
const FILE_PREFIX: &str = "apiary-snapshot-";
/// And end with this.
const FILE_SUFFIX: &str = ".db";
/// A file being written ends with this; it is renamed once complete.
const PART_SUFFIX: &str = ".part";

/// How many periodic snapshots a replica keeps unless told otherwise (k3s keeps five).
const DEFAULT_RETENTION: u32 = 5;

/// The periodic snapshot flags of `apiary serve` (and `apiary dev`, which passes them on).
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct PeriodicSnapshotArgs {
    /// Take a snapshot this often (`30m`, `12h`); none unless given.
    #[arg(long, value_parser = parse_duration)]
    pub snapshot_interval: Option<Duration>,
    /// Where periodic snapshots are written (default: `<data-dir>/backups`).
    #[arg(long)]
    pub snapshot_dir: Option<PathBuf>,
    /// How many periodic snapshots of this replica are kept (the newest).
    #[arg(long, default_value_t = DEFAULT_RETENTION, value_parser = clap::value_parser!(u32).range(1..))]
    pub snapshot_retention: u32,
}

impl Default for PeriodicSnapshotArgs {
    fn default() -> Self {
        Self {
            snapshot_interval: None,
            snapshot_dir: None,
            snapshot_retention: DEFAULT_RETENTION,
        }
    }
}

/// Periodic snapshots of one replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeriodicSnapshots {
    /// Where the files go.
    pub dir: PathBuf,
    /// How often.
    pub interval: Duration,
    /// How many are kept.
    pub retention: usize,
}

impl PeriodicSnapshotArgs {
    /// These flags as `apiary serve` takes them (`apiary dev` passes them on to every replica).
    pub fn replica_flags(&self) -> Vec<std::ffi::OsString> {
        let mut flags = Vec::new();
        if let Some(interval) = self.snapshot_interval {
            flags.push(format!("--snapshot-interval={}", format_duration(interval)).into());
        }
        if let Some(dir) = &self.snapshot_dir {
            let mut flag = std::ffi::OsString::from("--snapshot-dir=");
            flag.push(dir);
            flags.push(flag);
        }
        flags.push(format!("--snapshot-retention={}", self.snapshot_retention).into());
        flags
    }

    /// The settings these flags ask for (`None`: no `--snapshot-interval`, or a zero one).
    pub fn settings(&self, data_dir: &Path) -> Option<PeriodicSnapshots> {
        let interval = self.snapshot_interval.filter(|i| !i.is_zero())?;
        Some(PeriodicSnapshots {
            dir: self
                .snapshot_dir
                .clone()
                .unwrap_or_else(|| data_dir.join("backups")),
            interval,
            retention: usize::try_from(self.snapshot_retention).unwrap_or(usize::MAX),
        })
    }
}

/// Takes a snapshot of `replica` every interval until `stop`; a failed one is logged and the
/// next one tried at its time.
pub async fn run_periodic_snapshots(
    replica: Arc<Replica>,
    name: String,
    clock: Arc<dyn Clock>,
    settings: PeriodicSnapshots,
    stop: CancellationToken,
) {
    let mut ticks = tokio::time::interval(settings.interval);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    // The first tick is immediate: the first snapshot comes one interval after start.
    ticks.tick().await;
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            () = stop.cancelled() => return,
        }
        let backup = replica.local_backup();
        let revision = backup.info.revision;
        let stamp = clock.now().format("%Y%m%dT%H%M%S%.3fZ").to_string();
        let file = settings
            .dir
            .join(format!("{FILE_PREFIX}{name}-{stamp}{FILE_SUFFIX}"));
        let keep = settings.retention;
        let name = name.clone();
        let written = tokio::task::spawn_blocking(move || {
            write_atomically(&file, &backup.encode())?;
            prune(file.parent().unwrap_or(Path::new(".")), &name, keep)?;
            Ok::<_, io::Error>(file)
        })
        .await;
        match written {
            Ok(Ok(file)) => {
                tracing::info!(revision, file = %file.display(), "periodic snapshot written")
            }
            Ok(Err(error)) => tracing::warn!(%error, "periodic snapshot failed"),
            Err(error) => tracing::warn!(%error, "periodic snapshot task failed"),
        }
    }
}

/// Writes `bytes` to `file` durably: a `.part` file, synced, renamed, the directory synced.
fn write_atomically(file: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut part = file.as_os_str().to_owned();
    part.push(PART_SUFFIX);
    let part = PathBuf::from(part);
    {
        use std::io::Write;
        let mut out = std::fs::File::create(&part)?;
        out.write_all(bytes)?;
        out.sync_all()?;
    }
    std::fs::rename(&part, file)?;
    std::fs::File::open(dir)?.sync_all()
}

/// Deletes all but the newest `keep` of `name`'s snapshot files in `dir` (their names sort by
/// time), and `name`'s `.part` files left by an interrupted write.
fn prune(dir: &Path, name: &str, keep: usize) -> io::Result<()> {
    let prefix = format!("{FILE_PREFIX}{name}-");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let file_name = entry?.file_name().to_string_lossy().into_owned();
        if !file_name.starts_with(&prefix) {
            continue;
        }
        if file_name.ends_with(FILE_SUFFIX) {
            files.push(file_name);
        } else if file_name.ends_with(PART_SUFFIX) {
            std::fs::remove_file(dir.join(&file_name))?;
        }
    }
    files.sort();
    let excess = files.len().saturating_sub(keep);
    for old in &files[..excess] {
        std::fs::remove_file(dir.join(old))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prune_keeps_the_newest_of_this_replica_only() {
        let tmp = tempfile::tempdir().unwrap();
        let names = [
            "apiary-snapshot-a-20260101T000001.000Z.db",
            "apiary-snapshot-a-20260101T000003.000Z.db",
            "apiary-snapshot-a-20260101T000002.000Z.db",
            "apiary-snapshot-a-20260101T000004.000Z.db.part",
            "apiary-snapshot-b-20260101T000000.000Z.db",
            "unrelated.txt",
        ];
        for name in names {
            std::fs::write(tmp.path().join(name), b"x").unwrap();
        }
        prune(tmp.path(), "a", 2).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            vec![
                "apiary-snapshot-a-20260101T000002.000Z.db",
                "apiary-snapshot-a-20260101T000003.000Z.db",
                "apiary-snapshot-b-20260101T000000.000Z.db",
                "unrelated.txt",
            ],
            left
        );
    }

    #[test]
    fn no_interval_means_no_snapshots() {
        let data = Path::new("/data");
        assert_eq!(None, PeriodicSnapshotArgs::default().settings(data));
        let args = PeriodicSnapshotArgs {
            snapshot_interval: Some(Duration::from_secs(60)),
            snapshot_dir: None,
            snapshot_retention: 3,
        };
        assert_eq!(
            Some(PeriodicSnapshots {
                dir: PathBuf::from("/data/backups"),
                interval: Duration::from_secs(60),
                retention: 3,
            }),
            args.settings(data)
        );
    }
}

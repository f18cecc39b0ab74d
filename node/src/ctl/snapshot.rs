//! `apiary snapshot save|status|restore`: takes a backup from a running cluster through the
//! operating API, reads one offline, and restores one into the data directory of a member of a
//! new cluster (see [`apiary_raft::state_machine::restore`] for what a restored cluster is).

use std::path::Path;
use std::path::PathBuf;

use apiary_raft::state_machine::Backup;
use apiary_raft::state_machine::BackupError;
use apiary_raft::state_machine::RestoreError;
use apiary_raft::state_machine::RestoreTarget;
use apiary_raft::state_machine::recorded_checksum;
use clap::Args;
use clap::Subcommand;
use clap::ValueEnum;
use serde_json::json;
use sha2::Digest;
use sha2::Sha256;

use super::Client;
use super::ConnectArgs;
use super::CtlError;
use crate::config::ConfigError;
use crate::config::parse_initial_cluster;

/// `apiary snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: SnapshotCommand,
}

/// The `apiary snapshot` subcommands.
#[derive(Debug, Subcommand)]
pub enum SnapshotCommand {
    /// Take a backup of the cluster from the replica the kubeconfig reaches, into FILE.
    Save(SaveArgs),
    /// Check a backup file offline and describe it.
    Status(StatusArgs),
    /// Write the data directory of one member of a new cluster restored from a backup.
    Restore(RestoreArgs),
}

/// `apiary snapshot save`.
#[derive(Debug, Args)]
pub struct SaveArgs {
    /// The file to write (written as FILE.part, then renamed).
    pub file: PathBuf,
    /// How to reach the cluster.
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// How `apiary snapshot status` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    /// One `field: value` line each.
    #[default]
    Text,
    /// One JSON object.
    Json,
}

/// `apiary snapshot status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The backup file.
    pub file: PathBuf,
    /// The output format.
    #[arg(short, long, value_enum, default_value_t)]
    pub output: OutputFormat,
}

/// `apiary snapshot restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The backup file.
    pub file: PathBuf,
    /// The data directory to write (absent or empty); `apiary serve --data-dir` starts from it.
    #[arg(long)]
    pub dir: PathBuf,
    /// This member's name in `--initial-cluster`.
    #[arg(long)]
    pub name: String,
    /// The new cluster, as `apiary serve --initial-cluster` takes it; every member is
    /// restored from the same file with the same list.
    #[arg(long)]
    pub initial_cluster: String,
    /// The restored cluster's revisions continue above at least this (and always above the
    /// highest revision the backup records); older revisions count as compacted.
    #[arg(long, default_value_t = 0)]
    pub revision_floor: u64,
}

/// Why `apiary snapshot` failed.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The cluster could not be asked, or refused.
    #[error("taking the backup failed")]
    Ctl(#[source] CtlError),
    /// A file could not be read or written.
    #[error("{path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a usable backup.
    #[error("{path} is refused")]
    Backup {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: BackupError,
    },
    /// `--initial-cluster` is malformed.
    #[error("--initial-cluster")]
    Members(#[source] ConfigError),
    /// `--name` is not in `--initial-cluster`.
    #[error("--name {0} is not in --initial-cluster")]
    NotAMember(String),
    /// The data directory could not be written.
    #[error("restore failed")]
    Restore(#[source] RestoreError),
}

/// Runs `apiary snapshot`.
pub async fn run(args: SnapshotArgs) -> Result<(), SnapshotError> {
    match args.command {
        SnapshotCommand::Save(args) => save(&args).await,
        SnapshotCommand::Status(args) => status(&args),
        SnapshotCommand::Restore(args) => restore(&args),
    }
}

async fn save(args: &SaveArgs) -> Result<(), SnapshotError> {
    let client = Client::connect(&args.connect).map_err(SnapshotError::Ctl)?;
    let mut part = args.file.clone().into_os_string();
    part.push(".part");
    let part = PathBuf::from(part);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SnapshotError::Io { path, source }
    };
    let mut out = tokio::fs::File::create(&part).await.map_err(io(&part))?;
    let downloaded = client.download("snapshot", &mut out).await;
    let synced = match downloaded {
        Ok(_) => out.sync_all().await.map_err(io(&part)),
        Err(e) => Err(SnapshotError::Ctl(e)),
    };
    drop(out);
    let checked = synced.and_then(|()| read_backup(&part));
    let (backup, bytes) = match checked {
        Ok(read) => read,
        Err(e) => {
            // Best effort: the partial file is useless, and the error says why.
            let _ = std::fs::remove_file(&part);
            return Err(e);
        }
    };
    std::fs::rename(&part, &args.file).map_err(io(&args.file))?;
    sync_parent(&args.file).map_err(io(&args.file))?;
    println!(
        "saved {}: revision {}, {} keys, {} bytes, sha256 {}",
        args.file.display(),
        backup.info.revision,
        backup.live_keys(),
        bytes.len(),
        recorded_checksum(&bytes)
    );
    Ok(())
}

fn status(args: &StatusArgs) -> Result<(), SnapshotError> {
    let (backup, bytes) = read_backup(&args.file)?;
    let described = json!({
        "checksum": recorded_checksum(&bytes),
        "checksumOk": true,
        "revision": backup.info.revision,
        "revisionFloor": backup.floor(0),
        "keys": backup.live_keys(),
        "size": bytes.len(),
        "clusterId": backup.info.cluster_id,
    });
    match args.output {
        OutputFormat::Json => println!("{described}"),
        OutputFormat::Text => {
            println!("checksum:       sha256 {} (ok)", recorded_checksum(&bytes));
            println!("revision:       {}", backup.info.revision);
            println!("revision floor: {}", backup.floor(0));
            println!("keys:           {}", backup.live_keys());
            println!("size:           {} bytes", bytes.len());
            println!("cluster id:     {}", display_id(&backup.info.cluster_id));
        }
    }
    Ok(())
}

fn restore(args: &RestoreArgs) -> Result<(), SnapshotError> {
    let members = parse_initial_cluster(&args.initial_cluster).map_err(SnapshotError::Members)?;
    if !members.iter().any(|m| m.name == args.name) {
        return Err(SnapshotError::NotAMember(args.name.clone()));
    }
    let (backup, bytes) = read_backup(&args.file)?;
    let target = RestoreTarget {
        cluster_id: new_cluster_id(&bytes, &args.initial_cluster, args.revision_floor),
        members: members.into_iter().map(|m| (m.id, m.peer_url)).collect(),
        revision_floor: args.revision_floor,
    };
    let floor = apiary_raft::state_machine::restore(&backup, &args.dir, &target)
        .map_err(SnapshotError::Restore)?;
    println!(
        "restored {} (revision {}, {} keys) into {} for {}; cluster id {}; revisions continue above {floor}",
        args.file.display(),
        backup.info.revision,
        backup.live_keys(),
        args.dir.display(),
        args.name,
        target.cluster_id,
    );
    Ok(())
}

/// Reads and checks a backup file; the backup and the file's bytes.
fn read_backup(path: &Path) -> Result<(Backup, Vec<u8>), SnapshotError> {
    let bytes = std::fs::read(path).map_err(|source| SnapshotError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let backup = Backup::decode(&bytes).map_err(|source| SnapshotError::Backup {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((backup, bytes))
}

/// The restored cluster's identity: the same for every member restored from the same file
/// with the same arguments, and different from the source's (as etcd derives a cluster id from
/// its initial cluster).
fn new_cluster_id(backup: &[u8], initial_cluster: &str, floor: u64) -> String {
    let mut hasher = Sha256::new();
    hasher.update(backup);
    hasher.update(initial_cluster.as_bytes());
    hasher.update(floor.to_le_bytes());
    hasher.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn display_id(id: &str) -> &str {
    if id.is_empty() { "(none recorded)" } else { id }
}

/// Makes a rename in `file`'s directory durable.
fn sync_parent(file: &Path) -> std::io::Result<()> {
    let parent = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::File::open(parent)?.sync_all()
}

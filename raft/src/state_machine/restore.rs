//! Restoring a backup ([`super::backup`]) into a fresh data directory for a member of a new
//! cluster (`apiary snapshot restore`).
//!
//! The data directory gets one raft snapshot and no log. The snapshot's last log index is the
//! floor ([`Backup::floor`]), its membership the new cluster's, and its store the backup's
//! advanced to the floor and compacted there. openraft starts from it as an initialized node
//! (it purges the empty log up to the snapshot), so the replica founds nothing and elects a
//! leader with its peers; the log continues at floor + 1. Every object keeps its revisions, and
//! reads and watches from below the floor answer "compacted" (410): informers relist.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use prost::Message;

use super::backup::Backup;
use super::snapshot_dir::SnapshotDir;
use super::snapshot_file::SnapshotFile;
use crate::log::LogFs;
use crate::log::StdFs;
use crate::mvcc::Revision;
use crate::mvcc::Store;
use crate::typ;
use crate::typ::NodeId;
use crate::wire;

/// Why a restore wrote nothing usable.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The target directory exists and holds something: a restore never overwrites.
    #[error("{0} exists and is not empty")]
    NotEmpty(PathBuf),
    /// The new membership is unusable.
    #[error("invalid membership: {0}")]
    Membership(String),
    /// Reading or writing the directory failed.
    #[error("writing {path}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The failure.
        #[source]
        source: io::Error,
    },
}

/// The new cluster a backup is restored into.
#[derive(Debug, Clone)]
pub struct RestoreTarget {
    /// Every member of the new cluster: raft id to peer URL.
    pub members: BTreeMap<NodeId, String>,
    /// The lowest floor the operator asks for (`--revision-floor`).
    pub revision_floor: Revision,
    /// The new cluster's identity.
    pub cluster_id: String,
}

/// Writes `data_dir` (absent or empty) so that a replica of `target` starts from `backup`;
/// returns the floor. Every member of the new cluster is restored from the same backup with
/// the same target, so all of them hold the same snapshot.
pub fn restore(
    backup: &Backup,
    data_dir: &Path,
    target: &RestoreTarget,
) -> Result<Revision, RestoreError> {
    restore_on(Arc::new(StdFs), backup, data_dir, target)
}

/// [`restore`] on the file system `fs` (the simulation's disk).
pub fn restore_on(
    fs: Arc<dyn LogFs>,
    backup: &Backup,
    data_dir: &Path,
    target: &RestoreTarget,
) -> Result<Revision, RestoreError> {
    let io_error = |source| RestoreError::Io {
        path: data_dir.to_path_buf(),
        source,
    };
    match fs.list(data_dir) {
        Ok(entries) if !entries.is_empty() => {
            return Err(RestoreError::NotEmpty(data_dir.to_path_buf()));
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_error(e)),
    }
    let floor = backup.floor(target.revision_floor);
    let file = restored_snapshot(backup, target, floor)?;
    let snapshots = SnapshotDir::open(fs, &data_dir.join("snapshots")).map_err(io_error)?;
    snapshots.save(&file).map_err(io_error)?;
    Ok(floor)
}

/// The raft snapshot a member of `target` starts from.
fn restored_snapshot(
    backup: &Backup,
    target: &RestoreTarget,
    floor: Revision,
) -> Result<SnapshotFile, RestoreError> {
    if target.members.is_empty() {
        return Err(RestoreError::Membership("no members".to_string()));
    }
    let mut store = Store::from_snapshot(backup.store.clone());
    store.advance(floor);
    store
        .compact(floor)
        .map_err(|e| RestoreError::Membership(e.to_string()))?;
    store.set_cluster_id(target.cluster_id.clone());
    let voters: BTreeSet<NodeId> = target.members.keys().copied().collect();
    let nodes: BTreeMap<NodeId, typ::Node> = target
        .members
        .iter()
        .map(|(id, url)| (*id, typ::Node::new(url.clone())))
        .collect();
    let membership = openraft::Membership::new(vec![voters], nodes)
        .map_err(|e| RestoreError::Membership(e.to_string()))?;
    // The leader id of `initialize`'s founding entry: no term has begun yet.
    let log_id = typ::LogId::from(wire::LogId {
        term: 0,
        node_id: 0,
        index: floor,
    });
    Ok(SnapshotFile {
        meta: typ::SnapshotMeta {
            last_log_id: Some(log_id),
            last_membership: typ::StoredMembership::new(Some(log_id), membership),
        },
        store: Bytes::from(store.to_snapshot().encode_to_vec()),
    })
}

//! Backups of a replica's store (`apiary snapshot save` and periodic snapshots): the applied
//! state at one revision with what a restore needs to continue above every revision the
//! cluster issued.

use openraft::async_runtime::watch::WatchReceiver;

use super::ReadError;
use super::Replica;
use crate::state_machine::Backup;
use crate::state_machine::BackupInfo;
use crate::typ;
use crate::wire;

impl Replica {
    /// A backup that is not stale: taken after a linearizable read index, so it holds every
    /// write acknowledged anywhere before the call. Fails as [`Replica::read_index`] does.
    pub async fn backup(&self) -> Result<Backup, ReadError> {
        self.read_index().await?;
        Ok(self.local_backup())
    }

    /// A backup of this replica's applied state as it is now, without asking the leader
    /// (periodic snapshots on every replica).
    pub fn local_backup(&self) -> Backup {
        let (highest, membership) = {
            let metrics = self.raft.metrics();
            let m = metrics.borrow_watched();
            (
                m.last_log_index.unwrap_or(0),
                m.membership_config.as_ref().clone(),
            )
        };
        let store = self.shared.with_store(|s| s.to_snapshot());
        let index = store.revision;
        Backup {
            meta: typ::SnapshotMeta {
                last_log_id: Some(typ::LogId::from(wire::LogId {
                    term: 0,
                    node_id: 0,
                    index,
                })),
                last_membership: membership,
            },
            info: BackupInfo {
                revision: index,
                highest_revision: highest.max(index),
                cluster_id: store.cluster_id.clone(),
            },
            store,
        }
    }
}

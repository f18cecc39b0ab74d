//! The raft state machine: applies committed entries to the MVCC store, builds and installs
//! snapshots.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures::Stream;
use futures::TryStreamExt;
use openraft::EntryPayload;
use openraft::storage::EntryResponder;
use openraft::storage::RaftStateMachine;
use openraft::type_config::alias::SnapshotOf;
use prost::Message;

use super::ApplyNotice;
use super::SharedState;
use super::builder::SnapshotBuilder;
use super::snapshot_dir::SnapshotDir;
use super::snapshot_file::SnapshotFile;
use crate::log::LogFs;
use crate::mvcc::Revision;
use crate::mvcc::Store;
use crate::mvcc::StoreSnapshot;
use crate::runtime;
use crate::typ;
use crate::typ::TypeConfig;

/// Apiary's [`RaftStateMachine`]: an in-memory [`Store`] (shared with readers through
/// [`SharedState`]) plus durable snapshot files.
///
/// The store itself is not persisted on apply; on start-up openraft installs the newest
/// snapshot ([`RaftStateMachine::get_current_snapshot`]) and re-applies the committed log after
/// it, which is why the log is only purged up to a durable snapshot.
///
/// The revision of an applied entry is its log index: a transaction writes at that revision,
/// blank and membership entries only advance the store to it.
#[derive(Debug)]
pub struct StateMachineStore {
    shared: Arc<SharedState>,
    last_applied: Option<typ::LogId>,
    last_membership: typ::StoredMembership,
    snapshots: SnapshotDir,
}

impl StateMachineStore {
    /// Opens the state machine with its snapshots in `snapshot_dir` (created if absent) on the
    /// file system `fs`. The store starts empty: openraft restores it from the newest snapshot
    /// and the log.
    pub async fn open(fs: Arc<dyn LogFs>, snapshot_dir: &Path) -> io::Result<Self> {
        let dir = snapshot_dir.to_path_buf();
        let snapshots = runtime::blocking(move || SnapshotDir::open(fs, &dir)).await??;
        Ok(Self {
            shared: SharedState::new(),
            last_applied: None,
            last_membership: typ::StoredMembership::default(),
            snapshots,
        })
    }

    /// The state readers share.
    pub fn shared(&self) -> Arc<SharedState> {
        self.shared.clone()
    }
}

impl RaftStateMachine<TypeConfig> for StateMachineStore {
    type SnapshotData = Bytes;
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<typ::LogId>, typ::StoredMembership), io::Error> {
        Ok((self.last_applied, self.last_membership.clone()))
    }

    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin + Send,
    {
        while let Some((entry, responder)) = entries.try_next().await? {
            let revision = entry.log_id.index;
            // openraft applies each index once, in order (the founding membership entry has
            // index 0); anything else would give two writes the same revision, so stop rather
            // than diverge.
            if self.last_applied.is_some_and(|l| revision <= l.index) {
                return Err(out_of_order(revision, self.shared.applied()));
            }
            let command = match &entry.payload {
                EntryPayload::Normal(command) => Some(command),
                EntryPayload::Blank | EntryPayload::Membership(_) => None,
            };
            let started = Instant::now();
            let response = self
                .shared
                .apply(revision, command)
                .map_err(|current| out_of_order(revision, current))?;
            self.shared.metrics().apply.observe(started.elapsed());
            if let EntryPayload::Membership(membership) = entry.payload {
                self.last_membership = typ::StoredMembership::new(Some(entry.log_id), membership);
            }
            self.last_applied = Some(entry.log_id);
            if let Some(responder) = responder {
                responder.send(response);
            }
        }
        Ok(())
    }

    async fn try_create_snapshot_builder(&mut self, _force: bool) -> Option<SnapshotBuilder> {
        Some(self.get_snapshot_builder().await)
    }

    async fn get_snapshot_builder(&mut self) -> SnapshotBuilder {
        SnapshotBuilder {
            meta: typ::SnapshotMeta {
                last_log_id: self.last_applied,
                last_membership: self.last_membership.clone(),
            },
            store: self.shared.read().to_snapshot(),
            dir: self.snapshots.clone(),
            metrics: self.shared.metrics().clone(),
        }
    }

    async fn install_snapshot(
        &mut self,
        meta: &typ::SnapshotMeta,
        snapshot: Bytes,
    ) -> Result<(), io::Error> {
        let decoded = StoreSnapshot::decode(snapshot.clone())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let index = meta.last_log_id.as_ref().map_or(0, |l| l.index);
        if decoded.revision != index {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "snapshot store is at revision {} but its metadata says {index}",
                    decoded.revision
                ),
            ));
        }
        // On start-up openraft installs the snapshot it just read from our directory; writing
        // it again would only cost time.
        if self.snapshots.current_meta().as_ref() != Some(meta) {
            let file = SnapshotFile {
                meta: meta.clone(),
                store: snapshot,
            };
            let dir = self.snapshots.clone();
            runtime::blocking(move || dir.save(&file)).await??;
        }
        *self.shared.write() = Store::from_snapshot(decoded);
        self.shared.metrics().snapshot_taken_now();
        self.last_applied = meta.last_log_id;
        self.last_membership = meta.last_membership.clone();
        self.shared
            .publish(index, Some(ApplyNotice::Restored { revision: index }));
        tracing::info!(last_log_id = ?meta.last_log_id, "snapshot installed");
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<SnapshotOf<TypeConfig, Bytes>>, io::Error> {
        let dir = self.snapshots.clone();
        let file = runtime::blocking(move || dir.read_current()).await??;
        Ok(file.map(|f| SnapshotOf::<TypeConfig, Bytes> {
            meta: f.meta,
            snapshot: f.store,
        }))
    }
}

fn out_of_order(revision: Revision, current: Revision) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("entry {revision} is not after the applied revision {current}"),
    )
}

#[cfg(test)]
#[path = "store_test.rs"]
mod store_test;

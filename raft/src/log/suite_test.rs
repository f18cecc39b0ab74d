//! openraft's storage conformance suite (`openraft::testing::log::Suite`) run against
//! [`LogStore`]. The suite also exercises a state machine; a minimal one that tracks only the
//! applied log id and membership stands in for the real one here.

use std::io;
use std::sync::Arc;
use std::sync::Mutex;

use futures::Stream;
use futures::StreamExt;
use openraft::EntryPayload;
use openraft::RaftSnapshotBuilder;
use openraft::Snapshot;
use openraft::StorageError;
use openraft::storage::EntryResponder;
use openraft::storage::RaftStateMachine;
use openraft::testing::log::StoreBuilder;
use openraft::testing::log::Suite;
use openraft::type_config::TypeConfigExt;

use super::LogOptions;
use super::LogStore;
use super::WriterMode;
use crate::command::CommandResponse;
use crate::typ::LogId;
use crate::typ::SnapshotMeta;
use crate::typ::StoredMembership;
use crate::typ::TypeConfig;

/// What the stand-in state machine holds, and what its snapshots carry.
#[derive(Debug, Clone, Default)]
struct Applied {
    last_applied: Option<LogId>,
    membership: StoredMembership,
}

#[derive(Debug, Default)]
struct SmState {
    applied: Applied,
    current: Option<(SnapshotMeta, Applied)>,
}

/// A state machine that only tracks the applied log id and membership.
#[derive(Debug, Clone, Default)]
struct StandInSm(Arc<Mutex<SmState>>);

impl RaftSnapshotBuilder<TypeConfig> for StandInSm {
    type SnapshotData = Applied;

    async fn build_snapshot(
        &mut self,
    ) -> Result<Snapshot<LogIdLeader, u64, crate::typ::Node, Applied>, io::Error> {
        let mut state = self.0.lock().unwrap();
        let meta = SnapshotMeta {
            last_log_id: state.applied.last_applied,
            last_membership: state.applied.membership.clone(),
        };
        state.current = Some((meta.clone(), state.applied.clone()));
        Ok(Snapshot {
            meta,
            snapshot: state.applied.clone(),
        })
    }
}

/// The committed leader id type inside [`LogId`].
type LogIdLeader = openraft::impls::leader_id_adv::LeaderId<u64, u64>;

impl RaftStateMachine<TypeConfig> for StandInSm {
    type SnapshotData = Applied;
    type SnapshotBuilder = StandInSm;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), io::Error> {
        let state = self.0.lock().unwrap();
        Ok((state.applied.last_applied, state.applied.membership.clone()))
    }

    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin + Send,
    {
        while let Some(item) = entries.next().await {
            let (entry, responder) = item?;
            {
                let mut state = self.0.lock().unwrap();
                state.applied.last_applied = Some(entry.log_id);
                if let EntryPayload::Membership(membership) = &entry.payload {
                    state.applied.membership =
                        StoredMembership::new(Some(entry.log_id), membership.clone());
                }
            }
            if let Some(responder) = responder {
                responder.send(CommandResponse::default());
            }
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> StandInSm {
        self.clone()
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: Applied,
    ) -> Result<(), io::Error> {
        let mut state = self.0.lock().unwrap();
        state.applied = snapshot.clone();
        state.current = Some((meta.clone(), snapshot));
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<Snapshot<LogIdLeader, u64, crate::typ::Node, Applied>>, io::Error> {
        let state = self.0.lock().unwrap();
        Ok(state
            .current
            .clone()
            .map(|(meta, snapshot)| Snapshot { meta, snapshot }))
    }
}

/// Builds a fresh [`LogStore`] in a new temporary directory (kept alive by the guard) with tiny
/// segments and cache, so the suite crosses segment boundaries and reads from disk; its writer
/// runs in the given mode.
struct Builder(WriterMode);

impl StoreBuilder<TypeConfig, LogStore, StandInSm, tempfile::TempDir> for Builder {
    async fn build(
        &self,
    ) -> Result<(tempfile::TempDir, LogStore, StandInSm), StorageError<TypeConfig>> {
        let dir =
            tempfile::tempdir().map_err(|e| StorageError::read(TypeConfig::err_from_error(&e)))?;
        let options = LogOptions {
            segment_bytes: 256,
            cache_entries: 3,
            writer: self.0,
            ..LogOptions::default()
        };
        let store = LogStore::open(dir.path(), options)
            .map_err(|e| StorageError::read(TypeConfig::err_from_error(&e)))?;
        Ok((dir, store, StandInSm::default()))
    }
}

// R-HA-001: the log satisfies openraft's storage contract.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openraft_log_storage_suite() {
    Suite::test_all(Builder(WriterMode::Thread)).await.unwrap();
}

// R-HA-001, R-HA-013: the writer run as a task (the simulation's mode) keeps the same contract.
#[tokio::test]
async fn openraft_log_storage_suite_task_writer() {
    Suite::test_all(Builder(WriterMode::Task)).await.unwrap();
}

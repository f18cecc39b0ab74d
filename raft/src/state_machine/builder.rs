//! Builds a snapshot from a point-in-time copy of the store and writes it durably.

use std::io;
use std::time::Instant;

use bytes::Bytes;
use openraft::storage::RaftSnapshotBuilder;
use openraft::type_config::alias::SnapshotOf;
use prost::Message;

use super::snapshot_dir::SnapshotDir;
use super::snapshot_file::SnapshotFile;
use crate::metrics::StoreMetrics;
use crate::mvcc::StoreSnapshot;
use crate::runtime;
use crate::typ;
use crate::typ::TypeConfig;

/// A snapshot builder holding a copy of the store taken between two applied entries, so the
/// (slow) encoding and disk writes run while apply goes on.
#[derive(Debug)]
pub struct SnapshotBuilder {
    pub(super) meta: typ::SnapshotMeta,
    pub(super) store: StoreSnapshot,
    pub(super) dir: SnapshotDir,
    pub(super) metrics: StoreMetrics,
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    type SnapshotData = Bytes;

    /// Encodes the copy and writes it durably before returning, because openraft purges the
    /// log up to a snapshot as soon as this returns.
    async fn build_snapshot(&mut self) -> Result<SnapshotOf<TypeConfig, Bytes>, io::Error> {
        let started = Instant::now();
        let file = SnapshotFile {
            meta: self.meta.clone(),
            store: Bytes::from(self.store.encode_to_vec()),
        };
        let dir = self.dir.clone();
        let saved = file.clone();
        runtime::blocking(move || dir.save(&saved)).await??;
        self.metrics.snapshot_duration.observe(started.elapsed());
        self.metrics
            .snapshot_bytes
            .set(i64::try_from(file.store.len()).unwrap_or(i64::MAX));
        self.metrics.snapshot_taken_now();
        tracing::info!(last_log_id = ?self.meta.last_log_id, "snapshot built");
        Ok(SnapshotOf::<TypeConfig, Bytes> {
            meta: file.meta,
            snapshot: file.store,
        })
    }
}

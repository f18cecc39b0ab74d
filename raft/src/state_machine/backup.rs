//! Backups (`apiary snapshot save`): a snapshot file ([`super::snapshot_file`]) whose body also
//! carries [`BackupInfo`], followed by a SHA-256 of everything before it. The CRC inside guards
//! the body as for raft snapshots; the SHA-256 lets an operator compare a copy with what was
//! printed when it was taken, and refuses a torn or altered file before anything reads it.

use bytes::Bytes;
use prost::Message;
use sha2::Digest;
use sha2::Sha256;

use super::snapshot_file::SnapshotFileBody;
use super::snapshot_file::decode_body;
use super::snapshot_file::encode_body;
use crate::mvcc::Revision;
use crate::mvcc::StoreSnapshot;
use crate::typ;
use crate::wire;

/// The length of the SHA-256 trailer.
const DIGEST_LEN: usize = 32;

/// What a backup records beyond a raft snapshot. Fields are only ever added, with new tags.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct BackupInfo {
    /// The revision the store was taken at.
    #[prost(uint64, tag = "1")]
    pub revision: u64,
    /// The highest revision the source cluster had issued as far as the replica that took the
    /// backup knew (its newest log index): a restored cluster continues above it.
    #[prost(uint64, tag = "2")]
    pub highest_revision: u64,
    /// The source cluster's identity (empty when it recorded none).
    #[prost(string, tag = "3")]
    pub cluster_id: String,
}

/// Why a backup file was refused.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// The file is shorter than its checksum.
    #[error("the file is too short to be a backup ({0} bytes)")]
    Truncated(usize),
    /// The content does not match its SHA-256.
    #[error("checksum mismatch: the backup is torn or altered")]
    Checksum,
    /// The checksum matches but the content does not decode.
    #[error("the backup does not decode: {0}")]
    Invalid(String),
    /// A valid raft snapshot file without backup information.
    #[error("the file is a raft snapshot, not a backup made by `apiary snapshot save`")]
    NotABackup,
}

/// A decoded backup.
#[derive(Debug, Clone)]
pub struct Backup {
    /// The source's raft metadata: the revision's log index and the membership then.
    pub meta: typ::SnapshotMeta,
    /// The whole store at [`BackupInfo::revision`].
    pub store: StoreSnapshot,
    /// What the backup records beyond that.
    pub info: BackupInfo,
}

impl Backup {
    /// The file: the framed body, then the SHA-256 of the framed body.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = encode_body(&SnapshotFileBody {
            meta: Some(wire::SnapshotMeta::from(&self.meta)),
            store: Bytes::from(self.store.encode_to_vec()),
            backup: Some(self.info.clone()),
        });
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        out
    }

    /// Decodes a file, checking its SHA-256 first, then its frame and content.
    pub fn decode(bytes: &[u8]) -> Result<Self, BackupError> {
        let Some(split) = bytes.len().checked_sub(DIGEST_LEN) else {
            return Err(BackupError::Truncated(bytes.len()));
        };
        let (content, digest) = bytes.split_at(split);
        if Sha256::digest(content).as_slice() != digest {
            return Err(BackupError::Checksum);
        }
        let (meta, body) = decode_body(content).map_err(|e| BackupError::Invalid(e.to_string()))?;
        let info = body.backup.ok_or(BackupError::NotABackup)?;
        let store =
            StoreSnapshot::decode(body.store).map_err(|e| BackupError::Invalid(e.to_string()))?;
        if store.revision != info.revision {
            return Err(BackupError::Invalid(format!(
                "the store is at revision {} but the backup says {}",
                store.revision, info.revision
            )));
        }
        Ok(Self { meta, store, info })
    }

    /// The keys that exist at the backup's revision (their newest version is not a deletion).
    pub fn live_keys(&self) -> usize {
        self.store
            .keys
            .iter()
            .filter(|k| k.versions.last().is_some_and(|v| v.value.is_some()))
            .count()
    }

    /// The revision a cluster restored from this backup counts as compacted: the highest the
    /// source issued, raised to `floor` when that is higher. Its next writes are above it.
    pub fn floor(&self, floor: Revision) -> Revision {
        self.info
            .highest_revision
            .max(self.info.revision)
            .max(floor)
    }
}

/// The checksum a backup file carries, in lowercase hex (empty for a file too short).
pub fn recorded_checksum(bytes: &[u8]) -> String {
    bytes
        .len()
        .checked_sub(DIGEST_LEN)
        .map(|split| bytes[split..].iter().map(|b| format!("{b:02x}")).collect())
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "backup_test.rs"]
mod backup_test;

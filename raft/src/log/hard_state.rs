//! The log's small durable state besides the entries: the vote, the last committed log id and
//! the last purged log id, kept in one file that is replaced atomically (temp file, fsync,
//! rename, fsync of the directory).

use std::path::Path;

use prost::Message;

use super::error::InvalidRecord;
use super::error::LogError;
use super::fs::LogFs;
use super::record;
use crate::typ::LogId;
use crate::typ::Vote;
use crate::wire;

/// Name of the state file in the log directory.
pub(crate) const FILE_NAME: &str = "log-state";
/// Name of the state file while it is being replaced.
const TEMP_FILE_NAME: &str = "log-state.tmp";

/// The vote, committed and purged log ids, as the log keeps them in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HardState {
    /// The last saved vote.
    pub(crate) vote: Option<Vote>,
    /// The last saved committed log id.
    pub(crate) committed: Option<LogId>,
    /// The last purged log id: entries up to it are gone.
    pub(crate) last_purged: Option<LogId>,
}

/// The protobuf form of [`HardState`].
#[derive(Clone, PartialEq, prost::Message)]
struct HardStateWire {
    #[prost(message, optional, tag = "1")]
    vote: Option<wire::Vote>,
    #[prost(message, optional, tag = "2")]
    committed: Option<wire::LogId>,
    #[prost(message, optional, tag = "3")]
    last_purged: Option<wire::LogId>,
}

impl HardState {
    /// Reads the state file in `dir`; the default state when there is none yet.
    pub(crate) fn load(fs: &dyn LogFs, dir: &Path) -> Result<Self, LogError> {
        let path = dir.join(FILE_NAME);
        let bytes = fs.read(&path).map_err(|source| LogError::Io {
            op: "read state file",
            path: path.clone(),
            source,
        })?;
        let Some(bytes) = bytes else {
            return Ok(Self::default());
        };
        let corrupt = |source| LogError::CorruptState {
            path: path.clone(),
            source,
        };
        let (payload, _) = record::unframe(&bytes)
            .map_err(|damage| corrupt(InvalidRecord::Framing(damage.to_string())))?;
        let wire = HardStateWire::decode(payload).map_err(|e| corrupt(InvalidRecord::Decode(e)))?;
        Ok(Self {
            vote: wire.vote.map(Vote::from),
            committed: wire.committed.map(LogId::from),
            last_purged: wire.last_purged.map(LogId::from),
        })
    }

    /// Replaces the state file in `dir` with `self`, durably and atomically: a crash leaves
    /// either the old or the new state, never a mix.
    pub(crate) fn store(&self, fs: &dyn LogFs, dir: &Path) -> Result<(), LogError> {
        let wire = HardStateWire {
            vote: self.vote.as_ref().map(wire::Vote::from),
            committed: self.committed.as_ref().map(wire::LogId::from),
            last_purged: self.last_purged.as_ref().map(wire::LogId::from),
        };
        let mut bytes = Vec::new();
        // A few dozen bytes always fit a record.
        let _ = record::frame(&wire.encode_to_vec(), &mut bytes);
        let temp = dir.join(TEMP_FILE_NAME);
        let path = dir.join(FILE_NAME);
        let io = |op, path: &Path| {
            let path = path.to_path_buf();
            move |source| LogError::Io { op, path, source }
        };
        fs.write_synced(&temp, &[&bytes])
            .map_err(io("write state file", &temp))?;
        fs.rename(&temp, &path)
            .map_err(io("replace state file", &path))?;
        fs.sync_dir(dir).map_err(io("sync log directory", dir))
    }
}

#[cfg(test)]
mod tests {
    use openraft::impls::leader_id_adv::LeaderId;

    use super::*;
    use crate::log::fs::StdFs;

    #[test]
    fn missing_file_loads_default_and_stored_state_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            HardState::default(),
            HardState::load(&StdFs, dir.path()).unwrap()
        );

        let state = HardState {
            vote: Some(Vote::new_committed(3, 2)),
            committed: Some(LogId::new(
                LeaderId {
                    term: 3,
                    node_id: 2,
                },
                17,
            )),
            last_purged: Some(LogId::new(
                LeaderId {
                    term: 1,
                    node_id: 1,
                },
                5,
            )),
        };
        state.store(&StdFs, dir.path()).unwrap();
        assert_eq!(state, HardState::load(&StdFs, dir.path()).unwrap());
        assert!(!dir.path().join(TEMP_FILE_NAME).exists());
    }

    #[test]
    fn damaged_file_is_a_fatal_error() {
        let dir = tempfile::tempdir().unwrap();
        HardState::default().store(&StdFs, dir.path()).unwrap();
        std::fs::write(dir.path().join(FILE_NAME), b"garbage!!").unwrap();
        let err = HardState::load(&StdFs, dir.path()).unwrap_err();
        assert!(matches!(err, LogError::CorruptState { .. }), "{err:?}");
    }
}

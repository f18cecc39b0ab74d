//! The snapshot directory: durable snapshot files named by the last log index they cover, of
//! which only the newest is kept.

use std::fs;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use super::snapshot_file::SnapshotFile;
use crate::typ;

const PREFIX: &str = "snapshot-";
const SUFFIX: &str = ".snap";

/// The snapshot directory, shared by the state machine (installs) and its snapshot builders
/// (builds), which may run concurrently.
///
/// ### Invariant
/// `current` names the newest complete, durable snapshot file, and no other snapshot file
/// remains once a save has finished.
#[derive(Debug, Clone)]
pub struct SnapshotDir {
    dir: PathBuf,
    /// The newest durable snapshot: its metadata and file. Never held across IO that blocks.
    current: Arc<Mutex<Option<(typ::SnapshotMeta, PathBuf)>>>,
}

impl SnapshotDir {
    /// Opens (creating) the directory, deletes leftover temporary and unreadable files, and
    /// finds the newest valid snapshot. Blocking IO.
    pub fn open(dir: &Path) -> io::Result<Self> {
        fs::create_dir_all(dir)?;
        let mut newest: Option<(typ::SnapshotMeta, PathBuf)> = None;
        for entry in fs::read_dir(dir)? {
            let path = entry?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if name.ends_with(".tmp") {
                fs::remove_file(&path)?;
                continue;
            }
            if !(name.starts_with(PREFIX) && name.ends_with(SUFFIX)) {
                continue;
            }
            match SnapshotFile::read(&path) {
                Ok(file) => {
                    let index = index_of(&file.meta);
                    if newest.as_ref().is_none_or(|(m, _)| index > index_of(m)) {
                        newest = Some((file.meta, path));
                    }
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "ignoring unreadable snapshot file");
                }
            }
        }
        let this = Self {
            dir: dir.to_path_buf(),
            current: Arc::new(Mutex::new(newest)),
        };
        this.remove_all_but_current()?;
        Ok(this)
    }

    /// The metadata of the newest durable snapshot.
    pub fn current_meta(&self) -> Option<typ::SnapshotMeta> {
        self.lock().as_ref().map(|(m, _)| m.clone())
    }

    /// Reads the newest durable snapshot. Blocking IO.
    pub fn read_current(&self) -> io::Result<Option<SnapshotFile>> {
        let path = self.lock().as_ref().map(|(_, p)| p.clone());
        path.map(|p| SnapshotFile::read(&p)).transpose()
    }

    /// Writes `file` durably and makes it current unless a newer snapshot already is; then
    /// deletes every other snapshot file. Blocking IO.
    pub fn save(&self, file: &SnapshotFile) -> io::Result<()> {
        let index = index_of(&file.meta);
        let path = self.dir.join(format!("{PREFIX}{index:020}{SUFFIX}"));
        file.write_durably(&path)?;
        {
            let mut current = self.lock();
            if current.as_ref().is_none_or(|(m, _)| index >= index_of(m)) {
                *current = Some((file.meta.clone(), path));
            }
        }
        self.remove_all_but_current()
    }

    fn remove_all_but_current(&self) -> io::Result<()> {
        let keep = self.lock().as_ref().map(|(_, p)| p.clone());
        for entry in fs::read_dir(&self.dir)? {
            let path = entry?.path();
            let is_snapshot = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(SUFFIX));
            if is_snapshot && Some(&path) != keep.as_ref() {
                // A concurrent save may have removed it already.
                match fs::remove_file(&path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(typ::SnapshotMeta, PathBuf)>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn index_of(meta: &typ::SnapshotMeta) -> u64 {
    meta.last_log_id.as_ref().map_or(0, |l| l.index)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn file(index: u64) -> SnapshotFile {
        SnapshotFile {
            meta: typ::SnapshotMeta {
                last_log_id: Some(typ::LogId::from(crate::wire::LogId {
                    term: 1,
                    node_id: 1,
                    index,
                })),
                last_membership: typ::StoredMembership::default(),
            },
            store: Bytes::from(format!("store at {index}")),
        }
    }

    fn snapshot_files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn keeps_only_the_newest_and_reopens_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SnapshotDir::open(tmp.path()).unwrap();
        assert!(dir.current_meta().is_none());
        dir.save(&file(10)).unwrap();
        dir.save(&file(30)).unwrap();
        // An older build finishing late must not replace the newer snapshot.
        dir.save(&file(20)).unwrap();
        assert_eq!(
            Some(30),
            dir.current_meta().unwrap().last_log_id.map(|l| l.index)
        );
        assert_eq!(1, snapshot_files(tmp.path()).len());

        let reopened = SnapshotDir::open(tmp.path()).unwrap();
        let current = reopened.read_current().unwrap().unwrap();
        assert_eq!(Bytes::from("store at 30"), current.store);
    }

    #[test]
    fn open_skips_corrupt_and_temporary_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SnapshotDir::open(tmp.path()).unwrap();
        dir.save(&file(5)).unwrap();
        fs::write(
            tmp.path().join("snapshot-00000000000000000009.snap"),
            b"torn",
        )
        .unwrap();
        fs::write(
            tmp.path().join("snapshot-00000000000000000011.tmp"),
            b"half",
        )
        .unwrap();
        let reopened = SnapshotDir::open(tmp.path()).unwrap();
        assert_eq!(
            Some(5),
            reopened
                .current_meta()
                .unwrap()
                .last_log_id
                .map(|l| l.index)
        );
        assert_eq!(
            vec!["snapshot-00000000000000000005.snap".to_string()],
            snapshot_files(tmp.path())
        );
    }
}

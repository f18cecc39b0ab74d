//! The snapshot directory: durable snapshot files named by the last log index they cover, of
//! which only the newest is kept.

use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use super::snapshot_file::SnapshotFile;
use crate::log::LogFs;
use crate::typ;

const PREFIX: &str = "snapshot-";
const SUFFIX: &str = ".snap";
const TMP_SUFFIX: &str = ".tmp";

/// The snapshot directory, shared by the state machine (installs) and its snapshot builders
/// (builds), which may run concurrently. All IO goes through the [`LogFs`] seam (the real disk,
/// or the simulation's), and all of it blocks.
///
/// ### Invariant
/// `current` names the newest complete, durable snapshot file, and no other snapshot file
/// remains once a save has finished.
#[derive(Clone)]
pub struct SnapshotDir {
    fs: Arc<dyn LogFs>,
    dir: PathBuf,
    /// The newest durable snapshot: its metadata and file. Never held across IO.
    current: Arc<Mutex<Option<(typ::SnapshotMeta, PathBuf)>>>,
    /// Numbers temporary files, so concurrent saves of one index never share one.
    next_tmp: Arc<AtomicU64>,
}

impl std::fmt::Debug for SnapshotDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotDir")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl SnapshotDir {
    /// Opens (creating) the directory, deletes leftover temporary and unreadable files, and
    /// finds the newest valid snapshot.
    pub fn open(fs: Arc<dyn LogFs>, dir: &Path) -> io::Result<Self> {
        fs.create_dir_all(dir)?;
        let mut newest: Option<(typ::SnapshotMeta, PathBuf)> = None;
        for name in fs.list(dir)? {
            let path = dir.join(&name);
            if name.ends_with(TMP_SUFFIX) {
                fs.remove(&path)?;
                continue;
            }
            if !is_snapshot(&name) {
                continue;
            }
            match read_file(fs.as_ref(), &path) {
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
            fs,
            dir: dir.to_path_buf(),
            current: Arc::new(Mutex::new(newest)),
            next_tmp: Arc::new(AtomicU64::new(0)),
        };
        this.remove_all_but_current()?;
        Ok(this)
    }

    /// The metadata of the newest durable snapshot.
    pub fn current_meta(&self) -> Option<typ::SnapshotMeta> {
        self.lock().as_ref().map(|(m, _)| m.clone())
    }

    /// Reads the newest durable snapshot.
    pub fn read_current(&self) -> io::Result<Option<SnapshotFile>> {
        let path = self.lock().as_ref().map(|(_, p)| p.clone());
        path.map(|p| read_file(self.fs.as_ref(), &p)).transpose()
    }

    /// Writes `file` durably — to a temporary file, synced, renamed into place, the directory
    /// synced — and makes it current unless a newer snapshot already is; then deletes every
    /// other snapshot file. When this returns the snapshot survives a crash, so the log may be
    /// purged up to it.
    pub fn save(&self, file: &SnapshotFile) -> io::Result<()> {
        let index = index_of(&file.meta);
        let path = self.dir.join(format!("{PREFIX}{index:020}{SUFFIX}"));
        let n = self.next_tmp.fetch_add(1, Ordering::Relaxed);
        let tmp = self
            .dir
            .join(format!("{PREFIX}{index:020}.{n}{TMP_SUFFIX}"));
        let (head, store) = file.parts();
        self.fs.write_synced(&tmp, &[&head, store])?;
        self.fs.rename(&tmp, &path)?;
        self.fs.sync_dir(&self.dir)?;
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
        for name in self.fs.list(&self.dir)? {
            let path = self.dir.join(&name);
            if is_snapshot(&name) && Some(&path) != keep.as_ref() {
                self.fs.remove(&path)?;
            }
        }
        self.fs.sync_dir(&self.dir)
    }

    fn lock(&self) -> MutexGuard<'_, Option<(typ::SnapshotMeta, PathBuf)>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn is_snapshot(name: &str) -> bool {
    name.starts_with(PREFIX) && name.ends_with(SUFFIX)
}

fn read_file(fs: &dyn LogFs, path: &Path) -> io::Result<SnapshotFile> {
    let bytes = fs
        .read(path)?
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "snapshot file vanished"))?;
    SnapshotFile::decode(&bytes)
}

fn index_of(meta: &typ::SnapshotMeta) -> u64 {
    meta.last_log_id.as_ref().map_or(0, |l| l.index)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::log::StdFs;

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
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn keeps_only_the_newest_and_reopens_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SnapshotDir::open(Arc::new(StdFs), tmp.path()).unwrap();
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

        let reopened = SnapshotDir::open(Arc::new(StdFs), tmp.path()).unwrap();
        let current = reopened.read_current().unwrap().unwrap();
        assert_eq!(Bytes::from("store at 30"), current.store);
    }

    #[test]
    fn open_skips_corrupt_and_temporary_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SnapshotDir::open(Arc::new(StdFs), tmp.path()).unwrap();
        dir.save(&file(5)).unwrap();
        std::fs::write(
            tmp.path().join("snapshot-00000000000000000009.snap"),
            b"torn",
        )
        .unwrap();
        std::fs::write(
            tmp.path().join("snapshot-00000000000000000011.tmp"),
            b"half",
        )
        .unwrap();
        let reopened = SnapshotDir::open(Arc::new(StdFs), tmp.path()).unwrap();
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

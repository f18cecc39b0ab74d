//! [`SimDisk`]: an in-memory file system behind the raft log's `LogFs` seam, one per replica
//! host, kept by the cluster so that it outlives a host's restart.
//!
//! Why not the real disk: the log's writer thread does its IO outside the simulation, and while
//! a real `fdatasync` takes milliseconds of wall time the simulation races through hundreds of
//! virtual milliseconds, so votes and appends appeared to take seconds and elections stalled.
//! In memory an operation takes microseconds, a tick or two of virtual time at most.
//!
//! Every write is durable at once: a crash loses nothing yet. Losing unsynced data on a crash
//! (what `LogFile::sync_data` promises to prevent) is the next step of the fault suite.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;

use apiary_raft::log::LogFile;
use apiary_raft::log::LogFs;

#[derive(Debug, Default)]
struct Tree {
    dirs: BTreeSet<PathBuf>,
    files: BTreeMap<PathBuf, Vec<u8>>,
}

/// One host's disk. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct SimDisk {
    tree: Arc<Mutex<Tree>>,
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, path.display().to_string())
}

impl SimDisk {
    /// An empty disk.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Tree> {
        // A panic while the lock was held leaves a consistent tree (every operation completes
        // its change before unlocking), so a poisoned lock is still safe to use.
        self.tree
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Tree {
    fn require_parent(&self, path: &Path) -> io::Result<()> {
        match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() && !self.dirs.contains(parent) => {
                Err(not_found(parent))
            }
            _ => Ok(()),
        }
    }
}

impl LogFs for SimDisk {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut tree = self.lock();
        for ancestor in dir.ancestors() {
            if !ancestor.as_os_str().is_empty() {
                tree.dirs.insert(ancestor.to_path_buf());
            }
        }
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let tree = self.lock();
        if !tree.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let children = tree.dirs.iter().chain(tree.files.keys());
        Ok(children
            .filter(|path| path.parent() == Some(dir))
            .filter_map(|path| path.file_name()?.to_str().map(str::to_owned))
            .collect())
    }

    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        Ok(self.lock().files.get(path).cloned())
    }

    fn read_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let tree = self.lock();
        let data = tree.files.get(path).ok_or_else(|| not_found(path))?;
        let slice = usize::try_from(offset)
            .ok()
            .and_then(|start| data.get(start..start.checked_add(buf.len())?))
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end"))?;
        buf.copy_from_slice(slice);
        Ok(())
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let mut tree = self.lock();
        tree.require_parent(path)?;
        tree.files.entry(path.to_path_buf()).or_default();
        Ok(Box::new(SimFile {
            disk: self.clone(),
            path: path.to_path_buf(),
        }))
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let mut tree = self.lock();
        let data = tree.files.get_mut(path).ok_or_else(|| not_found(path))?;
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "length too large"))?;
        data.resize(len, 0);
        Ok(())
    }

    fn write_synced(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut tree = self.lock();
        tree.require_parent(path)?;
        tree.files.insert(path.to_path_buf(), bytes.to_vec());
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut tree = self.lock();
        tree.require_parent(to)?;
        let data = tree.files.remove(from).ok_or_else(|| not_found(from))?;
        tree.files.insert(to.to_path_buf(), data);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        self.lock().files.remove(path);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        if self.lock().dirs.contains(dir) {
            Ok(())
        } else {
            Err(not_found(dir))
        }
    }
}

/// A file of a [`SimDisk`] open for appending.
struct SimFile {
    disk: SimDisk,
    path: PathBuf,
}

impl LogFile for SimFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut tree = self.disk.lock();
        let data = tree
            .files
            .get_mut(&self.path)
            .ok_or_else(|| not_found(&self.path))?;
        data.extend_from_slice(buf);
        Ok(())
    }

    fn sync_data(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_live_in_directories_and_survive_clones() {
        let disk = SimDisk::new();
        let dir = Path::new("/data/log");
        assert_eq!(
            disk.list(dir).map_err(|e| e.kind()),
            Err(io::ErrorKind::NotFound)
        );
        assert!(
            disk.open_append(&dir.join("a")).is_err(),
            "parent must exist"
        );

        disk.create_dir_all(dir).expect("mkdir");
        let mut file = disk.open_append(&dir.join("1.seg")).expect("open");
        file.write_all(b"hello ").expect("write");
        file.write_all(b"world").expect("write");
        file.sync_data().expect("sync");

        let restarted = disk.clone();
        assert_eq!(restarted.list(dir).expect("list"), vec!["1.seg".to_owned()]);
        assert_eq!(
            restarted.list(Path::new("/data")).expect("list"),
            vec!["log".to_owned()]
        );
        let mut buf = [0u8; 5];
        restarted
            .read_at(&dir.join("1.seg"), 6, &mut buf)
            .expect("read_at");
        assert_eq!(&buf, b"world");
        assert!(restarted.read_at(&dir.join("1.seg"), 8, &mut buf).is_err());
        assert!(
            restarted
                .read_at(&dir.join("1.seg"), u64::MAX, &mut buf)
                .is_err()
        );
    }

    #[test]
    fn truncate_rename_remove_and_write_synced() {
        let disk = SimDisk::new();
        let dir = Path::new("/d");
        disk.create_dir_all(dir).expect("mkdir");
        disk.write_synced(&dir.join("state.tmp"), b"vote=3")
            .expect("write");
        disk.rename(&dir.join("state.tmp"), &dir.join("state"))
            .expect("rename");
        assert_eq!(disk.read(&dir.join("state.tmp")).expect("read"), None);
        assert_eq!(
            disk.read(&dir.join("state")).expect("read"),
            Some(b"vote=3".to_vec())
        );

        disk.truncate(&dir.join("state"), 4).expect("truncate");
        assert_eq!(
            disk.read(&dir.join("state")).expect("read"),
            Some(b"vote".to_vec())
        );
        assert!(disk.rename(&dir.join("missing"), &dir.join("x")).is_err());

        disk.remove(&dir.join("state")).expect("remove");
        disk.remove(&dir.join("state"))
            .expect("removing a missing file is fine");
        assert!(disk.list(dir).expect("list").is_empty());
        disk.sync_dir(dir).expect("sync dir");
    }
}

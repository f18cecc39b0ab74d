//! [`SimDisk`]: an in-memory disk behind the replicas' `LogFs` seam (raft log and snapshots),
//! one per replica host, kept by the cluster so that it outlives the host's software, and
//! [`Mount`]: one run of that software's view of it.
//!
//! Why not the real disk: the log's writer thread does its IO outside the simulation, and while
//! a real `fdatasync` takes milliseconds of wall time the simulation races through hundreds of
//! virtual milliseconds, so votes and appends appeared to take seconds and elections stalled.
//! In memory an operation takes microseconds, a tick or two of virtual time at most.
//!
//! Crashes lose exactly what the `LogFs` contract allows: appended bytes not yet covered by
//! `sync_data`, and creations, renames and removals in a directory not yet covered by
//! `sync_dir`. `truncate` and the contents of `write_synced` are durable at once. A crash also
//! fences the crashed run's [`Mount`]: its writer thread may outlive the host's tasks, and every
//! operation it still attempts fails instead of reaching the disk the restarted replica uses.

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

type FileId = u64;

/// One file's bytes; `data[..synced]` survives a crash.
#[derive(Debug, Default)]
struct Inode {
    data: Vec<u8>,
    synced: usize,
}

#[derive(Debug, Default)]
struct Tree {
    /// Bumped by every crash; a [`Mount`] of an older generation is fenced off.
    generation: u64,
    dirs: BTreeSet<PathBuf>,
    /// The names the running software sees.
    live: BTreeMap<PathBuf, FileId>,
    /// The names a crash leaves: `live` as of each directory's last `sync_dir`.
    durable: BTreeMap<PathBuf, FileId>,
    inodes: BTreeMap<FileId, Inode>,
    next_id: FileId,
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, path.display().to_string())
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

    fn inode(&mut self, path: &Path) -> io::Result<&mut Inode> {
        let id = *self.live.get(path).ok_or_else(|| not_found(path))?;
        self.inodes.get_mut(&id).ok_or_else(|| not_found(path))
    }

    fn create(&mut self, path: &Path) -> FileId {
        let id = self.next_id;
        self.next_id += 1;
        self.inodes.insert(id, Inode::default());
        self.live.insert(path.to_path_buf(), id);
        id
    }

    /// Loses what was not durable; answers how many bytes and names were lost, for the log.
    fn crash(&mut self) -> (usize, usize) {
        self.generation += 1;
        let names_lost = self
            .live
            .iter()
            .filter(|(path, id)| self.durable.get(*path) != Some(id))
            .count();
        self.live = self.durable.clone();
        let referenced: BTreeSet<FileId> = self.live.values().copied().collect();
        self.inodes.retain(|id, _| referenced.contains(id));
        let mut bytes_lost = 0;
        for inode in self.inodes.values_mut() {
            bytes_lost += inode.data.len().saturating_sub(inode.synced);
            inode.data.truncate(inode.synced);
        }
        (bytes_lost, names_lost)
    }
}

/// One host's disk. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct SimDisk {
    tree: Arc<Mutex<Tree>>,
}

impl SimDisk {
    /// An empty disk.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Tree> {
        // Every operation finishes its change before unlocking, so a lock poisoned by a
        // panicking holder still guards a consistent tree.
        self.tree
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The view of one run of the host's software; pass it to the log and the snapshots.
    pub fn mount(&self) -> Mount {
        Mount {
            disk: self.clone(),
            generation: self.lock().generation,
        }
    }

    /// Erases everything and fences every existing [`Mount`], as an operator replacing the
    /// machine's data directory while it is down.
    pub fn wipe(&self) {
        let mut tree = self.lock();
        let generation = tree.generation + 1;
        *tree = Tree {
            generation,
            ..Tree::default()
        };
    }

    /// Loses what was not durable and fences every existing [`Mount`].
    pub fn crash(&self) {
        let (bytes, names) = self.lock().crash();
        tracing::info!(
            bytes,
            names,
            "disk crash lost unsynced bytes and directory entries"
        );
    }
}

/// One run's view of a [`SimDisk`]: the `LogFs` the replica uses. After the disk crashes,
/// every operation through it fails.
#[derive(Debug, Clone)]
pub struct Mount {
    disk: SimDisk,
    generation: u64,
}

impl Mount {
    fn lock(&self) -> io::Result<MutexGuard<'_, Tree>> {
        let tree = self.disk.lock();
        if tree.generation == self.generation {
            Ok(tree)
        } else {
            Err(io::Error::other("the host crashed; this mount is gone"))
        }
    }
}

impl LogFs for Mount {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut tree = self.lock()?;
        for ancestor in dir.ancestors() {
            if !ancestor.as_os_str().is_empty() {
                tree.dirs.insert(ancestor.to_path_buf());
            }
        }
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let tree = self.lock()?;
        if !tree.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let children = tree.dirs.iter().chain(tree.live.keys());
        Ok(children
            .filter(|path| path.parent() == Some(dir))
            .filter_map(|path| path.file_name()?.to_str().map(str::to_owned))
            .collect())
    }

    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        let mut tree = self.lock()?;
        match tree.inode(path) {
            Ok(inode) => Ok(Some(inode.data.clone())),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn read_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut tree = self.lock()?;
        let data = &tree.inode(path)?.data;
        let slice = usize::try_from(offset)
            .ok()
            .and_then(|start| data.get(start..start.checked_add(buf.len())?))
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end"))?;
        buf.copy_from_slice(slice);
        Ok(())
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let mut tree = self.lock()?;
        tree.require_parent(path)?;
        let id = match tree.live.get(path) {
            Some(id) => *id,
            None => tree.create(path),
        };
        Ok(Box::new(SimFile {
            mount: self.clone(),
            id,
        }))
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let mut tree = self.lock()?;
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "length too large"))?;
        let inode = tree.inode(path)?;
        inode.data.resize(len, 0);
        inode.synced = len;
        Ok(())
    }

    fn write_synced(&self, path: &Path, parts: &[&[u8]]) -> io::Result<()> {
        let mut tree = self.lock()?;
        tree.require_parent(path)?;
        let id = match tree.live.get(path) {
            Some(id) => *id,
            None => tree.create(path),
        };
        let inode = tree.inodes.entry(id).or_default();
        inode.data = parts.concat();
        inode.synced = inode.data.len();
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut tree = self.lock()?;
        tree.require_parent(to)?;
        let id = tree.live.remove(from).ok_or_else(|| not_found(from))?;
        tree.live.insert(to.to_path_buf(), id);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        self.lock()?.live.remove(path);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut tree = self.lock()?;
        if !tree.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let in_dir = |path: &PathBuf| path.parent() == Some(dir);
        tree.durable.retain(|path, _| !in_dir(path));
        let entries: Vec<(PathBuf, FileId)> = tree
            .live
            .iter()
            .filter(|(path, _)| in_dir(path))
            .map(|(path, id)| (path.clone(), *id))
            .collect();
        tree.durable.extend(entries);
        Ok(())
    }
}

/// A file open for appending through a [`Mount`].
struct SimFile {
    mount: Mount,
    id: FileId,
}

impl SimFile {
    fn with_inode<T>(&self, f: impl FnOnce(&mut Inode) -> T) -> io::Result<T> {
        let mut tree = self.mount.lock()?;
        let inode = tree
            .inodes
            .get_mut(&self.id)
            .ok_or_else(|| io::Error::other("the file was removed and collected by a crash"))?;
        Ok(f(inode))
    }
}

impl LogFile for SimFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.with_inode(|inode| inode.data.extend_from_slice(buf))
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.with_inode(|inode| inode.synced = inode.data.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(mount: &Mount, path: &str) -> Option<Vec<u8>> {
        mount.read(Path::new(path)).expect("read")
    }

    #[test]
    fn files_live_in_directories_and_survive_remounts() {
        let disk = SimDisk::new();
        let fs = disk.mount();
        let dir = Path::new("/data/log");
        assert_eq!(
            fs.list(dir).map_err(|e| e.kind()),
            Err(io::ErrorKind::NotFound)
        );
        assert!(fs.open_append(&dir.join("a")).is_err(), "parent must exist");

        fs.create_dir_all(dir).expect("mkdir");
        let mut file = fs.open_append(&dir.join("1.seg")).expect("open");
        file.write_all(b"hello ").expect("write");
        file.write_all(b"world").expect("write");

        let again = disk.mount();
        assert_eq!(again.list(dir).expect("list"), vec!["1.seg".to_owned()]);
        assert_eq!(
            again.list(Path::new("/data")).expect("list"),
            vec!["log".to_owned()]
        );
        let mut buf = [0u8; 5];
        again
            .read_at(&dir.join("1.seg"), 6, &mut buf)
            .expect("read_at");
        assert_eq!(&buf, b"world");
        assert!(again.read_at(&dir.join("1.seg"), 8, &mut buf).is_err());
        assert!(
            again
                .read_at(&dir.join("1.seg"), u64::MAX, &mut buf)
                .is_err()
        );
    }

    #[test]
    fn truncate_rename_remove_and_write_synced() {
        let fs = SimDisk::new().mount();
        let dir = Path::new("/d");
        fs.create_dir_all(dir).expect("mkdir");
        fs.write_synced(&dir.join("state.tmp"), &[b"vote=3".as_slice()])
            .expect("write");
        fs.rename(&dir.join("state.tmp"), &dir.join("state"))
            .expect("rename");
        assert_eq!(read(&fs, "/d/state.tmp"), None);
        assert_eq!(read(&fs, "/d/state"), Some(b"vote=3".to_vec()));

        fs.truncate(&dir.join("state"), 4).expect("truncate");
        assert_eq!(read(&fs, "/d/state"), Some(b"vote".to_vec()));
        assert!(fs.rename(&dir.join("missing"), &dir.join("x")).is_err());

        fs.remove(&dir.join("state")).expect("remove");
        fs.remove(&dir.join("state"))
            .expect("removing a missing file is fine");
        assert!(fs.list(dir).expect("list").is_empty());
        fs.sync_dir(dir).expect("sync dir");
    }

    // A crash keeps synced appends and synced names, and loses the rest (the LogFs contract).
    #[test]
    fn a_crash_loses_exactly_what_was_not_synced() {
        let disk = SimDisk::new();
        let fs = disk.mount();
        let dir = Path::new("/log");
        fs.create_dir_all(dir).expect("mkdir");
        let mut kept = fs.open_append(&dir.join("1.seg")).expect("open");
        kept.write_all(b"durable").expect("write");
        kept.sync_data().expect("sync");
        fs.sync_dir(dir).expect("sync dir");
        kept.write_all(b" lost").expect("write");
        let mut unnamed = fs.open_append(&dir.join("2.seg")).expect("open");
        unnamed.write_all(b"x").expect("write");
        unnamed
            .sync_data()
            .expect("sync data, but not the directory");
        fs.write_synced(&dir.join("state.tmp"), &[b"v".as_slice()])
            .expect("write");
        fs.rename(&dir.join("state.tmp"), &dir.join("state"))
            .expect("rename");

        disk.crash();
        let after = disk.mount();
        assert_eq!(read(&after, "/log/1.seg"), Some(b"durable".to_vec()));
        assert_eq!(
            read(&after, "/log/2.seg"),
            None,
            "its name was never synced"
        );
        assert_eq!(
            read(&after, "/log/state"),
            None,
            "the rename was never synced"
        );
        assert_eq!(after.list(dir).expect("list"), vec!["1.seg".to_owned()]);
    }

    // A removal not covered by sync_dir is undone by a crash.
    #[test]
    fn an_unsynced_removal_is_undone_by_a_crash() {
        let disk = SimDisk::new();
        let fs = disk.mount();
        let dir = Path::new("/snap");
        fs.create_dir_all(dir).expect("mkdir");
        fs.write_synced(&dir.join("a"), &[b"1".as_slice()])
            .expect("write");
        fs.sync_dir(dir).expect("sync dir");
        fs.remove(&dir.join("a")).expect("remove");
        disk.crash();
        assert_eq!(read(&disk.mount(), "/snap/a"), Some(b"1".to_vec()));
    }

    // The crashed run's handles (a writer thread may outlive the host) cannot touch the disk.
    #[test]
    fn a_crash_fences_the_old_mount() {
        let disk = SimDisk::new();
        let old = disk.mount();
        let dir = Path::new("/log");
        old.create_dir_all(dir).expect("mkdir");
        let mut file = old.open_append(&dir.join("1.seg")).expect("open");
        file.write_all(b"a").expect("write");
        file.sync_data().expect("sync");
        old.sync_dir(dir).expect("sync dir");

        disk.crash();
        assert!(file.write_all(b"zombie").is_err());
        assert!(file.sync_data().is_err());
        assert!(
            old.write_synced(&dir.join("x"), &[b"zombie".as_slice()])
                .is_err()
        );
        assert_eq!(read(&disk.mount(), "/log/1.seg"), Some(b"a".to_vec()));
    }
}

//! The file-system seam under the raft log: the few file operations the log needs, so that a
//! simulated disk (with injected faults and lost unsynced writes) can replace the real one.

use std::fs;
use std::fs::File;
use std::fs::OpenOptions;
use std::io;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The file operations the raft log performs.
///
/// ### Correctness requirements
///
/// - Data passed to [`LogFile::write_all`] may be lost on a crash until [`LogFile::sync_data`]
///   returns; after that it must survive a crash.
/// - A file created by [`LogFs::open_append`] or renamed by [`LogFs::rename`] may disappear on a
///   crash until [`LogFs::sync_dir`] returns for its directory.
/// - [`LogFs::truncate`] and [`LogFs::write_synced`] are durable when they return.
/// - Every operation is blocking: the log calls them from its writer thread or on small reads.
pub trait LogFs: Send + Sync + 'static {
    /// Creates `dir` and its parents if missing.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;

    /// Names of the entries in `dir` (not paths). Names that are not valid UTF-8 are skipped.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;

    /// The whole content of the file at `path`; `Ok(None)` when it does not exist.
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>>;

    /// Fills `buf` from the file at `path`, starting at byte `offset`.
    fn read_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()>;

    /// Opens the file at `path` for appending, creating it when missing.
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>>;

    /// Cuts the file at `path` to `len` bytes, durably.
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()>;

    /// Creates or replaces the file at `path` with the concatenation of `parts`, durably (but
    /// see [`LogFs::sync_dir`] for the file's name). Parts let a large file be written from
    /// buffers it shares, without first copying them into one.
    fn write_synced(&self, path: &Path, parts: &[&[u8]]) -> io::Result<()>;

    /// Renames `from` to `to`, replacing `to` atomically.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Removes the file at `path`; a missing file is not an error.
    fn remove(&self, path: &Path) -> io::Result<()>;

    /// Makes the creations, renames and removals in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// A file open for appending.
pub trait LogFile: Send {
    /// Appends all of `buf` at the file's current end, also after [`LogFs::truncate`] cut the
    /// file while it was open (`O_APPEND` semantics).
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()>;

    /// Makes everything written so far durable (`fdatasync`).
    fn sync_data(&mut self) -> io::Result<()>;
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct StdFs;

impl LogFs for StdFs {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            if let Ok(name) = entry?.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }

    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        match fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        File::open(path)?.read_exact_at(buf, offset)
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Box::new(StdFile(file)))
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let file = OpenOptions::new().write(true).open(path)?;
        file.set_len(len)?;
        file.sync_all()
    }

    fn write_synced(&self, path: &Path, parts: &[&[u8]]) -> io::Result<()> {
        let mut file = File::create(path)?;
        for part in parts {
            file.write_all(part)?;
        }
        file.sync_all()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        match fs::remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
}

/// A real file open for appending.
struct StdFile(File);

impl LogFile for StdFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.0.sync_data()
    }
}

//! A log file that rotates as lumberjack (kube-apiserver's audit log writer) rotates it: a
//! write that would pass the size limit first renames the file to
//! `<name>-<UTC time, 2006-01-02T15-04-05.000><ext>` and starts a new one; then backups beyond
//! the count or older than the age limit are removed.

use std::fs::File;
use std::fs::OpenOptions;
use std::io;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use chrono::DateTime;
use chrono::NaiveDateTime;
use chrono::Utc;

/// The size of a log file before it rotates when no limit is given (lumberjack's 100 MB).
const DEFAULT_MAX_BYTES: u64 = 100 * 1024 * 1024;

/// The time format in backup names (lumberjack's `2006-01-02T15-04-05.000`).
const BACKUP_TIME: &str = "%Y-%m-%dT%H-%M-%S%.3f";

/// When a log file rotates and how many of its backups are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rotation {
    /// Bytes a file may reach (`--audit-log-maxsize` in MB); 0 means 100 MB.
    pub max_bytes: u64,
    /// Backups kept (`--audit-log-maxbackup`); 0 keeps all.
    pub max_backups: usize,
    /// Age beyond which backups are removed (`--audit-log-maxage` in days); `None` keeps them.
    pub max_age: Option<Duration>,
}

/// An append-only file rotated by [`Rotation`].
pub(crate) struct RotatingFile {
    path: PathBuf,
    rotation: Rotation,
    file: File,
    size: u64,
}

impl RotatingFile {
    /// Opens (appending to) or creates `path`; its directory is created if missing.
    pub(crate) fn open(path: &Path, rotation: Rotation) -> io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let size = file.metadata()?.len();
        Ok(Self {
            path: path.to_owned(),
            rotation,
            file,
            size,
        })
    }

    fn max_bytes(&self) -> u64 {
        match self.rotation.max_bytes {
            0 => DEFAULT_MAX_BYTES,
            bytes => bytes,
        }
    }

    fn rotate(&mut self) -> io::Result<()> {
        let mut time = Utc::now();
        let mut backup = self.backup_name(&time);
        while backup.exists() {
            time += chrono::Duration::milliseconds(1);
            backup = self.backup_name(&time);
        }
        std::fs::rename(&self.path, &backup)?;
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        self.size = 0;
        self.remove_old_backups()
    }

    /// The name's stem and extension: `audit` and `.log` for `audit.log`.
    fn stem_and_ext(&self) -> (String, String) {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match name.rfind('.') {
            Some(dot) if dot > 0 => (name[..dot].to_owned(), name[dot..].to_owned()),
            _ => (name, String::new()),
        }
    }

    fn backup_name(&self, time: &DateTime<Utc>) -> PathBuf {
        let (stem, ext) = self.stem_and_ext();
        self.path
            .with_file_name(format!("{stem}-{}{ext}", time.format(BACKUP_TIME)))
    }

    /// The backups next to the file, newest first.
    fn backups(&self) -> io::Result<Vec<(DateTime<Utc>, PathBuf)>> {
        let (stem, ext) = self.stem_and_ext();
        let prefix = format!("{stem}-");
        let dir = match self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(dir) => dir.to_owned(),
            None => PathBuf::from("."),
        };
        let mut backups = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let time = name
                .strip_prefix(&prefix)
                .and_then(|rest| rest.strip_suffix(&ext))
                .and_then(|t| NaiveDateTime::parse_from_str(t, BACKUP_TIME).ok());
            if let Some(time) = time {
                backups.push((time.and_utc(), entry.path()));
            }
        }
        backups.sort_by_key(|b| std::cmp::Reverse(b.0));
        Ok(backups)
    }

    fn remove_old_backups(&self) -> io::Result<()> {
        let cutoff = self
            .rotation
            .max_age
            .and_then(|age| chrono::Duration::from_std(age).ok())
            .map(|age| Utc::now() - age);
        for (i, (time, path)) in self.backups()?.into_iter().enumerate() {
            let too_many = self.rotation.max_backups != 0 && i >= self.rotation.max_backups;
            let too_old = cutoff.is_some_and(|cutoff| time < cutoff);
            if too_many || too_old {
                std::fs::remove_file(path)?;
            }
        }
        Ok(())
    }
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let len = buf.len() as u64;
        if self.size > 0 && self.size + len > self.max_bytes() {
            self.rotate()?;
        }
        self.file.write_all(buf)?;
        self.size += len;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system's temporary directory, removed when dropped.
    struct Dir(PathBuf);

    impl Dir {
        fn new() -> Self {
            let dir = std::env::temp_dir().join(format!("apiary-rotate-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(&dir).expect("dir");
            Self(dir)
        }

        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(&self.0)
                .expect("read dir")
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn is_backup_name(name: &str) -> bool {
        let Some(time) = name
            .strip_prefix("audit-")
            .and_then(|n| n.strip_suffix(".log"))
        else {
            return false;
        };
        NaiveDateTime::parse_from_str(time, BACKUP_TIME).is_ok() && time.len() == 23
    }

    #[test]
    fn a_full_file_rotates_to_timestamped_backups_and_max_backups_is_kept() {
        let dir = Dir::new();
        let path = dir.0.join("audit.log");
        let rotation = Rotation {
            max_bytes: 100,
            max_backups: 2,
            max_age: None,
        };
        let mut file = RotatingFile::open(&path, rotation).expect("open");
        let line = [b'x'; 39];
        for _ in 0..12 {
            file.write_all(&line).expect("write");
        }
        // 12 lines of 39 bytes, two per file: six files written, the newest two backups kept.
        let names = dir.names();
        assert_eq!(names.len(), 3, "{names:?}");
        assert!(names.contains(&"audit.log".to_owned()));
        assert!(
            names
                .iter()
                .filter(|n| *n != "audit.log")
                .all(|n| is_backup_name(n)),
            "{names:?}"
        );
        for name in &names {
            let size = std::fs::metadata(dir.0.join(name)).expect("size").len();
            assert_eq!(size, 78, "{name}");
        }
    }

    #[test]
    fn zero_max_backups_keeps_every_backup_and_an_existing_file_is_appended_to() {
        let dir = Dir::new();
        let path = dir.0.join("audit.log");
        std::fs::write(&path, b"old\n").expect("existing");
        let rotation = Rotation {
            max_bytes: 10,
            ..Rotation::default()
        };
        let mut file = RotatingFile::open(&path, rotation).expect("open");
        file.write_all(b"12345\n").expect("fits");
        assert_eq!(std::fs::read(&path).expect("read"), b"old\n12345\n");
        for _ in 0..4 {
            file.write_all(b"abcdefgh\n").expect("write");
        }
        assert_eq!(dir.names().len(), 5, "{:?}", dir.names());
    }

    #[test]
    fn backups_older_than_max_age_are_removed_at_rotation() {
        let dir = Dir::new();
        let path = dir.0.join("audit.log");
        let old = Utc::now() - chrono::Duration::days(10);
        let recent = Utc::now() - chrono::Duration::days(1);
        let name = |t: DateTime<Utc>| format!("audit-{}.log", t.format(BACKUP_TIME));
        for t in [old, recent] {
            std::fs::write(dir.0.join(name(t)), b"backup\n").expect("backup");
        }
        std::fs::write(dir.0.join("unrelated.txt"), b"keep\n").expect("other");
        let rotation = Rotation {
            max_bytes: 10,
            max_backups: 0,
            max_age: Some(Duration::from_secs(3 * 86_400)),
        };
        let mut file = RotatingFile::open(&path, rotation).expect("open");
        file.write_all(b"0123456789").expect("fill");
        file.write_all(b"next\n").expect("rotate");
        let names = dir.names();
        assert!(!names.contains(&name(old)), "{names:?}");
        assert!(names.contains(&name(recent)), "{names:?}");
        assert!(names.contains(&"unrelated.txt".to_owned()));
        assert_eq!(names.len(), 4, "{names:?}");
    }
}

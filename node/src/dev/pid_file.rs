//! What the process a replica's pid file names is, read from `/proc`: gone (no such process,
//! or a zombie, which holds no socket or file), still exiting after a kill, alive but not a
//! replica of this directory (the pid was reused), or a live `apiary serve` of this directory.
//! Only the last refuses a new start; `apiary dev` waits a moment for an exiting one.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::process::Pid;

/// `SIGKILL`'s bit in the pending-signal masks of `/proc/PID/status`: a killed process keeps
/// it pending until it has exited.
const SIGKILL_MASK: u64 = 1 << 8;

/// The process a pid file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PidProcess {
    /// No such process, or a zombie: it holds nothing of the replica's.
    Gone,
    /// Killed (or a zombie whose threads are still ending): it may still hold the replica's
    /// ports and files for a moment.
    Exiting,
    /// A live process that is not a replica of this directory (the pid was reused).
    Other,
    /// A live replica of this directory.
    Replica,
}

/// The fields of `/proc/PID/status` that tell whether a process is ending.
struct Status {
    zombie: bool,
    threads: u64,
    kill_pending: bool,
}

fn status(pid: Pid) -> Option<Status> {
    let text = fs::read_to_string(format!("/proc/{}/status", pid.as_raw_pid())).ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    let mask = |name: &str| field(name).and_then(|m| u64::from_str_radix(m, 16).ok());
    Some(Status {
        zombie: field("State").is_some_and(|s| s.starts_with('Z') || s.starts_with('X')),
        threads: field("Threads").and_then(|n| n.parse().ok()).unwrap_or(1),
        kill_pending: [mask("SigPnd"), mask("ShdPnd")]
            .into_iter()
            .flatten()
            .any(|m| m & SIGKILL_MASK != 0),
    })
}

/// Whether the argument list names `data_dir` as its `--data-dir`; `None` when the process
/// has none to show (a zombie, or one that already released its memory while exiting).
fn names_data_dir(pid: Pid, data_dir: &Path) -> Option<bool> {
    let cmdline = fs::read(format!("/proc/{}/cmdline", pid.as_raw_pid())).ok()?;
    if cmdline.is_empty() {
        return None;
    }
    let dir = data_dir.as_os_str().as_bytes();
    let mut args = cmdline.split(|b| *b == 0);
    let mut named = false;
    while let Some(arg) = args.next() {
        named |= match arg.strip_prefix(b"--data-dir") {
            Some(b"") => args.next() == Some(dir),
            Some(value) => value.strip_prefix(b"=") == Some(dir),
            None => false,
        };
    }
    Some(named)
}

/// What the process `pid` is, for the replica whose data directory is `data_dir`. Without
/// `/proc` (not Linux) any live process counts as the replica, as a pid file alone can say.
pub fn classify(pid: Pid, data_dir: &Path) -> PidProcess {
    if !Path::new("/proc/self/status").exists() {
        return match rustix::process::test_kill_process(pid) {
            Ok(()) => PidProcess::Replica,
            Err(_) => PidProcess::Gone,
        };
    }
    let Some(status) = status(pid) else {
        return PidProcess::Gone;
    };
    if status.zombie && status.threads <= 1 {
        return PidProcess::Gone;
    }
    let exiting = status.zombie || status.kill_pending;
    match (names_data_dir(pid, data_dir), exiting) {
        (Some(true) | None, true) => PidProcess::Exiting,
        (Some(true), false) => PidProcess::Replica,
        (Some(false), _) | (None, false) => PidProcess::Other,
    }
}

/// The pid a pid file holds, if it holds one (a positive number).
pub fn read(path: &Path) -> Option<Pid> {
    let text = fs::read(path).ok()?;
    let pid: u32 = OsStr::from_bytes(text.trim_ascii())
        .to_str()?
        .parse()
        .ok()?;
    Pid::from_raw(i32::try_from(pid).ok()?)
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::process::Stdio;
    use std::time::Duration;
    use std::time::Instant;

    use super::*;

    /// The pid of `child`, once its `exec` has finished: the parent resumes while the kernel
    /// is still setting up the new argument list, which reads empty until then.
    fn pid_of(child: &std::process::Child) -> Pid {
        let pid = Pid::from_child(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while names_data_dir(pid, Path::new("/")).is_none() {
            assert!(Instant::now() < deadline, "no argument list");
            std::thread::sleep(Duration::from_millis(5));
        }
        pid
    }

    /// A live process whose arguments name `dir` as its data directory, as a replica's do.
    fn fake_replica(dir: &Path) -> std::process::Child {
        Command::new("/bin/sh")
            .args([
                "-c",
                "while :; do sleep 1; done",
                "apiary",
                "serve",
                "--data-dir",
            ])
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    #[test]
    fn only_a_live_process_of_this_data_dir_is_the_replica() {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("node-1");
        let mut replica = fake_replica(&data_dir);
        let pid = pid_of(&replica);
        assert_eq!(classify(pid, &data_dir), PidProcess::Replica);
        // The same process is no replica of another directory (a reused pid).
        assert_eq!(classify(pid, &dir.path().join("node-2")), PidProcess::Other);
        // Neither is this test process.
        let own = Pid::from_raw(i32::try_from(std::process::id()).unwrap()).unwrap();
        assert_eq!(classify(own, &data_dir), PidProcess::Other);

        // Killed and not reaped: a zombie holds nothing.
        rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while classify(pid, &data_dir) != PidProcess::Gone {
            assert!(Instant::now() < deadline, "{:?}", classify(pid, &data_dir));
            std::thread::sleep(Duration::from_millis(20));
        }
        replica.wait().unwrap();
        // Reaped: no such process.
        assert_eq!(classify(pid, &data_dir), PidProcess::Gone);
    }

    #[test]
    fn data_dir_is_matched_as_a_whole_argument() {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("node-1");
        let mut replica = Command::new("/bin/sh")
            .args(["-c", "while :; do sleep 1; done", "apiary", "serve"])
            .arg(format!("--data-dir={}", data_dir.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = pid_of(&replica);
        assert_eq!(classify(pid, &data_dir), PidProcess::Replica);
        assert_eq!(
            classify(pid, &dir.path().join("node-")),
            PidProcess::Other,
            "a prefix of the directory is another directory"
        );
        replica.kill().unwrap();
        replica.wait().unwrap();
    }

    #[test]
    fn pid_files_hold_one_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.pid");
        assert_eq!(read(&path), None);
        fs::write(&path, "1234\n").unwrap();
        assert_eq!(read(&path), Pid::from_raw(1234));
        fs::write(&path, "-1\n").unwrap();
        assert_eq!(read(&path), None);
        fs::write(&path, "x\n").unwrap();
        assert_eq!(read(&path), None);
    }
}

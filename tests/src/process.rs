//! Processes the harness started: where their output goes, and their signals and liveness, by
//! process id.
//!
//! The workspace forbids `unsafe`, so signals go through the `kill` utility rather than libc.
//! Before signalling a pid read from a file, callers check [`cmdline_contains`] so that a stale
//! pid file never makes the harness signal an unrelated process that reused the id.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use crate::error::HarnessError;
use crate::error::Result;

/// A signal the harness sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: the graceful stop of `apiary dev` (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGKILL: a crash, no chance to clean up.
    Kill,
    /// SIGSTOP: the process freezes (a replica that lags), until [`Signal::Continue`].
    Stop,
    /// SIGCONT: a stopped process runs on.
    Continue,
}

impl Signal {
    /// The name `kill -s` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "INT",
            Self::Terminate => "TERM",
            Self::Kill => "KILL",
            Self::Stop => "STOP",
            Self::Continue => "CONT",
        }
    }
}

/// Stdout and stderr of a child, both appended to the file at `path` (created if absent, so a
/// restarted process keeps the output of its earlier runs).
pub fn log_output(path: &Path) -> Result<(Stdio, Stdio)> {
    let io_error = |source| HarnessError::Io {
        path: path.to_owned(),
        source,
    };
    let out = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_error)?;
    let err = out.try_clone().map_err(io_error)?;
    Ok((out.into(), err.into()))
}

/// Sends `signal` to `pid`. A process that is already gone is not an error.
pub fn send(pid: u32, signal: Signal) -> Result<()> {
    Command::new("kill")
        .args(["-s", signal.name(), &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(drop)
        .map_err(|source| HarnessError::Spawn {
            program: "kill".to_owned(),
            source,
        })
}

/// Whether `pid` is a live process (a zombie, killed but not yet reaped by its parent, is not).
pub fn is_alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Whether the command line of `pid` contains `needle` (false when the process is gone).
pub fn cmdline_contains(pid: u32, needle: &str) -> bool {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            let text: String = String::from_utf8_lossy(&raw).replace('\0', " ");
            text.contains(needle)
        })
        .unwrap_or(false)
}

/// Waits until `pid` is no longer alive, polling every 20 ms for at most `limit`.
pub fn wait_gone(pid: u32, signal: Signal, limit: Duration) -> Result<()> {
    let start = Instant::now();
    while is_alive(pid) {
        if start.elapsed() > limit {
            return Err(HarnessError::StillRunning {
                pid,
                signal: signal.name(),
                waited: limit,
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Reads a process id from a pid file (surrounding whitespace allowed).
pub fn read_pid_file(path: &Path) -> Result<u32> {
    let text = fs::read_to_string(path).map_err(|source| HarnessError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    text.trim().parse().map_err(|_| HarnessError::BadPidFile {
        path: path.to_path_buf(),
    })
}

/// Runs a client script's `command` (named `what` in failures) to its end, at most `limit`;
/// it must exit 0. Answers its stdout.
pub async fn run_script(
    mut command: tokio::process::Command,
    what: &str,
    limit: Duration,
) -> String {
    let run = command.stdin(Stdio::null()).kill_on_drop(true).output();
    let output = tokio::time::timeout(limit, run)
        .await
        .unwrap_or_else(|_| panic!("{what} took more than {limit:?}"))
        .unwrap_or_else(|e| panic!("{what} does not start: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_child_is_seen_as_gone() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        assert!(is_alive(pid));
        // Between fork and exec the child still shows the test's command line.
        let start = std::time::Instant::now();
        while !cmdline_contains(pid, "sleep 30") && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(cmdline_contains(pid, "sleep 30"));
        send(pid, Signal::Kill).unwrap();
        // Not reaped yet: a zombie counts as gone.
        wait_gone(pid, Signal::Kill, Duration::from_secs(5)).unwrap();
        child.wait().unwrap();
        assert!(!cmdline_contains(pid, "sleep"));
    }
}

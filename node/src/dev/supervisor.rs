//! The child processes of `apiary dev`: starts one `apiary serve` per replica, records its pid
//! file, reports a replica that dies (without restarting it) and stops them all cleanly —
//! SIGTERM, a bounded wait, then SIGKILL — removing the pid files.
//!
//! Each replica runs in its own process group, so a Ctrl-C in the terminal reaches `apiary dev`
//! only and the replicas are stopped in order by [`Supervisor::stop`] rather than all at once
//! by the terminal.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::process::Stdio;
use std::time::Duration;

use rustix::process::Pid;
use rustix::process::Signal;
use tokio::process::Child;
use tokio::process::Command;

/// How often liveness of the replicas is checked.
const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// How long replicas get to shut down after SIGTERM before they are killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// Why the replicas could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SupervisorError {
    /// A file (log, pid file) could not be written.
    #[error("cannot write {path}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The replica process could not be spawned.
    #[error("cannot start replica {name}")]
    Spawn {
        /// The replica.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A pid file names a live process: another `apiary dev` uses this directory.
    #[error("{path} names running process {pid}: is another `apiary dev` using this directory?")]
    AlreadyRunning {
        /// The pid file.
        path: PathBuf,
        /// The live process.
        pid: i32,
    },
}

/// How to start one replica.
#[derive(Debug, Clone)]
pub struct ReplicaSpec {
    /// The replica's name (for messages).
    pub name: String,
    /// The program to run (the `apiary` binary itself).
    pub program: PathBuf,
    /// Its arguments (`serve ...`).
    pub args: Vec<OsString>,
    /// Where its stdout and stderr go (appended).
    pub log_file: PathBuf,
    /// Where its pid is written while it runs.
    pub pid_file: PathBuf,
}

struct Running {
    spec: ReplicaSpec,
    child: Child,
}

/// The running replicas of a dev cluster.
pub struct Supervisor {
    running: Vec<Running>,
}

impl Supervisor {
    /// Starts every replica. Fails if a pid file names a live process (the directory is in use)
    /// or a replica cannot be spawned; replicas already started are then killed (their handles
    /// are dropped with `kill_on_drop`).
    pub fn start(specs: Vec<ReplicaSpec>) -> Result<Self, SupervisorError> {
        for spec in &specs {
            refuse_live_pid_file(&spec.pid_file)?;
        }
        let mut running = Vec::with_capacity(specs.len());
        for spec in specs {
            let child = spawn(&spec)?;
            running.push(Running { spec, child });
        }
        Ok(Self { running })
    }

    /// The pids of the replicas still running, by name.
    pub fn pids(&self) -> Vec<(String, u32)> {
        self.running
            .iter()
            .filter_map(|r| Some((r.spec.name.clone(), r.child.id()?)))
            .collect()
    }

    /// Watches the replicas until `shutdown` resolves. A replica that exits meanwhile is
    /// reported on stderr (name and exit status) and not restarted; the others keep running.
    pub async fn watch_until(&mut self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(POLL_INTERVAL) => self.reap(),
            }
        }
    }

    fn reap(&mut self) {
        self.running.retain_mut(|r| match r.child.try_wait() {
            Ok(None) => true,
            Ok(Some(status)) => {
                report_exit(&r.spec, status);
                remove_pid_file(&r.spec.pid_file);
                false
            }
            Err(error) => {
                eprintln!("apiary dev: cannot check on {}: {error}", r.spec.name);
                true
            }
        });
    }

    /// Stops every replica still running: SIGTERM, then SIGKILL for those still up after
    /// [`STOP_TIMEOUT`]. Removes their pid files.
    pub async fn stop(mut self) {
        self.reap();
        for r in &self.running {
            if let Some(pid) = r
                .child
                .id()
                .and_then(|id| Pid::from_raw(id.try_into().ok()?))
                && let Err(error) = rustix::process::kill_process(pid, Signal::TERM)
            {
                eprintln!("apiary dev: cannot signal {}: {error}", r.spec.name);
            }
        }
        let waits = self.running.iter_mut().map(|r| async move {
            match tokio::time::timeout(STOP_TIMEOUT, r.child.wait()).await {
                Ok(Ok(status)) if status.success() => {}
                Ok(Ok(status)) => eprintln!("apiary dev: {} stopped with {status}", r.spec.name),
                Ok(Err(error)) => eprintln!("apiary dev: waiting for {}: {error}", r.spec.name),
                Err(_elapsed) => {
                    eprintln!(
                        "apiary dev: {} did not stop within {STOP_TIMEOUT:?}; killing it",
                        r.spec.name
                    );
                    if let Err(error) = r.child.kill().await {
                        eprintln!("apiary dev: cannot kill {}: {error}", r.spec.name);
                    }
                }
            }
            remove_pid_file(&r.spec.pid_file);
        });
        futures::future::join_all(waits).await;
    }
}

fn spawn(spec: &ReplicaSpec) -> Result<Child, SupervisorError> {
    let file_error = |path: &Path| {
        let path = path.to_owned();
        move |source| SupervisorError::File { path, source }
    };
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&spec.log_file)
        .map_err(file_error(&spec.log_file))?;
    let log_err = log.try_clone().map_err(file_error(&spec.log_file))?;
    let child = Command::new(&spec.program)
        .args(&spec.args)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| SupervisorError::Spawn {
            name: spec.name.clone(),
            source,
        })?;
    if let Some(pid) = child.id() {
        fs::write(&spec.pid_file, format!("{pid}\n")).map_err(file_error(&spec.pid_file))?;
    }
    Ok(child)
}

fn refuse_live_pid_file(path: &Path) -> Result<(), SupervisorError> {
    let Ok(text) = fs::read_to_string(path) else {
        return Ok(());
    };
    let live = text
        .trim()
        .parse::<i32>()
        .ok()
        .and_then(Pid::from_raw)
        .filter(|pid| rustix::process::test_kill_process(*pid).is_ok());
    match live {
        Some(pid) => Err(SupervisorError::AlreadyRunning {
            path: path.to_owned(),
            pid: pid.as_raw_pid(),
        }),
        // A stale file from a cluster that was killed without cleaning up.
        None => Ok(()),
    }
}

fn report_exit(spec: &ReplicaSpec, status: ExitStatus) {
    eprintln!(
        "apiary dev: replica {} exited ({status}); not restarting it (log: {})",
        spec.name,
        spec.log_file.display()
    );
}

fn remove_pid_file(path: &Path) {
    if let Err(error) = fs::remove_file(path)
        && error.kind() != io::ErrorKind::NotFound
    {
        eprintln!("apiary dev: cannot remove {}: {error}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &Path, name: &str, script: &str) -> ReplicaSpec {
        ReplicaSpec {
            name: name.to_owned(),
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".into(), script.into()],
            log_file: dir.join(format!("{name}.log")),
            pid_file: dir.join(format!("{name}.pid")),
        }
    }

    #[tokio::test]
    async fn a_dead_replica_is_dropped_and_the_rest_stop_on_sigterm() {
        let dir = tempfile::tempdir().unwrap();
        let mut supervisor = Supervisor::start(vec![
            spec(dir.path(), "stays", "echo up; exec sleep 60"),
            spec(dir.path(), "dies", "exit 3"),
        ])
        .unwrap();
        assert!(dir.path().join("stays.pid").exists());

        supervisor
            .watch_until(tokio::time::sleep(Duration::from_secs(1)))
            .await;
        let names: Vec<_> = supervisor.pids().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec!["stays".to_owned()]);
        assert!(!dir.path().join("dies.pid").exists());

        let started = std::time::Instant::now();
        supervisor.stop().await;
        assert!(
            started.elapsed() < STOP_TIMEOUT,
            "stopped by SIGTERM, not killed"
        );
        assert!(!dir.path().join("stays.pid").exists());
        let log = fs::read_to_string(dir.path().join("stays.log")).unwrap();
        assert_eq!(log, "up\n");
    }

    #[tokio::test]
    async fn a_live_pid_file_refuses_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("x.pid");
        fs::write(&pid_file, format!("{}\n", std::process::id())).unwrap();
        let started = Supervisor::start(vec![spec(dir.path(), "x", "exit 0")]);
        assert!(matches!(
            started,
            Err(SupervisorError::AlreadyRunning { .. })
        ));

        // A stale pid (no such process) is overwritten.
        fs::write(&pid_file, "999999999\n").unwrap();
        let supervisor = Supervisor::start(vec![spec(dir.path(), "x", "exec sleep 60")]).unwrap();
        let (_, pid) = supervisor.pids()[0].clone();
        assert_eq!(fs::read_to_string(&pid_file).unwrap(), format!("{pid}\n"));
        supervisor.stop().await;
    }
}

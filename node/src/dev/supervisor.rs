//! The child processes of `apiary dev`: starts one `apiary serve` per replica, records its pid
//! file, reports a replica that dies (without restarting it) and stops them all cleanly —
//! SIGTERM, a bounded wait, then SIGKILL — removing the pid files.
//!
//! A pid file left behind (a cluster that was killed) only refuses a start when it names a
//! live replica of the same data directory ([`pid_file::classify`]); one whose process was
//! killed and is still ending is waited for, up to [`EXIT_WAIT`].
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
use tokio::time::Instant;

use super::pid_file;
use super::pid_file::PidProcess;

/// How often liveness of the replicas is checked.
const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// How long replicas get to shut down after SIGTERM before they are killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// How long a start waits for a killed replica named by a pid file to finish exiting (to
/// release its ports and files; normally milliseconds).
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// How often a start looks again at a replica that is exiting.
const EXIT_POLL: Duration = Duration::from_millis(50);

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
    /// A pid file names a live replica of the same data directory: another `apiary dev`
    /// uses this directory.
    #[error(
        "{path} names running replica process {pid}: is another `apiary dev` using this directory?"
    )]
    AlreadyRunning {
        /// The pid file.
        path: PathBuf,
        /// The live process.
        pid: i32,
    },
    /// A pid file names a killed process that has not finished exiting after [`EXIT_WAIT`].
    #[error("{path} names process {pid}, which was killed but has not exited yet")]
    StillExiting {
        /// The pid file.
        path: PathBuf,
        /// The exiting process.
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
    /// Its data directory (its `--data-dir`): what tells its process from another one that
    /// reuses the pid.
    pub data_dir: PathBuf,
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
    /// Starts every replica. Fails if a pid file names a live replica of the same data
    /// directory (the directory is in use) or a replica cannot be spawned; replicas already
    /// started are then killed (their handles are dropped with `kill_on_drop`).
    pub async fn start(specs: Vec<ReplicaSpec>) -> Result<Self, SupervisorError> {
        for spec in &specs {
            refuse_live_pid_file(spec).await?;
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

/// Fails if `spec`'s pid file names its live replica; waits (up to [`EXIT_WAIT`]) for one that
/// is exiting. A file naming anything else is stale and is overwritten by the start.
async fn refuse_live_pid_file(spec: &ReplicaSpec) -> Result<(), SupervisorError> {
    let Some(pid) = pid_file::read(&spec.pid_file) else {
        return Ok(());
    };
    let deadline = Instant::now() + EXIT_WAIT;
    loop {
        let raw = pid.as_raw_pid();
        match pid_file::classify(pid, &spec.data_dir) {
            PidProcess::Gone | PidProcess::Other => return Ok(()),
            PidProcess::Replica => {
                return Err(SupervisorError::AlreadyRunning {
                    path: spec.pid_file.clone(),
                    pid: raw,
                });
            }
            PidProcess::Exiting if Instant::now() >= deadline => {
                return Err(SupervisorError::StillExiting {
                    path: spec.pid_file.clone(),
                    pid: raw,
                });
            }
            PidProcess::Exiting => tokio::time::sleep(EXIT_POLL).await,
        }
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

    /// A replica running `script`, whose arguments name its data directory as a real
    /// replica's do.
    fn spec(dir: &Path, name: &str, script: &str) -> ReplicaSpec {
        let data_dir = dir.join(name);
        ReplicaSpec {
            name: name.to_owned(),
            program: PathBuf::from("/bin/sh"),
            args: vec![
                "-c".into(),
                script.into(),
                "apiary".into(),
                "--data-dir".into(),
                data_dir.clone().into(),
            ],
            log_file: dir.join(format!("{name}.log")),
            pid_file: dir.join(format!("{name}.pid")),
            data_dir,
        }
    }

    #[tokio::test]
    async fn a_dead_replica_is_dropped_and_the_rest_stop_on_sigterm() {
        let dir = tempfile::tempdir().unwrap();
        let mut supervisor = Supervisor::start(vec![
            spec(dir.path(), "stays", "echo up; exec sleep 60"),
            spec(dir.path(), "dies", "exit 3"),
        ])
        .await
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
    async fn only_a_live_replica_of_the_directory_refuses_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let looping = "while :; do sleep 1; done";
        let first = Supervisor::start(vec![spec(dir.path(), "x", looping)])
            .await
            .unwrap();
        let pid = Pid::from_raw(first.pids()[0].1.try_into().unwrap()).unwrap();
        // The replica counts as running once its `exec` has set up its arguments.
        let deadline = Instant::now() + Duration::from_secs(10);
        while pid_file::classify(pid, &dir.path().join("x")) != PidProcess::Replica {
            assert!(Instant::now() < deadline);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let started = Supervisor::start(vec![spec(dir.path(), "x", "exit 0")]).await;
        assert!(
            matches!(started, Err(SupervisorError::AlreadyRunning { .. })),
            "{:?}",
            started.err()
        );
        first.stop().await;

        let pid_file = dir.path().join("x.pid");
        let stale = [
            // No such process.
            "999999999\n".to_owned(),
            // A live process that is no replica of this directory (a reused pid).
            format!("{}\n", std::process::id()),
            // Not a pid.
            "-1\n".to_owned(),
        ];
        for contents in stale {
            fs::write(&pid_file, &contents).unwrap();
            let supervisor = Supervisor::start(vec![spec(dir.path(), "x", "exec sleep 60")])
                .await
                .unwrap_or_else(|e| panic!("{contents:?}: {e}"));
            let (_, pid) = supervisor.pids()[0].clone();
            assert_eq!(fs::read_to_string(&pid_file).unwrap(), format!("{pid}\n"));
            supervisor.stop().await;
        }
    }

    // A replica killed with SIGKILL and not yet reaped (a zombie, as when `apiary dev` itself
    // was killed too) does not hold the directory.
    #[tokio::test]
    async fn a_killed_unreaped_replica_does_not_refuse_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let killed = spec(dir.path(), "x", "while :; do sleep 1; done");
        let mut zombie = std::process::Command::new(&killed.program)
            .args(&killed.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = Pid::from_child(&zombie);
        fs::write(&killed.pid_file, format!("{}\n", pid.as_raw_pid())).unwrap();
        rustix::process::kill_process(pid, Signal::KILL).unwrap();

        let supervisor = Supervisor::start(vec![spec(dir.path(), "x", "exec sleep 60")])
            .await
            .unwrap();
        assert_ne!(supervisor.pids()[0].1, pid.as_raw_pid().unsigned_abs());
        supervisor.stop().await;
        zombie.wait().unwrap();
    }
}

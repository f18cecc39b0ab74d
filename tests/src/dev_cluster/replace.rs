//! Replacing one replica's software in place, as an operator upgrading (or rolling back) a
//! cluster one machine at a time does: stop the replica as its supervisor would, start another
//! `apiary` binary with the same `serve` command line on the same data directory and ports.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use super::DevCluster;
use super::LOG_FILTER;
use crate::error::HarnessError;
use crate::error::Result;
use crate::process;
use crate::process::Signal;

/// How long a replica gets to stop after SIGTERM (the node's shutdown delay, drain and
/// leadership hand-over included).
const STOP_LIMIT: Duration = Duration::from_secs(30);

/// How long `apiary dev` gets to notice its replica exited and remove the pid file.
const PID_FILE_LIMIT: Duration = Duration::from_secs(10);

/// How often the new process's `/readyz` is asked.
const READY_POLL: Duration = Duration::from_millis(20);

impl DevCluster {
    /// Replaces the software of replica `index` (1-based) by `binary`: SIGTERM (a leader hands
    /// raft leadership over before it stops), wait until it has exited, start `binary` with
    /// the replica's own `serve` arguments, its output appended to the replica's log, and wait
    /// until it answers `/readyz` with 200; returns the time from its start to that answer
    /// (its restart-to-ready, to within [`READY_POLL`]). `apiary dev` does not supervise the
    /// new process; the harness stops it with the cluster.
    pub async fn replace_replica(&mut self, index: usize, binary: &Path) -> Result<Duration> {
        let pid = self.pid(index)?;
        let proc_cmdline = Path::new("/proc").join(pid.to_string()).join("cmdline");
        let cmdline = fs::read(&proc_cmdline).map_err(|source| HarnessError::Io {
            path: proc_cmdline,
            source,
        })?;
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|arg| !arg.is_empty())
            .skip(1)
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect();
        process::send(pid, Signal::Terminate)?;
        process::wait_gone(pid, Signal::Terminate, STOP_LIMIT)?;
        let pid_file = self.dir().join(format!("node-{index}.pid"));
        if let Some(position) = self.replaced.iter().position(|child| child.id() == pid) {
            let mut child = self.replaced.swap_remove(position);
            let _ = child.wait();
        } else {
            let start = Instant::now();
            while pid_file.exists() {
                if start.elapsed() > PID_FILE_LIMIT {
                    return Err(HarnessError::StillRunning {
                        pid,
                        signal: Signal::Terminate.name(),
                        waited: PID_FILE_LIMIT,
                    });
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let (out, err) = process::log_output(&self.log_file(index))?;
        let started = Instant::now();
        let mut command = Command::new(binary);
        if std::env::var_os("RUST_LOG").is_none() {
            command.env("RUST_LOG", LOG_FILTER);
        }
        let child = command
            .args(&args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|source| HarnessError::Spawn {
                program: binary.display().to_string(),
                source,
            })?;
        fs::write(&pid_file, format!("{}\n", child.id())).map_err(|source| HarnessError::Io {
            path: pid_file.clone(),
            source,
        })?;
        self.replaced.push(child);
        let client = self
            .client(index)?
            .clone()
            .with_timeout(Duration::from_secs(2));
        let limit = self.options.ready_timeout;
        let waited = client
            .wait_until_ok("/readyz", Instant::now() + limit, READY_POLL, || Ok(()))
            .await?;
        let ready = started.elapsed();
        waited.map_err(|last| self.not_ready(&format!("/readyz of node-{index}"), limit, last))?;
        Ok(ready)
    }
}

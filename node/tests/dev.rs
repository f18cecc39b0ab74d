//! `apiary dev` as a real process tree, driven with `kubectl` (skipped, saying so, when
//! `kubectl` is not on PATH): three `apiary serve` children, writes and reads through different
//! contexts, a replica dying, clean stop on SIGINT, a restart that keeps data and
//! certificates, and a restart right after `apiary dev` and its replicas were killed.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed unwrap is a failed test"
)]

use std::fs;
use std::net::TcpListener;
use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::ExitStatus;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use rustix::process::Pid;
use rustix::process::Signal;

const NODES: usize = 3;
/// How long the cluster may take to come up (three processes, election, namespaces).
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long `apiary dev` may take to stop its replicas after SIGINT.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

fn kubectl_available() -> bool {
    Command::new("kubectl")
        .args(["version", "--client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A base port whose API and peer ports are all free right now (spread by pid so parallel
/// runs rarely collide).
fn free_base_port() -> u16 {
    let start = 20_000 + u16::try_from(std::process::id() % 2_000).unwrap() * 10;
    for attempt in 0..200u16 {
        let base = start + attempt * 10;
        let all_free = (0..NODES as u16)
            .flat_map(|i| [base + i, base + 1000 + i])
            .map(|port| TcpListener::bind(("127.0.0.1", port)))
            .collect::<Result<Vec<_>, _>>()
            .is_ok();
        if all_free {
            return base;
        }
    }
    panic!("no free port range found");
}

struct Dev {
    dir: PathBuf,
    child: Child,
    stderr: PathBuf,
}

impl Dev {
    fn start(dir: &Path, base_port: u16, run: usize) -> Self {
        let stdout = dir.join(format!("dev-{run}.out"));
        let stderr = dir.join(format!("dev-{run}.err"));
        let child = Command::new(env!("CARGO_BIN_EXE_apiary"))
            .args([
                "dev",
                "--nodes",
                "3",
                "--flavor",
                "kubernetes",
                "--base-port",
            ])
            .arg(base_port.to_string())
            .arg("--dir")
            .arg(dir.join("cluster"))
            .stdin(Stdio::null())
            .stdout(fs::File::create(&stdout).unwrap())
            .stderr(fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        Self {
            dir: dir.join("cluster"),
            child,
            stderr,
        }
    }

    fn kubectl(&self, context: &str, args: &[&str]) -> Result<String, String> {
        let output = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(self.dir.join("kubeconfig"))
            .args(["--context", context, "--request-timeout", "10s"])
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if output.status.success() {
            Ok(stdout)
        } else {
            Err(format!(
                "{stdout}{}",
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + READY_TIMEOUT;
        for i in 1..=NODES {
            let context = format!("node-{i}");
            loop {
                match self.kubectl(&context, &["get", "--raw", "/readyz"]) {
                    Ok(_) => break,
                    Err(error) => assert!(
                        Instant::now() < deadline,
                        "{context} not ready: {error}\n{}",
                        self.stderr_text()
                    ),
                }
                std::thread::sleep(Duration::from_millis(250));
            }
        }
    }

    fn pid(&self, node: usize) -> Pid {
        let text = fs::read_to_string(self.dir.join(format!("node-{node}.pid"))).unwrap();
        Pid::from_raw(text.trim().parse().unwrap()).unwrap()
    }

    fn stderr_text(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn interrupt_and_wait(mut self) -> ExitStatus {
        let pid = Pid::from_child(&self.child);
        rustix::process::kill_process(pid, Signal::INT).unwrap();
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "apiary dev did not stop");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        // A failed assertion must not leave the cluster running.
        if let Ok(None) = self.child.try_wait() {
            let _ = rustix::process::kill_process(Pid::from_child(&self.child), Signal::INT);
            let _ = self.child.wait();
        }
    }
}

fn alive(pid: Pid) -> bool {
    rustix::process::test_kill_process(pid).is_ok()
}

fn configmap_file(dir: &Path) -> PathBuf {
    let path = dir.join("configmap.json");
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo"},"data":{"key":"value"}}"#;
    fs::write(&path, body).unwrap();
    path
}

// R-HA-003, R-HA-004, R-HA-011, R-HA-012, R-HA-016, R-RES-004: `apiary dev` starts a working
// 3-replica cluster that kubectl uses through any context; it keeps serving when a replica
// dies (reported, not restarted); SIGINT stops every replica and removes the pid files; a
// restart keeps the data and the certificates.
#[test]
fn dev_cluster_serves_kubectl_stops_cleanly_and_restarts_with_its_data() {
    if !kubectl_available() {
        eprintln!("kubectl is not on PATH: skipping the apiary dev kubectl test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base_port = free_base_port();
    let manifest = configmap_file(dir.path());
    let manifest = manifest.to_str().unwrap();

    let first_ca;
    {
        let dev = Dev::start(dir.path(), base_port, 1);
        dev.wait_ready();
        first_ca = fs::read_to_string(dev.dir.join("ca.crt")).unwrap();

        dev.kubectl("node-1", &["create", "-f", manifest]).unwrap();
        let value = dev
            .kubectl(
                "node-2",
                &["get", "configmap", "demo", "-o", "jsonpath={.data.key}"],
            )
            .unwrap();
        assert_eq!(value, "value");

        let pids: Vec<Pid> = (1..=NODES).map(|i| dev.pid(i)).collect();
        assert!(pids.iter().all(|p| alive(*p)));
        let cluster_dir = dev.dir.clone();
        let stderr = dev.stderr.clone();
        let status = dev.interrupt_and_wait();
        assert!(status.success(), "{status}");
        // Every replica exited successfully on SIGTERM: none was reported or killed.
        let report = fs::read_to_string(stderr).unwrap();
        assert!(!report.contains("stopped with"), "{report}");
        assert!(!report.contains("killing"), "{report}");
        for (i, pid) in pids.iter().enumerate() {
            assert!(!alive(*pid), "node-{} still running", i + 1);
            assert!(!cluster_dir.join(format!("node-{}.pid", i + 1)).exists());
        }
    }
    {
        let dev = Dev::start(dir.path(), base_port, 2);
        dev.wait_ready();
        assert_eq!(
            fs::read_to_string(dev.dir.join("ca.crt")).unwrap(),
            first_ca,
            "certificates are reused"
        );
        let value = dev
            .kubectl(
                "node-3",
                &["get", "configmap", "demo", "-o", "jsonpath={.data.key}"],
            )
            .unwrap();
        assert_eq!(value, "value", "data survives a restart");

        // A replica that dies is reported and not restarted; the other two keep serving.
        let victim = dev.pid(3);
        rustix::process::kill_process(victim, Signal::KILL).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !dev.stderr_text().contains("replica node-3 exited") {
            assert!(Instant::now() < deadline, "{}", dev.stderr_text());
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(!dev.dir.join("node-3.pid").exists());
        dev.kubectl("node-1", &["delete", "configmap", "demo"])
            .unwrap();
        let gone = dev.kubectl("node-2", &["get", "configmap", "demo"]);
        assert!(
            gone.as_ref().is_err_and(|e| e.contains("NotFound")),
            "{gone:?}"
        );

        let status = dev.interrupt_and_wait();
        assert!(status.success(), "{status}");
    }
}

/// Whether `pid` is a zombie (exited, not reaped).
fn zombie(pid: Pid) -> bool {
    fs::read_to_string(format!("/proc/{}/status", pid.as_raw_pid())).is_ok_and(|status| {
        status
            .lines()
            .any(|line| line.starts_with("State:") && line.contains('Z'))
    })
}

// `apiary dev` and its replicas killed with SIGKILL leave their pid files behind, and the
// replicas stay zombies while nothing reaps them; `apiary dev` started again at once on the
// same directory starts, because the pid files name no live replica, and keeps the data.
#[test]
fn dev_restarts_at_once_after_it_and_its_replicas_were_killed() {
    if !kubectl_available() {
        eprintln!("kubectl is not on PATH: skipping the apiary dev kill -9 test");
        return;
    }
    // Orphaned replicas become children of this process, which reaps them only at the end:
    // they stay zombies, as under an init that has not reaped them yet.
    let own = Pid::from_raw(i32::try_from(std::process::id()).unwrap()).unwrap();
    rustix::process::set_child_subreaper(Some(own)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base_port = free_base_port();
    let manifest = configmap_file(dir.path());

    let mut killed = Dev::start(dir.path(), base_port, 1);
    killed.wait_ready();
    killed
        .kubectl("node-1", &["create", "-f", manifest.to_str().unwrap()])
        .unwrap();
    let replicas: Vec<Pid> = (1..=NODES).map(|i| killed.pid(i)).collect();
    // The supervisor first, so it neither reaps its replicas nor removes their pid files.
    rustix::process::kill_process(Pid::from_child(&killed.child), Signal::KILL).unwrap();
    killed.child.wait().unwrap();
    for pid in &replicas {
        rustix::process::kill_process(*pid, Signal::KILL).unwrap();
    }

    let dev = Dev::start(dir.path(), base_port, 2);
    dev.wait_ready();
    let value = dev
        .kubectl(
            "node-2",
            &["get", "configmap", "demo", "-o", "jsonpath={.data.key}"],
        )
        .unwrap();
    assert_eq!(value, "value", "data survives the kill");
    for (i, pid) in replicas.iter().enumerate() {
        assert!(zombie(*pid), "killed node-{} was reaped early", i + 1);
        assert_ne!(dev.pid(i + 1), *pid);
    }
    let status = dev.interrupt_and_wait();
    assert!(status.success(), "{status}");
    for pid in replicas {
        rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()).unwrap();
    }
}

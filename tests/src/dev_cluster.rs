//! A real `apiary dev` cluster for one test: started as a child process in a temporary directory
//! on free loopback ports, ready once every replica's `/readyz` answers 200 (and, unless turned
//! off, every replica serves the `default` namespace), stopped with SIGINT (its Ctrl-C) when
//! dropped.
//!
//! `apiary dev --dir DIR` writes `DIR/kubeconfig` (contexts `node-1` .. `node-N`),
//! `DIR/node-N.pid` and `DIR/node-N.log`; the harness reads those files and nothing else of the
//! cluster's internals, so what it tests is what an operator sees.

use std::fs;
use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use tempfile::TempDir;

mod replace;

use crate::binary::apiary_binary;
use crate::error::HarnessError;
use crate::error::Result;
use crate::http_client::HttpClient;
use crate::kubeconfig;
use crate::kubeconfig::Endpoint;
use crate::memory;
use crate::ports;
use crate::process;
use crate::process::Signal;

/// The replicas' log filter when `RUST_LOG` is not set: the node's default (`info`, openraft at
/// `warn`) plus openraft's leadership changes, which [`DevCluster::leader`] reads. `apiary dev`
/// passes its environment on to the replicas.
const LOG_FILTER: &str = "info,openraft=warn,openraft::engine::handler::server_state_handler=info";

/// How long a stopped `apiary dev` gets to stop its replicas (it gives each 15 s after SIGTERM)
/// before the harness kills everything.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// Product naming of the API (`apiary dev --flavor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flavor {
    /// Neutral names (`platform.io`).
    #[default]
    Platform,
    /// Kubernetes names, for unmodified Kubernetes clients.
    Kubernetes,
}

impl Flavor {
    /// The RBAC API group of the flavor.
    pub fn rbac_group(self) -> &'static str {
        match self {
            Self::Platform => "rbac.authorization.platform.io",
            Self::Kubernetes => "rbac.authorization.k8s.io",
        }
    }

    /// The `--flavor` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Platform => "platform",
            Self::Kubernetes => "kubernetes",
        }
    }
}

/// How to start a dev cluster.
#[derive(Debug, Clone)]
pub struct DevOptions {
    /// Number of replicas (`--nodes`).
    pub nodes: u16,
    /// `--flavor`.
    pub flavor: Flavor,
    /// How long every replica gets to answer `/readyz` with 200 after a start.
    pub ready_timeout: Duration,
    /// Deadline of each request the replica clients send.
    pub request_timeout: Duration,
    /// Whether a start also waits until every replica serves the `default` namespace, which
    /// the replicas create after they first report ready. Tests that write into it need it;
    /// the readiness test turns it off to see what `/readyz` alone promises.
    pub wait_for_default_namespace: bool,
    /// More `apiary dev` flags, passed on to every replica (`--watch-history=2s`).
    pub flags: Vec<String>,
    /// The `apiary` executable to run; `None`: the one [`apiary_binary`] finds.
    pub binary: Option<PathBuf>,
}

impl Default for DevOptions {
    fn default() -> Self {
        Self {
            nodes: 3,
            flavor: Flavor::Platform,
            ready_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(15),
            wait_for_default_namespace: true,
            flags: Vec::new(),
            binary: None,
        }
    }
}

impl DevOptions {
    /// Three replicas of `flavor`, default timeouts.
    pub fn flavor(flavor: Flavor) -> Self {
        Self {
            flavor,
            ..Self::default()
        }
    }

    /// These options plus the `apiary dev` flag `flag` (`--watch-history=2s`).
    pub fn flag(mut self, flag: &str) -> Self {
        self.flags.push(flag.to_owned());
        self
    }
}

/// A running (or stopped, between [`DevCluster::stop`] and [`DevCluster::start_again`])
/// `apiary dev` cluster.
pub struct DevCluster {
    /// The `--dir`; removed when the cluster is dropped.
    dir: TempDir,
    binary: PathBuf,
    options: DevOptions,
    base_port: u16,
    /// The `apiary dev` process, while it runs.
    dev: Option<Child>,
    /// One client per replica, index 0 is `node-1`.
    clients: Vec<HttpClient>,
    /// Replicas started by [`DevCluster::replace_replica`], not by `apiary dev`.
    replaced: Vec<Child>,
}

impl DevCluster {
    /// Starts `apiary dev` with `options` in a new temporary directory and waits until every
    /// replica is ready.
    pub async fn start(options: DevOptions) -> Result<Self> {
        let binary = match &options.binary {
            Some(binary) => binary.clone(),
            None => apiary_binary()?,
        };
        let dir = tempfile::Builder::new()
            .prefix("apiary-dev-")
            .tempdir()
            .map_err(|source| HarnessError::Io {
                path: std::env::temp_dir(),
                source,
            })?;
        let base_port = ports::free_base_port(&ports::dev_offsets(options.nodes))?;
        let mut cluster = Self {
            dir,
            binary,
            options,
            base_port,
            dev: None,
            clients: Vec::new(),
            replaced: Vec::new(),
        };
        cluster.launch().await?;
        Ok(cluster)
    }

    /// The cluster directory (`--dir`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The kubeconfig `apiary dev` wrote.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir().join("kubeconfig")
    }

    /// Number of replicas.
    pub fn nodes(&self) -> usize {
        usize::from(self.options.nodes)
    }

    /// The kubeconfig context of replica `index` (1-based): `node-<index>`.
    pub fn context(index: usize) -> String {
        format!("node-{index}")
    }

    /// The HTTPS client of replica `index` (1-based), while the cluster runs.
    pub fn client(&self, index: usize) -> Result<&HttpClient> {
        index
            .checked_sub(1)
            .and_then(|i| self.clients.get(i))
            .ok_or(HarnessError::NoSuchReplica {
                index,
                nodes: self.nodes(),
            })
    }

    /// The log file of replica `index` (1-based).
    pub fn log_file(&self, index: usize) -> PathBuf {
        self.dir().join(format!("node-{index}.log"))
    }

    /// The process id of replica `index` (1-based), from its pid file.
    pub fn pid(&self, index: usize) -> Result<u32> {
        if index == 0 || index > self.nodes() {
            return Err(HarnessError::NoSuchReplica {
                index,
                nodes: self.nodes(),
            });
        }
        let pid = process::read_pid_file(&self.dir().join(format!("node-{index}.pid")))?;
        if self.owns(pid) {
            Ok(pid)
        } else {
            Err(HarnessError::ForeignProcess { pid })
        }
    }

    /// The peak resident set size of replica `index` (1-based) since it started, in bytes
    /// (`VmHWM` of the process its pid file names).
    pub fn peak_resident_bytes(&self, index: usize) -> Result<u64> {
        memory::peak_resident_bytes(self.pid(index)?)
    }

    /// The address and TLS settings of replica `index` (1-based), from the kubeconfig, for
    /// clients other than [`DevCluster::client`] (raw connections).
    pub async fn endpoint(&self, index: usize) -> Result<Endpoint> {
        if index == 0 || index > self.nodes() {
            return Err(HarnessError::NoSuchReplica {
                index,
                nodes: self.nodes(),
            });
        }
        kubeconfig::endpoint(&self.kubeconfig(), &Self::context(index)).await
    }

    /// A client of replica `index` (1-based) that trusts the cluster's CA and presents no
    /// credentials (an anonymous caller, or one that adds its own `Authorization` header).
    pub async fn anonymous_client(&self, index: usize) -> Result<HttpClient> {
        let endpoint = self.endpoint(index).await?;
        let tls = rustls::ClientConfig::builder()
            .with_root_certificates(endpoint.roots.clone())
            .with_no_client_auth();
        Ok(HttpClient::new(&endpoint.server, Some(Arc::new(tls))))
    }

    /// Whether `pid` is a live `apiary` process working in this cluster's directory.
    fn owns(&self, pid: u32) -> bool {
        let dir = self.dir().to_string_lossy().into_owned();
        process::is_alive(pid) && process::cmdline_contains(pid, &dir)
    }

    /// Kills replica `index` (1-based) with SIGKILL, a crash without any clean-up, and waits
    /// until the process is gone. `apiary dev` does not restart it.
    pub fn kill_replica(&self, index: usize) -> Result<()> {
        let pid = self.pid(index)?;
        process::send(pid, Signal::Kill)?;
        process::wait_gone(pid, Signal::Kill, Duration::from_secs(10))
    }

    /// Asks replica `index` (1-based) to stop gracefully with SIGTERM, as a supervisor does,
    /// and returns its process id (to see it gone with [`process::is_alive`]). `apiary dev` does
    /// not restart it.
    pub fn terminate_replica(&self, index: usize) -> Result<u32> {
        let pid = self.pid(index)?;
        process::send(pid, Signal::Terminate)?;
        Ok(pid)
    }

    /// Freezes replica `index` (1-based) with SIGSTOP: it neither applies nor answers until
    /// [`DevCluster::resume_replica`], while the others go on (a replica that lags).
    pub fn pause_replica(&self, index: usize) -> Result<()> {
        process::send(self.pid(index)?, Signal::Stop)
    }

    /// Lets a replica frozen by [`DevCluster::pause_replica`] run on (SIGCONT).
    pub fn resume_replica(&self, index: usize) -> Result<()> {
        process::send(self.pid(index)?, Signal::Continue)
    }

    /// The running replica (1-based) whose log says it is the raft leader, if exactly one does.
    ///
    /// openraft logs `id=N becomes leader` and `id=N steps down from leader` at info level; a
    /// replica is taken as leader when the last of those lines in its log is the first kind and
    /// its process is alive. `None` when the logs do not tell (the replicas log at a level that
    /// hides it, or no election has finished).
    pub fn leader(&self) -> Option<usize> {
        let claims: Vec<usize> = (1..=self.nodes())
            .filter(|&index| self.pid(index).is_ok())
            .filter(|&index| {
                let log = fs::read_to_string(self.log_file(index)).unwrap_or_default();
                log.lines()
                    .rev()
                    .find_map(|line| {
                        if line.contains("steps down from leader") {
                            Some(false)
                        } else if line.contains("becomes leader") {
                            Some(true)
                        } else {
                            None
                        }
                    })
                    .unwrap_or(false)
            })
            .collect();
        match claims.as_slice() {
            [only] => Some(*only),
            _ => None,
        }
    }

    /// Waits up to `limit` for [`DevCluster::leader`] to name a replica.
    pub async fn wait_leader(&self, limit: Duration) -> Option<usize> {
        let start = Instant::now();
        loop {
            if let Some(leader) = self.leader() {
                return Some(leader);
            }
            if start.elapsed() > limit {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Stops the cluster as Ctrl-C does (SIGINT to `apiary dev`, which stops its replicas) and
    /// waits for it to exit. Killing it is the fallback when it does not exit in time.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut dev) = self.dev.take() else {
            return Ok(());
        };
        self.clients.clear();
        let pid = dev.id();
        process::send(pid, Signal::Interrupt)?;
        let start = Instant::now();
        let outcome = loop {
            match dev.try_wait() {
                Ok(Some(_)) => break Ok(()),
                Ok(None) if start.elapsed() < STOP_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Ok(None) | Err(_) => {
                    break Err(HarnessError::StillRunning {
                        pid,
                        signal: Signal::Interrupt.name(),
                        waited: STOP_TIMEOUT,
                    });
                }
            }
        };
        if outcome.is_err() {
            // The replicas do not die with their parent (own process groups), so kill them too.
            let _ = dev.kill();
            let _ = dev.wait();
        }
        self.kill_leftover_replicas();
        outcome
    }

    /// Starts `apiary dev` again on the same directory and ports, after [`DevCluster::stop`], and
    /// waits until every replica is ready.
    pub async fn start_again(&mut self) -> Result<()> {
        self.stop()?;
        self.launch().await
    }

    /// Spawns `apiary dev`, then waits for the kubeconfig and every replica's `/readyz`.
    async fn launch(&mut self) -> Result<()> {
        let (log, log_err) = process::log_output(&self.dir().join("dev.log"))?;
        let mut command = Command::new(&self.binary);
        if std::env::var_os("RUST_LOG").is_none() {
            command.env("RUST_LOG", LOG_FILTER);
        }
        let dev = command
            .arg("dev")
            .arg("--nodes")
            .arg(self.options.nodes.to_string())
            .arg("--dir")
            .arg(self.dir.path())
            .arg("--flavor")
            .arg(self.options.flavor.as_str())
            .arg("--base-port")
            .arg(self.base_port.to_string())
            .args(&self.options.flags)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .map_err(|source| HarnessError::Spawn {
                program: self.binary.display().to_string(),
                source,
            })?;
        self.dev = Some(dev);
        self.wait_ready().await
    }

    /// Waits until the kubeconfig exists, every replica answers `/readyz` with 200 and, when
    /// [`DevOptions::wait_for_default_namespace`] is set, every replica serves `default`.
    async fn wait_ready(&mut self) -> Result<()> {
        let start = Instant::now();
        let limit = self.options.ready_timeout;
        let path = self.kubeconfig();
        while !path.is_file() {
            self.check_dev_alive()?;
            if start.elapsed() > limit {
                return Err(self.not_ready("the kubeconfig", limit, "no file".to_owned()));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The file may be written in several steps: retry parsing until the deadline.
        let endpoints = loop {
            match self.read_endpoints(&path).await {
                Ok(endpoints) => break endpoints,
                Err(e) if start.elapsed() > limit => {
                    return Err(self.not_ready("the kubeconfig", limit, e.to_string()));
                }
                Err(_) => {}
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        self.clients = endpoints
            .iter()
            .map(|e| {
                HttpClient::new(&e.server, Some(e.tls.clone()))
                    .with_timeout(self.options.request_timeout)
            })
            .collect();
        let clients = self.clients.clone();
        let deadline = start + limit;
        for (i, client) in clients.iter().enumerate() {
            let probe = client.clone().with_timeout(Duration::from_secs(2));
            let waited = probe
                .wait_until_ok("/readyz", deadline, Duration::from_millis(100), || {
                    self.check_dev_alive()
                })
                .await?;
            if let Err(last) = waited {
                let what = format!("/readyz of {}", Self::context(i + 1));
                return Err(self.not_ready(&what, limit, last));
            }
        }
        if self.options.wait_for_default_namespace {
            for (i, client) in clients.iter().enumerate() {
                let waited = client
                    .wait_until_ok(
                        "/api/v1/namespaces/default",
                        deadline,
                        Duration::from_millis(50),
                        || Ok(()),
                    )
                    .await?;
                if let Err(last) = waited {
                    let what = format!("namespace default on {}", Self::context(i + 1));
                    return Err(self.not_ready(&what, limit, last));
                }
            }
            // The default RBAC policy, which the leader writes after start-up (the binding
            // that lets every authenticated user read discovery): tests act as other users
            // right away.
            let discovery = format!(
                "/apis/{}/v1/clusterrolebindings/system:discovery",
                self.options.flavor.rbac_group()
            );
            for (i, client) in clients.iter().enumerate() {
                let waited = client
                    .wait_until_ok(&discovery, deadline, Duration::from_millis(50), || Ok(()))
                    .await?;
                if let Err(last) = waited {
                    let what = format!("the default RBAC policy on {}", Self::context(i + 1));
                    return Err(self.not_ready(&what, limit, last));
                }
            }
        }
        Ok(())
    }

    async fn read_endpoints(&self, path: &Path) -> Result<Vec<Endpoint>> {
        let mut endpoints = Vec::with_capacity(self.nodes());
        for index in 1..=self.nodes() {
            endpoints.push(kubeconfig::endpoint(path, &Self::context(index)).await?);
        }
        Ok(endpoints)
    }

    /// Fails when `apiary dev` has exited (it never does on its own while the cluster runs).
    fn check_dev_alive(&mut self) -> Result<()> {
        let exited = match self.dev.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => None,
            Some(Ok(Some(status))) => Some(status.to_string()),
            Some(Err(e)) => Some(e.to_string()),
            None => Some("not started".to_owned()),
        };
        match exited {
            None => Ok(()),
            Some(status) => {
                self.dev = None;
                Err(self.not_ready(
                    "apiary dev",
                    Duration::ZERO,
                    format!("it exited ({status})"),
                ))
            }
        }
    }

    fn not_ready(&self, what: &str, waited: Duration, last: String) -> HarnessError {
        HarnessError::NotReady {
            what: what.to_owned(),
            waited,
            last: format!("{last}\n{}", self.log_tails(20)),
        }
    }

    /// The last `lines` lines of `dev.log` and of every replica's log, for failure messages.
    pub fn log_tails(&self, lines: usize) -> String {
        let files = std::iter::once(self.dir().join("dev.log"))
            .chain((1..=self.nodes()).map(|i| self.log_file(i)));
        let mut out = String::new();
        for file in files {
            let text = fs::read_to_string(&file).unwrap_or_default();
            let all: Vec<&str> = text.lines().collect();
            let tail = &all[all.len().saturating_sub(lines)..];
            out.push_str(&format!(
                "--- {} ---\n{}\n",
                file.display(),
                tail.join("\n")
            ));
        }
        out
    }

    /// SIGKILLs replicas whose pid file still names a live process of this cluster (after
    /// `apiary dev` itself was killed, or failed to stop them).
    fn kill_leftover_replicas(&self) {
        for index in 1..=self.nodes() {
            if let Ok(pid) = self.pid(index) {
                let _ = process::send(pid, Signal::Kill);
                let _ = process::wait_gone(pid, Signal::Kill, Duration::from_secs(5));
            }
        }
    }
}

impl Drop for DevCluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "cluster in {} at failure:\n{}",
                self.dir().display(),
                self.log_tails(40)
            );
        }
        if let Err(e) = self.stop() {
            eprintln!("stopping the dev cluster: {e}");
        }
    }
}

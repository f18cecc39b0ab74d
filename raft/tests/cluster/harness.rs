//! In-process clusters for the tests: every replica is a real `Replica` with its own data
//! directory, serving the peer router on a real loopback TCP port over plain HTTP.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use apiary_raft::command::KeyValue;
use apiary_raft::command::Op;
use apiary_raft::command::Txn;
use apiary_raft::network::HttpTransport;
use apiary_raft::network::Transport;
use apiary_raft::network::TransportError;
use apiary_raft::replica::RaftTimings;
use apiary_raft::replica::Replica;
use apiary_raft::replica::ReplicaConfig;
use apiary_raft::replica::peer_router;
use apiary_raft::typ::NodeId;
use bytes::Bytes;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long any cluster-level condition may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// Short timings: loopback is fast and the suite must run in well under a minute.
pub fn timings() -> RaftTimings {
    RaftTimings {
        heartbeat_interval: Duration::from_millis(50),
        election_timeout_min: Duration::from_millis(300),
        election_timeout_max: Duration::from_millis(600),
        install_snapshot_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(3),
    }
}

/// A running replica and its peer server.
struct Running {
    replica: Arc<Replica>,
    stop: oneshot::Sender<()>,
    server: JoinHandle<()>,
}

/// A cluster of replicas on loopback.
pub struct Cluster {
    dir: tempfile::TempDir,
    urls: BTreeMap<NodeId, String>,
    addrs: BTreeMap<NodeId, SocketAddr>,
    /// Listeners bound before the first start, so every URL is known up front.
    listeners: BTreeMap<NodeId, TcpListener>,
    running: BTreeMap<NodeId, Running>,
    snapshot_logs_threshold: u64,
    timings: RaftTimings,
    /// Directed links (from, to) that currently drop every call.
    cut: Arc<Mutex<BTreeSet<(NodeId, NodeId)>>>,
}

impl Cluster {
    /// Reserves `size` loopback ports without starting anything.
    pub async fn new(size: u64, snapshot_logs_threshold: u64) -> Cluster {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
        let mut cluster = Cluster {
            dir: tempfile::tempdir().expect("tempdir"),
            urls: BTreeMap::new(),
            addrs: BTreeMap::new(),
            listeners: BTreeMap::new(),
            running: BTreeMap::new(),
            snapshot_logs_threshold,
            timings: timings(),
            cut: Arc::default(),
        };
        for id in 1..=size {
            cluster.reserve(id).await;
        }
        cluster
    }

    /// Starts a founding cluster of `size` replicas and waits for a leader.
    pub async fn founded(size: u64, snapshot_logs_threshold: u64) -> Cluster {
        let mut cluster = Cluster::new(size, snapshot_logs_threshold).await;
        for id in 1..=size {
            cluster.start(id, false).await;
        }
        cluster.wait_leader().await;
        cluster
    }

    /// Reserves a loopback port for replica `id`.
    pub async fn reserve(&mut self, id: NodeId) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        self.urls.insert(id, format!("http://{addr}"));
        self.addrs.insert(id, addr);
        self.listeners.insert(id, listener);
    }

    /// Starts (or restarts, on its old data and port) replica `id`.
    pub async fn start(&mut self, id: NodeId, join_existing: bool) {
        let listener = match self.listeners.remove(&id) {
            Some(l) => l,
            None => TcpListener::bind(self.addrs[&id]).await.expect("rebind"),
        };
        let config = ReplicaConfig {
            id,
            data_dir: self.data_dir(id),
            peer_url: self.urls[&id].clone(),
            initial_cluster: self.urls.clone(),
            join_existing,
            raft: self.timings.clone(),
            snapshot_logs_threshold: self.snapshot_logs_threshold,
        };
        let transport = Partitionable {
            from: id,
            urls: self
                .urls
                .iter()
                .map(|(id, url)| (url.clone(), *id))
                .collect(),
            cut: self.cut.clone(),
            inner: HttpTransport::new(None),
        };
        let replica = Replica::start(config, Arc::new(transport))
            .await
            .expect("replica starts");
        let (stop, stopped) = oneshot::channel::<()>();
        let router = peer_router(replica.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        self.running.insert(
            id,
            Running {
                replica,
                stop,
                server,
            },
        );
    }

    /// Stops replica `id` (raft, then its server), keeping its data.
    pub async fn stop(&mut self, id: NodeId) {
        let running = self.running.remove(&id).expect("replica is running");
        running.replica.shutdown().await.expect("clean shutdown");
        let _ = running.stop.send(());
        let _ = tokio::time::timeout(Duration::from_secs(5), running.server).await;
    }

    /// Stops every running replica.
    pub async fn stop_all(&mut self) {
        let ids: Vec<NodeId> = self.running.keys().copied().collect();
        for id in ids {
            self.stop(id).await;
        }
    }

    /// Stops every replica, starts replicas `1..=count` again on their data directories, and
    /// waits until they agree on a leader.
    pub async fn restart_all(&mut self, count: NodeId) {
        self.stop_all().await;
        for id in 1..=count {
            self.start(id, false).await;
        }
        self.wait_leader().await;
    }

    /// Asserts that every running replica serves each written key at the revision its write
    /// was acknowledged with.
    pub async fn assert_written(&self, written: &[(String, u64)]) {
        for id in self.running() {
            let replica = self.replica(id);
            for (key, revision) in written {
                let kv = read(&replica, key)
                    .await
                    .unwrap_or_else(|| panic!("{key} lost on {id}"));
                assert_eq!(*revision, kv.mod_revision, "{key} on {id}");
            }
        }
    }

    /// Cuts replica `id` off from every other replica, both ways.
    pub fn isolate(&self, id: NodeId) {
        let mut cut = self.cut.lock().expect("lock");
        for other in self.urls.keys().filter(|o| **o != id) {
            cut.insert((id, *other));
            cut.insert((*other, id));
        }
    }

    /// Restores every link.
    pub fn heal(&self) {
        self.cut.lock().expect("lock").clear();
    }

    /// The data directory of replica `id`.
    pub fn data_dir(&self, id: NodeId) -> PathBuf {
        self.dir.path().join(format!("replica-{id}"))
    }

    /// The peer URL reserved for replica `id`.
    pub fn url(&self, id: NodeId) -> String {
        self.urls[&id].clone()
    }

    /// Replica `id`, which must be running.
    pub fn replica(&self, id: NodeId) -> Arc<Replica> {
        self.running[&id].replica.clone()
    }

    /// The running replicas' ids.
    pub fn running(&self) -> Vec<NodeId> {
        self.running.keys().copied().collect()
    }

    /// Waits until every running replica names the same running leader, and returns it.
    pub async fn wait_leader(&self) -> NodeId {
        self.wait_leader_among(&self.running()).await
    }

    /// Waits until the replicas `ids` name the same leader, one of them, and returns it.
    pub async fn wait_leader_among(&self, ids: &[NodeId]) -> NodeId {
        self.eventually("a leader the replicas agree on", || {
            let leaders: BTreeSet<Option<NodeId>> = ids
                .iter()
                .map(|id| self.running[id].replica.status().leader)
                .collect();
            match leaders.into_iter().collect::<Vec<_>>().as_slice() {
                [Some(id)] if ids.contains(id) => Some(*id),
                _ => None,
            }
        })
        .await
    }

    /// A running replica that is not the leader.
    pub async fn follower(&self) -> NodeId {
        let leader = self.wait_leader().await;
        self.running()
            .into_iter()
            .find(|id| *id != leader)
            .expect("a follower")
    }

    /// Polls `check` until it yields a value, failing the test after [`PATIENCE`].
    pub async fn eventually<T>(&self, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
        let start = tokio::time::Instant::now();
        loop {
            if let Some(value) = check() {
                return value;
            }
            assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The HTTP transport, except that calls over a cut link fail as if the peer were unreachable.
struct Partitionable {
    from: NodeId,
    urls: BTreeMap<String, NodeId>,
    cut: Arc<Mutex<BTreeSet<(NodeId, NodeId)>>>,
    inner: HttpTransport,
}

#[async_trait::async_trait]
impl Transport for Partitionable {
    async fn call(
        &self,
        target: &str,
        rpc: &str,
        body: Bytes,
        deadline: Duration,
    ) -> Result<Bytes, TransportError> {
        let to = self.urls.get(target).copied();
        let is_cut = to.is_some_and(|to| self.cut.lock().expect("lock").contains(&(self.from, to)));
        if is_cut {
            return Err(TransportError::Unreachable {
                target: target.to_string(),
                source: "link cut by the test".into(),
            });
        }
        self.inner.call(target, rpc, body, deadline).await
    }
}

/// A transaction that writes `value` at `key`.
pub fn put(key: &str, value: &str) -> Txn {
    Txn {
        compares: vec![],
        success: vec![Op::put(key, value.as_bytes().to_vec())],
        failure: vec![],
    }
}

/// A linearizable read of `key` on `replica`: read index, then the local store.
pub async fn read(replica: &Replica, key: &str) -> Option<KeyValue> {
    replica.read_index().await.expect("read index");
    replica.with_store(|s| s.get(key, None).expect("current revision is readable"))
}

//! Unknown write outcomes over a real three-replica cluster on loopback: the API router over
//! [`ReplicaStorage`] on the leader and on a follower, each replica's peer transport breakable
//! by the test. A write whose commit is not observed before the deadline (the leader's
//! replication answers lost, or the leader's answer to a forwarded write lost) is answered 504
//! without Retry-After and exists exactly once afterwards; a write no leader could take is
//! answered 503 with Retry-After and did not happen.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use apiary_api::ApiConfig;
use apiary_api::Flavor;
use apiary_api::Readiness;
use apiary_api::auth::ClientCertificate;
use apiary_api::bootstrap::ensure_system_namespaces;
use apiary_node::backend::ReplicaStorage;
use apiary_raft::network::HttpTransport;
use apiary_raft::network::Transport;
use apiary_raft::network::TransportError;
use apiary_raft::network::rpc;
use apiary_raft::replica::RaftTimings;
use apiary_raft::replica::Replica;
use apiary_raft::replica::ReplicaConfig;
use apiary_raft::replica::peer_router;
use apiary_raft::typ::NodeId;
use axum::Router;
use axum::body::Body;
use bytes::Bytes;
use http::Request;
use http::StatusCode;
use http::header;
use http_body_util::BodyExt;
use serde_json::Value;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tower::ServiceExt;

/// How long the cluster may take to elect a leader.
const PATIENCE: Duration = Duration::from_secs(10);

/// A fault of one replica's peer transport.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Forwarded writes cannot reach the leader: they are never delivered.
    ForwardUnreachable,
    /// Forwarded writes are delivered and served, but their answers never come back.
    ForwardAnswerLost,
    /// Replication carrying more than [`BIG_APPEND`] bytes is delivered, but its answers never
    /// come back; heartbeats and small appends get through.
    BigAppendAnswerLost,
}

/// An append larger than this carries the test's large ConfigMap.
const BIG_APPEND: usize = 4096;

/// What the transport does with one call.
enum Action {
    Pass,
    Refuse,
    LoseAnswer,
}

/// The plain HTTP peer transport, with a fault the test can switch on.
struct Faulty {
    inner: HttpTransport,
    fault: Arc<Mutex<Option<Fault>>>,
}

impl Faulty {
    fn action(&self, rpc: &str, body: &Bytes) -> Action {
        match (*self.fault.lock().unwrap(), rpc) {
            (Some(Fault::ForwardUnreachable), rpc::FORWARD_WRITE) => Action::Refuse,
            (Some(Fault::ForwardAnswerLost), rpc::FORWARD_WRITE) => Action::LoseAnswer,
            (Some(Fault::BigAppendAnswerLost), rpc::APPEND_ENTRIES) if body.len() > BIG_APPEND => {
                Action::LoseAnswer
            }
            _ => Action::Pass,
        }
    }
}

#[async_trait::async_trait]
impl Transport for Faulty {
    async fn call(
        &self,
        target: &str,
        rpc: &str,
        body: Bytes,
        deadline: Duration,
    ) -> Result<Bytes, TransportError> {
        match self.action(rpc, &body) {
            Action::Pass => self.inner.call(target, rpc, body, deadline).await,
            Action::Refuse => Err(TransportError::Unreachable {
                target: target.to_owned(),
                source: "link cut by the test".into(),
            }),
            Action::LoseAnswer => {
                let give_up = Instant::now() + deadline;
                let served = self.inner.call(target, rpc, body, deadline).await;
                assert!(served.is_ok(), "the peer served {rpc}: {served:?}");
                tokio::time::sleep_until(give_up).await;
                Err(TransportError::Timeout {
                    target: target.to_owned(),
                    rpc: rpc.to_owned(),
                    deadline,
                })
            }
        }
    }
}

/// These tests run no readiness checks.
struct AlwaysReady;

impl Readiness for AlwaysReady {
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Which replica's API a request goes to.
#[derive(Debug, Clone, Copy)]
enum Role {
    Leader,
    Follower,
}

/// Three replicas, the fault switches of their transports, and the APIs of the leader and of one
/// follower.
struct Cluster {
    _dir: tempfile::TempDir,
    replicas: BTreeMap<NodeId, Arc<Replica>>,
    servers: Vec<JoinHandle<()>>,
    faults: BTreeMap<NodeId, Arc<Mutex<Option<Fault>>>>,
    leader: NodeId,
    follower: NodeId,
    apis: BTreeMap<NodeId, Router>,
}

impl Cluster {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut listeners = BTreeMap::new();
        let mut urls = BTreeMap::new();
        for id in 1..=3 {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            urls.insert(id, format!("http://{}", listener.local_addr().unwrap()));
            listeners.insert(id, listener);
        }
        let timings = RaftTimings {
            heartbeat_interval: Duration::from_millis(50),
            election_timeout_min: Duration::from_millis(300),
            election_timeout_max: Duration::from_millis(600),
            install_snapshot_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(2),
        };
        let mut replicas = BTreeMap::new();
        let mut faults = BTreeMap::new();
        let mut servers = Vec::new();
        for (id, listener) in listeners {
            let fault = Arc::new(Mutex::new(None));
            let transport = Faulty {
                inner: HttpTransport::new(None),
                fault: fault.clone(),
            };
            let config = ReplicaConfig {
                id,
                data_dir: dir.path().join(format!("replica-{id}")),
                peer_url: urls[&id].clone(),
                initial_cluster: urls.clone(),
                join_existing: false,
                raft: timings.clone(),
                snapshot_logs_threshold: 1000,
            };
            let replica = Replica::start(config, Arc::new(transport)).await.unwrap();
            let router = peer_router(replica.clone());
            servers.push(tokio::spawn(async move {
                let _ = axum::serve(listener, router).await;
            }));
            replicas.insert(id, replica);
            faults.insert(id, fault);
        }
        let leader = wait_leader(&replicas).await;
        let follower = *replicas.keys().find(|id| **id != leader).unwrap();
        let mut apis = BTreeMap::new();
        for id in [leader, follower] {
            let storage = Arc::new(ReplicaStorage::new(replicas[&id].clone()));
            ensure_system_namespaces(
                storage.as_ref(),
                Flavor::Kubernetes,
                &apiary_api::SystemClock,
                &apiary_api::RandomSource::from_os_entropy(),
            )
            .await
            .unwrap();
            let config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
            apis.insert(id, apiary_api::router(storage, config));
        }
        Self {
            _dir: dir,
            replicas,
            servers,
            faults,
            leader,
            follower,
            apis,
        }
    }

    fn id(&self, role: Role) -> NodeId {
        match role {
            Role::Leader => self.leader,
            Role::Follower => self.follower,
        }
    }

    /// Switches the fault of the transport of the replica in `role`.
    fn set_fault(&self, role: Role, fault: Option<Fault>) {
        *self.faults[&self.id(role)].lock().unwrap() = fault;
    }

    /// POSTs a ConfigMap named by `generateName: prefix` and holding `data` to the API of the
    /// replica in `role`.
    async fn create_generated(
        &self,
        role: Role,
        prefix: &str,
        data: &str,
    ) -> (StatusCode, http::HeaderMap, Value) {
        let body = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"generateName": prefix},
            "data": {"k": data},
        });
        self.call(role, "POST", Body::from(body.to_string())).await
    }

    /// The names of the ConfigMaps in `default` starting with `prefix`, from a quorum read on
    /// the replica in `role`.
    async fn names(&self, role: Role, prefix: &str) -> Vec<String> {
        let (status, _, list) = self.call(role, "GET", Body::empty()).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|item| item["metadata"]["name"].as_str())
            .filter(|name| name.starts_with(prefix))
            .map(str::to_owned)
            .collect()
    }

    async fn call(
        &self,
        role: Role,
        method: &str,
        body: Body,
    ) -> (StatusCode, http::HeaderMap, Value) {
        let mut request = Request::builder()
            .method(method)
            .uri("/api/v1/namespaces/default/configmaps")
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .unwrap();
        request.extensions_mut().insert(admin());
        let api = self.apis[&self.id(role)].clone();
        let response = api.oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, headers, serde_json::from_slice(&bytes).unwrap())
    }

    async fn stop(self) {
        for replica in self.replicas.values() {
            replica.shutdown().await.unwrap();
        }
        for server in self.servers {
            server.abort();
        }
    }
}

/// A `system:masters` client certificate (the API trusts what TLS verified).
fn admin() -> ClientCertificate {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "admin");
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "system:masters");
    let key = rcgen::KeyPair::generate().unwrap();
    ClientCertificate::new(params.self_signed(&key).unwrap().der().to_vec())
}

/// Waits until every replica names the same leader, and returns it.
async fn wait_leader(replicas: &BTreeMap<NodeId, Arc<Replica>>) -> NodeId {
    let start = Instant::now();
    loop {
        let leaders: Vec<Option<NodeId>> = replicas.values().map(|r| r.status().leader).collect();
        if let Some(leader) = leaders[0]
            && leaders.iter().all(|l| *l == Some(leader))
        {
            return leader;
        }
        assert!(start.elapsed() < PATIENCE, "no leader: {leaders:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The expected answer to a write whose outcome is unknown: kube-apiserver's request timeout.
fn timeout_status() -> Value {
    json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
        "message":"Timeout: request did not complete within requested timeout - context deadline exceeded",
        "reason":"Timeout","details":{},"code":504})
}

// R-RES-236: a write the leader proposed and replicated, but whose commit it did not learn
// before the deadline (the followers' answers to its replication were lost), is answered with
// kube-apiserver's 504 Timeout and no invitation to retry; once the answers get through the
// write commits, and it exists exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_commit_the_leader_does_not_see_is_a_504_and_happens_once() {
    let cluster = Cluster::start().await;
    let big = "x".repeat(2 * BIG_APPEND);
    cluster.set_fault(Role::Leader, Some(Fault::BigAppendAnswerLost));
    let (status, headers, body) = cluster
        .create_generated(Role::Leader, "unseen-", &big)
        .await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{body}");
    assert_eq!(headers.get(header::RETRY_AFTER), None);
    assert_eq!(body, timeout_status());

    cluster.set_fault(Role::Leader, None);
    let start = Instant::now();
    let created = loop {
        let created = cluster.names(Role::Follower, "unseen-").await;
        if !created.is_empty() || start.elapsed() > PATIENCE {
            break created;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(cluster.names(Role::Leader, "unseen-").await, created);
    cluster.stop().await;
}

// R-RES-236: a forwarded write whose answer from the leader is lost (committed, but the
// follower does not observe it before its deadline) is answered with kube-apiserver's 504
// Timeout and no invitation to retry; it happened once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_commit_is_not_observed_is_a_504_and_happens_once() {
    let cluster = Cluster::start().await;
    cluster.set_fault(Role::Follower, Some(Fault::ForwardAnswerLost));
    let (status, headers, body) = cluster.create_generated(Role::Follower, "lost-", "v").await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{body}");
    assert_eq!(headers.get(header::RETRY_AFTER), None);
    assert_eq!(body, timeout_status());

    cluster.set_fault(Role::Follower, None);
    let created = cluster.names(Role::Follower, "lost-").await;
    assert_eq!(created.len(), 1, "{created:?}");
    cluster.stop().await;
}

// A write no leader could take was never proposed: 503 with Retry-After, and nothing stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_refused_before_proposing_is_a_503_with_retry_after() {
    let cluster = Cluster::start().await;
    cluster.set_fault(Role::Follower, Some(Fault::ForwardUnreachable));
    let (status, headers, body) = cluster
        .create_generated(Role::Follower, "refused-", "v")
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(headers[header::RETRY_AFTER], "1");
    assert_eq!(body["reason"], "ServiceUnavailable");
    assert_eq!(body["details"]["retryAfterSeconds"], 1);

    cluster.set_fault(Role::Follower, None);
    assert_eq!(
        cluster.names(Role::Follower, "refused-").await,
        Vec::<String>::new()
    );
    let (status, _, body) = cluster
        .create_generated(Role::Follower, "refused-", "v")
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(cluster.names(Role::Follower, "refused-").await.len(), 1);
    cluster.stop().await;
}

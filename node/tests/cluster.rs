//! An in-process cluster of three replicas, each started with [`apiary_node::run`] on real TLS
//! listeners on 127.0.0.1 (ports picked by the OS), reached over HTTPS with client
//! certificates the way a real client would.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use apiary_api::FeatureGates;
use apiary_api::WatchSettings;
use apiary_api::registry::RuntimeConfig;
use apiary_api::registry::allocator::ServiceRanges;
use apiary_node::Listeners;
use apiary_node::cli::FlavorName;
use apiary_node::cluster_gates::GateRecord;
use apiary_node::config::ApiTlsFiles;
use apiary_node::config::PeerTlsFiles;
use apiary_node::config::ServeConfig;
use apiary_node::config::ServiceAccountSettings;
use apiary_node::dev::DevPki;
use apiary_node::dev::PemPair;
use apiary_node::dev::node_name;
use apiary_node::drain::ShutdownSettings;
use apiary_raft::replica::RaftTimings;
use bytes::Bytes;
use http::Method;
use http::StatusCode;
use http_body_util::BodyExt;
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::ServerName;
use rustls::pki_types::pem::PemObject;
use serde_json::Value;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;
use tokio_util::sync::CancellationToken;

/// How long the cluster may take to elect a leader and create its namespaces.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

struct Cluster {
    dir: PathBuf,
    pki: DevPki,
    client_ca: PathBuf,
    initial_cluster: BTreeMap<u64, String>,
    api: Vec<SocketAddr>,
    peer: Vec<SocketAddr>,
    stops: Vec<CancellationToken>,
    replicas: Vec<JoinHandle<Result<(), apiary_node::NodeError>>>,
    /// The shutdown flags of replicas started from now on.
    shutdown: ShutdownSettings,
    /// The `--livez-grace-period` of replicas started from now on.
    livez_grace_period: Duration,
    /// The `--feature-gates` of replicas started from now on.
    feature_gates: FeatureGates,
    /// Whether replicas started from now on replace the cluster's gate record.
    gate_record: GateRecord,
}

async fn bind() -> Listeners {
    Listeners {
        api: TcpListener::bind("127.0.0.1:0").await.unwrap(),
        peer: TcpListener::bind("127.0.0.1:0").await.unwrap(),
    }
}

impl Cluster {
    /// Founds a cluster of `nodes` replicas (`pki` must hold certificates for every replica
    /// that will ever run).
    async fn start(dir: &Path, pki: DevPki, client_ca: &Path, nodes: usize) -> Self {
        Self::start_with(dir, pki, client_ca, nodes, ShutdownSettings::default()).await
    }

    /// [`Cluster::start`] with the given shutdown flags on every replica.
    async fn start_with(
        dir: &Path,
        pki: DevPki,
        client_ca: &Path,
        nodes: usize,
        shutdown: ShutdownSettings,
    ) -> Self {
        let mut listeners = Vec::new();
        for _ in 0..nodes {
            listeners.push(bind().await);
        }
        let mut cluster = Self {
            dir: dir.to_owned(),
            pki,
            client_ca: client_ca.to_owned(),
            initial_cluster: BTreeMap::new(),
            api: Vec::new(),
            peer: Vec::new(),
            stops: Vec::new(),
            replicas: Vec::new(),
            shutdown,
            livez_grace_period: Duration::ZERO,
            feature_gates: FeatureGates::default(),
            gate_record: GateRecord::Agree,
        };
        for (l, id) in listeners.iter().zip(1..) {
            let url = format!("https://{}", l.peer.local_addr().unwrap());
            cluster.initial_cluster.insert(id, url);
        }
        for listeners in listeners {
            cluster.spawn(listeners, false);
        }
        cluster
    }

    /// Starts one more replica with `--initial-cluster-state existing`.
    async fn join(&mut self) {
        let listeners = bind().await;
        let id = u64::try_from(self.replicas.len() + 1).unwrap();
        let url = format!("https://{}", listeners.peer.local_addr().unwrap());
        self.initial_cluster.insert(id, url);
        self.spawn(listeners, true);
    }

    fn spawn(&mut self, listeners: Listeners, join_existing: bool) {
        let i = self.replicas.len();
        let config = ServeConfig {
            name: node_name(i),
            id: u64::try_from(i + 1).unwrap(),
            data_dir: self.dir.join(node_name(i)),
            initial_cluster: self.initial_cluster.clone(),
            join_existing,
            api_tls: ApiTlsFiles {
                cert: self.pki.serving[i].cert_path.clone(),
                key: self.pki.serving[i].key_path.clone(),
                client_ca: Some(self.client_ca.clone()),
            },
            peer_tls: PeerTlsFiles {
                cert: self.pki.peer[i].cert_path.clone(),
                key: self.pki.peer[i].key_path.clone(),
                trusted_ca: self.pki.peer_ca.cert_path.clone(),
            },
            flavor: FlavorName::Kubernetes,
            // The library defaults: quick elections keep the failover tests short.
            raft: RaftTimings::default(),
            watch_history: Duration::from_secs(300),
            periodic_snapshots: None,
            watch: WatchSettings::default(),
            runtime_config: RuntimeConfig::default(),
            // One key for the cluster, made by the first replica's start.
            service_account_key: self.dir.join("service-account.key"),
            service_accounts: ServiceAccountSettings::new("https://apiary.test"),
            service_ranges: ServiceRanges::default(),
            max_object_bytes: apiary_api::DEFAULT_MAX_OBJECT_BYTES,
            admission: Default::default(),
            admission_config: Default::default(),
            feature_gates: self.feature_gates,
            feature_gate_warnings: Vec::new(),
            gate_record: self.gate_record,
            shutdown: self.shutdown,
            livez_grace_period: self.livez_grace_period,
            audit: Default::default(),
            token_auth: Default::default(),
            flow_control: Default::default(),
            metrics_exposure: apiary_api::metrics::Exposure::default(),
            bootstrap_token_auth: false,
            controllers: apiary_node::controllers::ControllerSelection::default(),
            jwt: None,
            request_header: None,
            authorization: Default::default(),
        };
        let stop = CancellationToken::new();
        self.api.push(listeners.api.local_addr().unwrap());
        self.peer.push(listeners.peer.local_addr().unwrap());
        self.replicas.push(tokio::spawn(apiary_node::run(
            config,
            listeners,
            stop.clone().cancelled_owned(),
        )));
        self.stops.push(stop);
    }

    /// Stops replica `index` gracefully and checks that it stopped cleanly.
    async fn stop_replica(&mut self, index: usize) {
        self.stops[index].cancel();
        let replica = &mut self.replicas[index];
        let result = tokio::time::timeout(Duration::from_secs(20), replica)
            .await
            .expect("replica stops in time")
            .unwrap();
        assert!(result.is_ok(), "{result:?}");
    }

    fn admin(&self) -> Arc<ClientConfig> {
        let admin = &self.pki.admin;
        client(
            &self.pki.ca,
            Some((admin.cert_pem.as_str(), admin.key_pem.as_str())),
        )
    }
}

/// A client trusting the dev CA, presenting `identity` if given.
fn client(ca: &PemPair, identity: Option<(&str, &str)>) -> Arc<ClientConfig> {
    apiary_node::tls::install_crypto_provider();
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca.cert_pem.as_bytes()).unwrap())
        .unwrap();
    let builder = ClientConfig::builder().with_root_certificates(roots);
    let mut config = match identity {
        Some((cert, key)) => builder
            .with_client_auth_cert(
                vec![CertificateDer::from_pem_slice(cert.as_bytes()).unwrap()],
                PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// One HTTP/1.1 request over a fresh TLS connection; `Err` when the connection or the TLS
/// handshake fails.
async fn call(
    tls: &Arc<ClientConfig>,
    addr: SocketAddr,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Result<(StatusCode, Value), String> {
    let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let server_name = ServerName::try_from("127.0.0.1").unwrap();
    let stream = TlsConnector::from(tls.clone())
        .connect(server_name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let bytes = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, addr.to_string())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(Full::new(bytes))
        .unwrap();
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    let value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    Ok((status, value))
}

async fn wait_ready(tls: &Arc<ClientConfig>, addr: SocketAddr) {
    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
    loop {
        if let Ok((StatusCode::OK, _)) = call(tls, addr, Method::GET, "/readyz", None).await {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{addr} not ready in time"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A CA outside the dev PKI and a client certificate it signed for `bob` in group `dev`.
fn second_ca_with_bob() -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "second-ca");
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
    let bob_key = rcgen::KeyPair::generate().unwrap();
    let mut bob = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    bob.distinguished_name = rcgen::DistinguishedName::new();
    bob.distinguished_name
        .push(rcgen::DnType::CommonName, "bob");
    bob.distinguished_name
        .push(rcgen::DnType::OrganizationName, "dev");
    bob.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let bob_cert = bob.signed_by(&bob_key, &ca).unwrap();
    (ca.pem(), bob_cert.pem(), bob_key.serialize_pem())
}

// R-HA-001, R-HA-003, R-HA-004, R-ACC-113, R-ACC-115, R-ACC-168: three replicas agree; a write
// through a follower commits through the leader and a most-recent read on another replica sees
// it; the admin certificate (CN=admin, O=system:masters) may do everything, a certificate from
// the second CA of the client CA bundle authenticates as its CN and is forbidden, one from an
// unknown CA fails the handshake; the peer listener admits only peer certificates.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_serve_the_api_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let pki = DevPki::load_or_generate(dir.path(), 3).unwrap();
    let (second_ca, bob_cert, bob_key) = second_ca_with_bob();
    let client_ca = dir.path().join("client-ca-bundle.crt");
    std::fs::write(&client_ca, format!("{}{second_ca}", pki.ca.cert_pem)).unwrap();
    let mut cluster = Cluster::start(dir.path(), pki.clone(), &client_ca, 3).await;
    let admin = cluster.admin();

    {
        tracing::info!("every replica becomes ready");
        for addr in &cluster.api {
            wait_ready(&admin, *addr).await;
        }
    }
    {
        tracing::info!("create through node-2, read through node-3");
        let configmap = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "demo"},
            "data": {"key": "value"},
        });
        let (status, created) = call(
            &admin,
            cluster.api[1],
            Method::POST,
            CONFIGMAPS,
            Some(&configmap),
        )
        .await
        .unwrap();
        assert_eq!(status, StatusCode::CREATED, "{created}");
        let (status, read) = call(
            &admin,
            cluster.api[2],
            Method::GET,
            &format!("{CONFIGMAPS}/demo"),
            None,
        )
        .await
        .unwrap();
        assert_eq!(status, StatusCode::OK, "{read}");
        assert_eq!(read["data"]["key"], "value");
        assert_eq!(
            read["metadata"]["resourceVersion"],
            created["metadata"]["resourceVersion"]
        );
    }
    {
        tracing::info!("client certificates: identities and trust");
        let bob = client(&pki.ca, Some((bob_cert.as_str(), bob_key.as_str())));
        let (status, body) = call(&bob, cluster.api[0], Method::GET, CONFIGMAPS, None)
            .await
            .unwrap();
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert!(
            body["message"].as_str().unwrap_or("").contains("\"bob\""),
            "{body}"
        );

        let anonymous = client(&pki.ca, None);
        let (status, _) = call(&anonymous, cluster.api[0], Method::GET, CONFIGMAPS, None)
            .await
            .unwrap();
        assert!(
            status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN,
            "{status}"
        );

        // The peer CA is not a client CA: its certificates are refused at the handshake.
        let impostor = client(
            &pki.ca,
            Some((pki.peer[0].cert_pem.as_str(), pki.peer[0].key_pem.as_str())),
        );
        let refused = call(
            &impostor,
            cluster.api[0],
            Method::GET,
            "/api/v1/namespaces",
            None,
        )
        .await;
        assert!(refused.is_err(), "{refused:?}");

        // The peer listener wants a certificate from the peer CA: the admin's is refused.
        let admin_at_peer = client(
            &pki.peer_ca,
            Some((pki.admin.cert_pem.as_str(), pki.admin.key_pem.as_str())),
        );
        let refused = call(&admin_at_peer, cluster.peer[0], Method::GET, "/", None).await;
        assert!(refused.is_err(), "{refused:?}");
    }
    {
        tracing::info!("graceful shutdown");
        for index in 0..3 {
            cluster.stop_replica(index).await;
        }
    }
}

/// The collection of config maps in `default`, which every test writes to.
// A gate that changes what is stored must agree on every replica: a replica started with
// another value than the cluster's refuses to start, naming the gate and both values; a gate
// that does not change what is stored may differ.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_whose_cluster_wide_gate_differs_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cluster, admin) = ready_cluster(dir.path(), 5, 3).await;
    (cluster.feature_gates, _) = FeatureGates::parse(["CBORServingAndStorage=true"]).unwrap();
    cluster.join().await;
    let refused = tokio::time::timeout(Duration::from_secs(60), &mut cluster.replicas[3])
        .await
        .expect("the replica refuses in time")
        .unwrap()
        .expect_err("the replica refuses to start");
    let message = apiary_node::error::error_chain(&refused);
    assert!(
        message.contains(
            "feature gate CBORServingAndStorage is true on this replica but false in the cluster"
        ),
        "{message}"
    );
    assert!(
        message.contains("--replace-cluster-feature-gates"),
        "{message}"
    );

    (cluster.feature_gates, _) = FeatureGates::parse(["APIResponseCompression=false"]).unwrap();
    cluster.join().await;
    wait_ready(&admin, cluster.api[4]).await;
    create_configmap(&admin, cluster.api[4], "agreed").await;

    for index in [0, 1, 2, 4] {
        cluster.stop_replica(index).await;
    }
}

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn configmap(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"key": name},
    })
}

/// Founds a cluster of `nodes` replicas trusting the dev CA for clients, with certificates for
/// `certified` replicas, and waits until every replica is ready; returns it with the admin's
/// client configuration.
async fn ready_cluster(dir: &Path, certified: usize, nodes: usize) -> (Cluster, Arc<ClientConfig>) {
    let pki = DevPki::load_or_generate(dir, certified).unwrap();
    let client_ca = pki.ca.cert_path.clone();
    let cluster = Cluster::start(dir, pki, &client_ca, nodes).await;
    let admin = cluster.admin();
    for addr in &cluster.api {
        wait_ready(&admin, *addr).await;
    }
    (cluster, admin)
}

/// Creates the config map `name` through `addr`; the answer must be 201 Created.
async fn create_configmap(tls: &Arc<ClientConfig>, addr: SocketAddr, name: &str) {
    let (status, body) = call(tls, addr, Method::POST, CONFIGMAPS, Some(&configmap(name)))
        .await
        .unwrap();
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// Reads the config map `name` through `addr`; the answer must be 200 OK.
async fn read_configmap(tls: &Arc<ClientConfig>, addr: SocketAddr, name: &str) {
    let path = format!("{CONFIGMAPS}/{name}");
    let (status, body) = call(tls, addr, Method::GET, &path, None).await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
}

// R-HA-011, R-HA-012: a 5-replica cluster keeps serving writes and most-recent reads with any
// two replicas down (here the first two, which may include the leader).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_replicas_serve_with_two_down() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cluster, admin) = ready_cluster(dir.path(), 5, 5).await;
    create_configmap(&admin, cluster.api[4], "before").await;

    cluster.stop_replica(0).await;
    cluster.stop_replica(1).await;

    // A new leader may have to be elected: retry the write until the deadline.
    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
    loop {
        let (status, body) = call(
            &admin,
            cluster.api[2],
            Method::POST,
            CONFIGMAPS,
            Some(&configmap("after")),
        )
        .await
        .unwrap();
        if status == StatusCode::CREATED {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{status} {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (status, list) = call(&admin, cluster.api[3], Method::GET, CONFIGMAPS, None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{list}");
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["after", "before"]);

    for index in 2..5 {
        cluster.stop_replica(index).await;
    }
}

// R-HA-001, R-HA-003: a replica started with `--initial-cluster-state existing` joins a running
// cluster, becomes ready and serves what was written before it joined, and writes through it
// commit through the leader.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_joins_a_running_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cluster, admin) = ready_cluster(dir.path(), 4, 3).await;
    create_configmap(&admin, cluster.api[0], "early").await;

    cluster.join().await;
    wait_ready(&admin, cluster.api[3]).await;
    read_configmap(&admin, cluster.api[3], "early").await;
    create_configmap(&admin, cluster.api[3], "late").await;
    read_configmap(&admin, cluster.api[1], "late").await;

    for index in 0..4 {
        cluster.stop_replica(index).await;
    }
}

// R-VER-037, R-VER-038, R-VER-046: a ready replica of a real cluster passes kube-apiserver's
// named checks; once it is told to stop, its `/readyz` fails on the `shutdown` check alone
// while it keeps serving requests for `--shutdown-delay-duration`, and the cluster keeps
// serving through the other replicas after it stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn readyz_fails_first_and_the_replica_serves_through_the_shutdown_delay() {
    const DELAY: Duration = Duration::from_secs(3);
    let dir = tempfile::tempdir().unwrap();
    let pki = DevPki::load_or_generate(dir.path(), 3).unwrap();
    let client_ca = pki.ca.cert_path.clone();
    let shutdown = ShutdownSettings {
        delay: DELAY,
        send_retry_after: false,
        watch_termination_grace: Duration::ZERO,
    };
    let mut cluster = Cluster::start_with(dir.path(), pki, &client_ca, 3, shutdown).await;
    let admin = cluster.admin();
    for addr in &cluster.api {
        wait_ready(&admin, *addr).await;
    }
    let stopping = cluster.api[0];
    let (status, verbose) = call(&admin, stopping, Method::GET, "/readyz?verbose", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        verbose,
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n\
         [+]poststarthook/start-system-namespaces-controller ok\n\
         [+]poststarthook/bootstrap-controller ok\n\
         [+]poststarthook/priority-and-fairness-config-producer ok\n[+]shutdown ok\n\
         readyz check passed\n"
    );

    cluster.stops[0].cancel();
    let started = tokio::time::Instant::now();
    let deadline = started + DELAY / 2;
    let readyz = loop {
        let (status, body) = call(&admin, stopping, Method::GET, "/readyz?verbose", None)
            .await
            .unwrap();
        if status != StatusCode::OK {
            break body;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "/readyz still passes"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        readyz,
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n\
         [+]poststarthook/start-system-namespaces-controller ok\n\
         [+]poststarthook/bootstrap-controller ok\n\
         [+]poststarthook/priority-and-fairness-config-producer ok\n\
         [-]shutdown failed: reason withheld\nreadyz check failed\n"
    );
    // Liveness is not readiness: the stopping replica is still alive, and it still serves.
    let (live, _) = call(&admin, stopping, Method::GET, "/livez", None)
        .await
        .unwrap();
    assert_eq!(live, StatusCode::OK);
    create_configmap(&admin, stopping, "during-delay").await;
    assert!(
        tokio::time::Instant::now() < started + DELAY,
        "the checks above ran within the delay"
    );

    let replica = &mut cluster.replicas[0];
    tokio::time::timeout(Duration::from_secs(20), replica)
        .await
        .expect("replica stops in time")
        .unwrap()
        .unwrap();
    assert!(started.elapsed() >= DELAY, "served for the whole delay");
    assert!(
        call(&admin, stopping, Method::GET, "/readyz", None)
            .await
            .is_err()
    );

    // The other two keep the cluster serving.
    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
    loop {
        let body = configmap("after-stop");
        let (status, body) = call(
            &admin,
            cluster.api[1],
            Method::POST,
            CONFIGMAPS,
            Some(&body),
        )
        .await
        .unwrap();
        if status == StatusCode::CREATED {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{status} {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    read_configmap(&admin, cluster.api[2], "during-delay").await;
    for index in 1..3 {
        cluster.stop_replica(index).await;
    }
}

// R-VER-036, R-VER-045, R-VER-046: replicas of a five-member cluster of which only two run
// never finish their start-up steps (no quorum, no leader): both are alive as far as raft goes
// (`etcd`) and neither is ready; within its `--livez-grace-period` the first one's `/livez`
// passes the unfinished `poststarthook/...` checks, while the second's, without a grace period,
// fails on them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn livez_passes_unfinished_start_up_steps_within_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let pki = DevPki::load_or_generate(dir.path(), 5).unwrap();
    let client_ca = pki.ca.cert_path.clone();
    let mut listeners = Vec::new();
    for _ in 0..5 {
        listeners.push(bind().await);
    }
    let mut cluster =
        Cluster::start_with(dir.path(), pki, &client_ca, 0, ShutdownSettings::default()).await;
    for (l, id) in listeners.iter().zip(1..) {
        let url = format!("https://{}", l.peer.local_addr().unwrap());
        cluster.initial_cluster.insert(id, url);
    }
    let mut listeners = listeners.into_iter();
    cluster.livez_grace_period = Duration::from_secs(3600);
    cluster.spawn(listeners.next().unwrap(), false);
    cluster.livez_grace_period = Duration::ZERO;
    cluster.spawn(listeners.next().unwrap(), false);
    let admin = cluster.admin();

    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
    let failing = loop {
        // The listener answers once the replica has started.
        if let Ok((StatusCode::INTERNAL_SERVER_ERROR, body)) =
            call(&admin, cluster.api[1], Method::GET, "/livez?verbose", None).await
        {
            break body;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no answer from /livez"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        failing,
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n\
         [-]poststarthook/start-system-namespaces-controller failed: reason withheld\n\
         [-]poststarthook/bootstrap-controller failed: reason withheld\n\
         [-]poststarthook/priority-and-fairness-config-producer failed: reason withheld\n\
         livez check failed\n"
    );
    let (status, graced) = call(&admin, cluster.api[0], Method::GET, "/livez?verbose", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{graced}");
    for addr in &cluster.api {
        let (status, _) = call(&admin, *addr, Method::GET, "/readyz", None)
            .await
            .unwrap();
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    }
    for index in 0..2 {
        cluster.stop_replica(index).await;
    }
}

/// The value of the first sample `name` in `scrape` whose labels include `labels`: a counter's
/// or gauge's value, a histogram's count.
fn sample(scrape: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    scrape
        .samples
        .iter()
        .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match &s.value {
            prometheus_parse::Value::Histogram(buckets) => buckets.last().unwrap().count,
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => *v,
            prometheus_parse::Value::Summary(_) => f64::NAN,
        })
}

// The store's metrics on real replicas, under etcd's names: every replica knows a leader and
// counts the committed and applied writes, times its log's fsyncs and its applies; the one
// leader reports each follower's lag and its round trips to them; a follower's most-recent
// read times its read index; every replica's object counts follow the creates and deletes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn store_metrics_report_raft_on_every_replica() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cluster, admin) = ready_cluster(dir.path(), 3, 3).await;
    for i in 0..6 {
        create_configmap(&admin, cluster.api[i % 3], &format!("m{i}")).await;
    }
    for addr in cluster.api.clone() {
        read_configmap(&admin, addr, "m0").await;
    }
    let mut leaders = Vec::new();
    for (index, addr) in cluster.api.clone().into_iter().enumerate() {
        let (status, body) = call(&admin, addr, Method::GET, "/metrics", None)
            .await
            .unwrap();
        assert_eq!(status, StatusCode::OK);
        let text = body.as_str().unwrap();
        let scrape =
            prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
        let value = |name: &str| {
            sample(&scrape, name, &[]).unwrap_or_else(|| panic!("{name} missing on {index}"))
        };
        assert_eq!(value("etcd_server_has_leader"), 1.0);
        assert!(value("etcd_server_leader_changes_seen_total") >= 1.0);
        assert!(value("apiary_raft_term") >= 1.0);
        let committed = value("etcd_server_proposals_committed_total");
        assert!(committed >= 6.0, "{committed}");
        assert_eq!(value("apiary_raft_commit_index"), committed);
        assert!(value("etcd_server_proposals_applied_total") >= 6.0);
        assert!(value("etcd_disk_wal_fsync_duration_seconds") >= 1.0);
        assert!(value("etcd_disk_backend_commit_duration_seconds") >= 6.0);
        assert!(value("apiary_raft_read_index_duration_seconds") >= 1.0);
        assert_eq!(
            scrape
                .docs
                .get("etcd_disk_wal_fsync_duration_seconds")
                .map(String::as_str),
            Some("[ALPHA] The latency distributions of fsync called by WAL.")
        );
        if value("etcd_server_is_leader") == 1.0 {
            leaders.push(index);
            let followers: Vec<String> = (1..=3u64)
                .filter(|id| *id != u64::try_from(index + 1).unwrap())
                .map(|id| id.to_string())
                .collect();
            for follower in &followers {
                let lag = [("follower", follower.as_str())];
                assert!(sample(&scrape, "apiary_raft_replication_lag_entries", &lag).is_some());
                let to = [("To", follower.as_str())];
                let trips = sample(&scrape, "etcd_network_peer_round_trip_time_seconds", &to);
                assert!(trips.is_some_and(|n| n >= 1.0), "{follower}: {trips:?}");
            }
        } else {
            assert_eq!(value("etcd_server_proposals_pending"), 0.0);
        }
    }
    assert_eq!(leaders.len(), 1, "{leaders:?}");

    // Object counts follow the applied creates and deletes on every replica.
    let path = format!("{CONFIGMAPS}/m5");
    let (status, _) = call(&admin, cluster.api[0], Method::DELETE, &path, None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    // The controllers may still publish a ConfigMap (kube-root-ca.crt) into a
    // namespace, so each try compares against the collection as it is then.
    let configmaps = [("group", ""), ("resource", "configmaps")];
    for addr in cluster.api.clone() {
        let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
        loop {
            let (_, all) = call(&admin, addr, Method::GET, "/api/v1/configmaps", None)
                .await
                .unwrap();
            let items = all["items"].as_array().unwrap();
            assert!(items.iter().all(|item| item["metadata"]["name"] != "m5"));
            let stored = f64::from(u32::try_from(items.len()).unwrap());
            let (_, body) = call(&admin, addr, Method::GET, "/metrics", None)
                .await
                .unwrap();
            let text = body.as_str().unwrap();
            let scrape =
                prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
            let count = sample(&scrape, "apiserver_resource_objects", &configmaps);
            if count == Some(stored) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{count:?} != {stored}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    for index in 0..3 {
        cluster.stop_replica(index).await;
    }
}

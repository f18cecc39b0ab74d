//! [`SimCluster`]: a turmoil simulation with one host per replica, seeded from one number. Each
//! host runs the node crate's own wiring ([`run_host`], as `apiary serve` does: replica, peer
//! router, resource API, bootstrap, readiness, token signer, compactor) on simulated sockets
//! without TLS, with raft on the host's one thread, the host's [`VirtualClock`], a
//! [`RandomSource`] seeded from the cluster's seed, and two sim-only additions plugged into
//! its seams: the planted bug around the API's storage and the status endpoint beside the API.
//!
//! The raft log and the snapshots of each replica live on its host's [`SimDisk`], under
//! `/data/replica-<id>`: nothing touches the machine's disk.
//!
//! Hosts are named `replica-<id>` (ids from 1, as `--initial-cluster` numbers them); peers reach
//! each other at `http://replica-<id>:7000`; clients use the resource API, and the status
//! endpoint beside it, at `http://replica-<id>:6443`.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::SystemTime;

use apiary_api::DEFAULT_MAX_OBJECT_BYTES;
use apiary_api::FeatureGates;
use apiary_api::RandomSource;
use apiary_api::RsaTokenSigner;
use apiary_api::TokenSignError;
use apiary_api::WatchSettings;
use apiary_api::auth::ClientCertificate;
use apiary_api::metrics::Exposure;
use apiary_api::registry::RuntimeConfig;
use apiary_api::registry::allocator::ServiceRanges;
use apiary_node::cluster_gates::GateRecord;
use apiary_node::controllers::ControllerSelection;
use apiary_node::controllers::root_ca_publisher;
use apiary_node::drain::ShutdownSettings;
use apiary_node::wiring::HostConfig;
use apiary_node::wiring::HostParts;
use apiary_node::wiring::LogParts;
use apiary_node::wiring::RaftPlacement;
use apiary_node::wiring::Sockets;
use apiary_node::wiring::run_host;
use apiary_raft::log::WriterMode;
use apiary_raft::replica::RaftTimings;
use apiary_raft::replica::ReplicaConfig;
use apiary_raft::typ::NodeId;
use apiary_raft::version::PROTOCOL_VERSION;
use apiary_raft::version::ProtocolRange;
use turmoil::Sim;

use crate::clock::VirtualClock;
use crate::disk::SimDisk;
use crate::fault::HostFault;
use crate::net::SimListener;
use crate::net::SimTransport;
use crate::planted::PlantedBug;
use crate::planted::planted;
use crate::resource_api;
use crate::resource_api::API_PORT;
use crate::resource_api::BOOKMARK_INTERVAL;
use crate::resource_api::FLAVOR;
use crate::status_api::status_router;
use apiary_raft::state_machine::Backup;
use apiary_raft::state_machine::RestoreTarget;
use apiary_raft::state_machine::restore_on;

/// The port every replica host serves the peer RPCs on.
pub const PEER_PORT: u16 = 7000;

/// Where replica data lives on each host's [`SimDisk`].
const DATA_ROOT: &str = "/data";

/// The history every replica keeps unless a scenario asks for less (`--watch-history`'s
/// default): scenarios run for less virtual time than this, so the compactor only samples.
const WATCH_HISTORY: Duration = Duration::from_secs(300);

/// Seconds from the Unix epoch to the simulation's start: a fixed instant, so that nothing
/// derived from wall-clock time differs between two runs of one seed.
const EPOCH_SECS: u64 = 1_767_225_600;

/// The host name of replica `id`.
pub fn replica_host(id: NodeId) -> String {
    format!("replica-{id}")
}

/// The resource API base URL of the replica host `host`.
pub fn api_url(host: &str) -> String {
    format!("http://{host}:{API_PORT}")
}

/// The status endpoint base URL of the replica host `host`: it is served beside the resource
/// API.
pub fn status_url(host: &str) -> String {
    api_url(host)
}

fn peer_url(id: NodeId) -> String {
    format!("http://{}:{PEER_PORT}", replica_host(id))
}

/// Why a cluster could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The clients' certificate could not be generated.
    #[error("generating the client certificate failed")]
    Certificate(#[source] rcgen::Error),
    /// The service account signing key is unusable.
    #[error("the service account signing key is unusable")]
    SigningKey(#[source] TokenSignError),
}

/// How a simulated cluster is built.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// Seeds turmoil's RNG (latencies, host order) and, through it, each host's tokio runtime.
    pub seed: u64,
    /// How many replicas (3 or 5).
    pub replicas: u64,
    /// Virtual time after which the run fails as stuck.
    pub duration: Duration,
    /// Raft timings of every replica.
    pub timings: RaftTimings,
    /// Snapshot every this many applied entries.
    pub snapshot_logs_threshold: u64,
    /// Upper bound of one message's latency on a link.
    pub max_latency: Duration,
    /// How much MVCC history every replica's compactor keeps (`--watch-history`); a watch
    /// resuming from further back gets a 410.
    pub watch_history: Duration,
    /// How long a watch without `timeoutSeconds` runs at least (`--min-request-timeout`; the
    /// server ends it after a random time between this and twice this).
    pub min_request_timeout: Duration,
    /// A bug built into every replica on purpose (see [`crate::planted`]); from the thread's
    /// [`crate::planted::with_planted`] scope, `None` outside one.
    pub planted: Option<PlantedBug>,
    /// The newest peer protocol the founding replicas speak when they first start: an older
    /// one plays a cluster of an older build ([`HostFault::Protocol`] changes it per host).
    /// Replicas added mid-run speak the current protocol (a newer build joining).
    pub protocol: u32,
}

impl ClusterOptions {
    /// Three replicas with production raft timings and a LAN's latencies.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            replicas: 3,
            duration: Duration::from_secs(120),
            timings: RaftTimings::default(),
            snapshot_logs_threshold: 10_000,
            max_latency: Duration::from_millis(10),
            watch_history: WATCH_HISTORY,
            min_request_timeout: WatchSettings::default().min_request_timeout,
            planted: planted(),
            protocol: PROTOCOL_VERSION,
        }
    }
}

/// A built simulation of a cluster, ready for client hosts and then [`Sim::run`].
pub struct SimCluster<'a> {
    sim: Sim<'a>,
    hosts: Vec<String>,
    /// Client hosts added with [`SimCluster::client`].
    clients: Vec<String>,
    /// Each replica host's disk, by host name.
    disks: BTreeMap<String, SimDisk>,
    /// Each replica host's wall clock, by host name.
    clocks: BTreeMap<String, VirtualClock>,
    /// The newest peer protocol each replica host's software speaks at its next start.
    protocols: BTreeMap<String, Arc<AtomicU32>>,
    /// Replica hosts crashed and not restarted: cut off from every host, also from those added
    /// later.
    crashed: BTreeSet<String>,
    /// What the cluster was built from, for replicas added mid-run.
    options: ClusterOptions,
    /// The clients' identity every resource API accepts.
    identity: ClientCertificate,
    /// Signs every replica's service account tokens.
    token_signer: Arc<RsaTokenSigner>,
}

impl<'a> SimCluster<'a> {
    /// Registers one host per replica in a new simulation seeded with `options.seed`.
    pub fn build(options: &ClusterOptions) -> Result<Self, ClusterError> {
        let identity = resource_api::client_certificate().map_err(ClusterError::Certificate)?;
        let token_signer =
            Arc::new(resource_api::token_signer().map_err(ClusterError::SigningKey)?);
        let sim = turmoil::Builder::new()
            .rng_seed(options.seed)
            .epoch(SystemTime::UNIX_EPOCH + Duration::from_secs(EPOCH_SECS))
            .simulation_duration(options.duration)
            .min_message_latency(Duration::from_millis(1))
            .max_message_latency(options.max_latency)
            .tcp_capacity(1024)
            .build();
        let mut cluster = Self {
            sim,
            hosts: Vec::new(),
            clients: Vec::new(),
            disks: BTreeMap::new(),
            clocks: BTreeMap::new(),
            protocols: BTreeMap::new(),
            crashed: BTreeSet::new(),
            options: options.clone(),
            identity,
            token_signer,
        };
        let ids: Vec<NodeId> = (1..=options.replicas).collect();
        for id in &ids {
            cluster.add_replica(*id, &ids, false);
        }
        Ok(cluster)
    }

    /// Registers the host of replica `id`, founding the cluster of `members` or, with
    /// `join_existing`, asking them to admit it (a host added mid-run).
    fn add_replica(&mut self, id: NodeId, members: &[NodeId], join_existing: bool) {
        let host = replica_host(id);
        let config = ReplicaConfig {
            id,
            data_dir: Path::new(DATA_ROOT).join(&host),
            peer_url: peer_url(id),
            initial_cluster: members.iter().map(|id| (*id, peer_url(*id))).collect(),
            join_existing,
            raft: self.options.timings.clone(),
            snapshot_logs_threshold: self.options.snapshot_logs_threshold,
        };
        // The disk outlives the host's software, so a restarted replica finds its log.
        let disk = SimDisk::new();
        self.disks.insert(host.clone(), disk.clone());
        // So is the clock: a skew outlasts a restart, as a machine's clock would.
        let clock = VirtualClock::default();
        self.clocks.insert(host.clone(), clock.clone());
        let newest = if join_existing {
            PROTOCOL_VERSION
        } else {
            self.options.protocol
        };
        let protocol = Arc::new(AtomicU32::new(newest));
        self.protocols.insert(host.clone(), protocol.clone());
        let software = HostSoftware {
            protocol,
            name: host.clone(),
            replica: config,
            identity: self.identity.clone(),
            token_signer: self.token_signer.clone(),
            clock,
            seed: self.options.seed ^ (id << 48),
            boots: Arc::default(),
            watch_history: self.options.watch_history,
            min_request_timeout: self.options.min_request_timeout,
            planted: self.options.planted,
        };
        self.sim.host(host.as_str(), move || {
            run_replica(software.clone(), disk.clone())
        });
        // A powered-off machine answers no new neighbour either (turmoil would otherwise hold
        // a connection to it until the caller's deadline).
        for crashed in &self.crashed {
            self.sim.partition(host.as_str(), crashed.as_str());
        }
        self.hosts.push(host);
    }

    /// The replica host names, by id (also those added mid-run).
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// The simulation, to add clients, inject faults and run.
    pub fn sim(&mut self) -> &mut Sim<'a> {
        &mut self.sim
    }

    /// Adds a client host running `work`.
    pub fn client<F>(&mut self, name: &str, work: F)
    where
        F: std::future::Future<Output = turmoil::Result> + 'static,
    {
        self.sim.client(name, work);
        self.clients.push(name.to_owned());
    }

    /// Every host but `host`.
    fn others(&self, host: &str) -> Vec<String> {
        self.hosts
            .iter()
            .chain(&self.clients)
            .filter(|other| *other != host)
            .cloned()
            .collect()
    }

    /// Applies a host fault (between two steps of the simulation).
    ///
    /// A crashed host is cut off from every other host until it restarts, and its restart
    /// repairs all of its links (also any a scenario cut before the crash). A machine that
    /// loses power sends nothing; and tokio drops a dying runtime's tasks in an order that
    /// depends on process-wide task ids, so the goodbyes its sockets would send (and the
    /// latencies turmoil would draw for them) would differ between two runs of a seed in one
    /// process.
    pub fn apply(&mut self, fault: &HostFault) {
        match fault {
            HostFault::Crash(host) => {
                // The disk first: whatever the dying software still does while its tasks are
                // dropped must not reach the disk the restarted replica will use.
                if let Some(disk) = self.disks.get(host) {
                    disk.crash();
                }
                for other in self.others(host) {
                    self.sim.partition(host.as_str(), other.as_str());
                }
                self.sim.crash(host.as_str());
                self.crashed.insert(host.clone());
            }
            HostFault::Restart(host) => {
                self.crashed.remove(host);
                for other in self.others(host) {
                    self.sim.repair(host.as_str(), other.as_str());
                }
                self.sim.bounce(host.as_str());
            }
            HostFault::Restore {
                host,
                backup,
                members,
                revision_floor,
            } => self.restore(host, &backup.0, members, *revision_floor),
            HostFault::Join { id, members } => self.add_replica(*id, members, true),
            HostFault::Latency { host, max } => {
                for other in self.others(host) {
                    self.sim
                        .set_link_max_message_latency(host.as_str(), other.as_str(), *max);
                }
            }
            HostFault::Loss { host, rate } => {
                for other in self.others(host) {
                    self.sim
                        .set_link_fail_rate(host.as_str(), other.as_str(), *rate);
                }
            }
            HostFault::ClockSkew { host, offset } => {
                if let Some(clock) = self.clocks.get(host) {
                    clock.skew(*offset);
                }
            }
            HostFault::Protocol { host, newest } => {
                if let Some(protocol) = self.protocols.get(host) {
                    protocol.store(*newest, Ordering::Relaxed);
                }
            }
        }
    }
}

impl SimCluster<'_> {
    /// Wipes `host`'s disk and writes the restore of `backup` for the cluster of `members`
    /// into its data directory. A backup that does not decode or restore leaves the disk empty
    /// (logged): the host then fails to start and the scenario's checks fail.
    fn restore(&mut self, host: &str, backup: &[u8], members: &[NodeId], revision_floor: u64) {
        let Some(disk) = self.disks.get(host) else {
            return;
        };
        disk.wipe();
        let target = RestoreTarget {
            members: members.iter().map(|id| (*id, peer_url(*id))).collect(),
            revision_floor,
            cluster_id: "restored".to_owned(),
        };
        let restored = Backup::decode(backup)
            .map_err(|e| e.to_string())
            .and_then(|backup| {
                let data_dir = Path::new(DATA_ROOT).join(host);
                restore_on(Arc::new(disk.mount()), &backup, &data_dir, &target)
                    .map_err(|e| e.to_string())
            });
        match restored {
            Ok(floor) => tracing::info!(host, floor, "data directory restored from a backup"),
            Err(error) => tracing::error!(host, %error, "restore failed"),
        }
    }
}

/// What a replica host's software is made of, besides its disk.
#[derive(Clone)]
struct HostSoftware {
    /// The host name (the replica's name in logs).
    name: String,
    /// The raft replica.
    replica: ReplicaConfig,
    /// The newest peer protocol the software speaks (read at each start).
    protocol: Arc<AtomicU32>,
    /// The client identity every API request carries.
    identity: ClientCertificate,
    /// Signs service account tokens.
    token_signer: Arc<RsaTokenSigner>,
    /// The host's wall clock, which the API stamps into objects.
    clock: VirtualClock,
    /// The host's share of the cluster's seed; each boot seeds its randomness from it and the
    /// boot's number, so a restarted replica draws no uid it drew before.
    seed: u64,
    /// How often the host's software has started (shared by the host's boots).
    boots: Arc<AtomicU64>,
    /// How much history the compactor keeps.
    watch_history: Duration,
    /// The API's shortest server-side watch timeout.
    min_request_timeout: Duration,
    /// A bug built into the API's storage on purpose.
    planted: Option<PlantedBug>,
}

/// One replica host's software: bind, then run the node's wiring on the host's simulated
/// sockets, disk and clock, with raft on the host's thread, until the host is crashed.
async fn run_replica(software: HostSoftware, disk: SimDisk) -> turmoil::Result {
    // Bind before starting, so peers that already run find the ports open.
    let peer = SimListener::bind(PEER_PORT).await?;
    let api = SimListener::bind(API_PORT).await?;
    let boot = software.boots.fetch_add(1, Ordering::Relaxed);
    let config = HostConfig {
        name: software.name,
        replica: software.replica,
        flavor: FLAVOR,
        watch_history: software.watch_history,
        periodic_snapshots: None,
        watch: WatchSettings {
            bookmark_interval: BOOKMARK_INTERVAL,
            min_request_timeout: software.min_request_timeout,
        },
        runtime_config: RuntimeConfig::default(),
        token_signer: software.token_signer,
        authentication: Default::default(),
        issuer_discovery: None,
        service_ranges: ServiceRanges::default(),
        max_object_bytes: DEFAULT_MAX_OBJECT_BYTES,
        admission: Default::default(),
        admission_config: Default::default(),
        feature_gates: FeatureGates::default(),
        gate_record: GateRecord::Agree,
        protocol: ProtocolRange::capped(software.protocol.load(Ordering::Relaxed)),
        shutdown: ShutdownSettings::default(),
        livez_grace_period: Duration::ZERO,
        audit: Default::default(),
        flow_control: Default::default(),
        metrics_exposure: Exposure::default(),
        bootstrap_token_auth: false,
        // The workload owns every ConfigMap of its namespace (its checkers read them all as
        // its writes), so the controller that publishes `kube-root-ca.crt` there stays off.
        controllers: ControllerSelection::parse(&[
            "*".to_owned(),
            format!("-{}", root_ca_publisher::NAME),
        ])
        .expect("known controllers"),
        root_ca: std::sync::Arc::from(""),
        jwt: None,
        authorization: Default::default(),
    };
    let parts = HostParts {
        sockets: Sockets::Plain {
            api,
            peer,
            identity: software.identity,
        },
        transport: Arc::new(SimTransport),
        // The disk is memory, so the writer never blocks: as a task it stays inside virtual
        // time.
        log: LogParts {
            fs: Arc::new(disk.mount()),
            writer: WriterMode::Task,
        },
        clock: Arc::new(software.clock),
        random: RandomSource::seeded(software.seed ^ (boot << 32)),
        raft: RaftPlacement::Current,
        storage_layer: software
            .planted
            .map(|bug| Box::new(move |storage| bug.plant(storage)) as _),
        extra_routes: Some(Box::new(status_router)),
    };
    // Never shut down gracefully: the host's tasks end when it is crashed.
    run_host(config, parts, std::future::pending()).await?;
    Ok(())
}

//! [`SimCluster`]: a turmoil simulation with one host per replica, each running the real
//! [`Replica`] with its peer router, the resource API and a status endpoint on simulated
//! sockets, seeded from one number.
//!
//! The raft log and the snapshots of each replica live on its host's [`SimDisk`], under
//! `/data/replica-<id>`: nothing touches the machine's disk.
//!
//! Hosts are named `replica-<id>` (ids from 1, as `--initial-cluster` numbers them); peers reach
//! each other at `http://replica-<id>:7000`; clients use the resource API at
//! `http://replica-<id>:6443` and the status endpoint at `http://replica-<id>:8000`.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::future::IntoFuture;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use std::time::SystemTime;

use apiary_raft::log::LogOptions;
use apiary_raft::log::LogStore;
use apiary_raft::log::WriterMode;
use apiary_raft::replica::RaftTimings;
use apiary_raft::replica::Replica;
use apiary_raft::replica::ReplicaConfig;
use apiary_raft::replica::peer_router;
use apiary_raft::typ::NodeId;
use turmoil::Sim;

use apiary_api::auth::ClientCertificate;
use apiary_node::compactor::run_compactor;
use tokio_util::sync::CancellationToken;

use crate::clock::VirtualClock;
use crate::disk::SimDisk;
use crate::fault::HostFault;
use crate::net::SimListener;
use crate::net::SimTransport;
use crate::planted::PlantedBug;
use crate::planted::planted;
use crate::resource_api;
use crate::resource_api::API_PORT;
use crate::status_api::STATUS_PORT;
use crate::status_api::status_router;

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

/// The status endpoint base URL of the replica host `host`.
pub fn status_url(host: &str) -> String {
    format!("http://{host}:{STATUS_PORT}")
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
    /// A bug built into every replica on purpose (see [`crate::planted`]); from the thread's
    /// [`crate::planted::with_planted`] scope, `None` outside one.
    pub planted: Option<PlantedBug>,
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
            planted: planted(),
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
    /// Replica hosts crashed and not restarted: cut off from every host, also from those added
    /// later.
    crashed: BTreeSet<String>,
    /// What the cluster was built from, for replicas added mid-run.
    options: ClusterOptions,
    /// The clients' identity every resource API accepts.
    identity: ClientCertificate,
}

impl<'a> SimCluster<'a> {
    /// Registers one host per replica in a new simulation seeded with `options.seed`.
    pub fn build(options: &ClusterOptions) -> Result<Self, ClusterError> {
        let identity = resource_api::client_certificate().map_err(ClusterError::Certificate)?;
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
            crashed: BTreeSet::new(),
            options: options.clone(),
            identity,
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
        let software = ApiSoftware {
            identity: self.identity.clone(),
            clock,
            watch_history: self.options.watch_history,
            planted: self.options.planted,
        };
        self.sim.host(host.as_str(), move || {
            run_replica(config.clone(), disk.clone(), software.clone())
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
        }
    }
}

/// What a replica host runs besides the replica: how its resource API and compactor are set up.
#[derive(Clone)]
struct ApiSoftware {
    /// The client identity every API request carries.
    identity: ClientCertificate,
    /// The host's wall clock, which the API stamps into objects.
    clock: VirtualClock,
    /// How much history the compactor keeps.
    watch_history: Duration,
    /// A bug built into the API's storage on purpose.
    planted: Option<PlantedBug>,
}

/// One replica host's software: bind, open the log on the host's simulated disk, start the
/// replica, serve the peer RPCs, the resource API and the status endpoint, and compact, until
/// the host is crashed.
async fn run_replica(
    config: ReplicaConfig,
    disk: SimDisk,
    software: ApiSoftware,
) -> turmoil::Result {
    // Bind before starting, so peers that already run find the ports open.
    let peer_listener = SimListener::bind(PEER_PORT).await?;
    let api_listener = SimListener::bind(API_PORT).await?;
    let status_listener = SimListener::bind(STATUS_PORT).await?;
    let mount = Arc::new(disk.mount());
    // The disk is memory, so the writer never blocks: as a task it stays inside virtual time.
    let options = LogOptions {
        fs: mount.clone(),
        writer: WriterMode::Task,
        ..LogOptions::default()
    };
    // Opening blocks, but only on memory: no reason to leave the host's thread.
    let log = LogStore::open(config.data_dir.join("log"), options)?;
    let replica = Replica::start_with_storage(config, Arc::new(SimTransport), log, mount).await?;
    let peer = axum::serve(peer_listener, peer_router(Arc::clone(&replica)));
    let api = axum::serve(
        api_listener,
        resource_api::serve_router(
            &replica,
            software.identity,
            software.clock,
            software.planted,
        ),
    );
    // Never cancelled: the compactor ends when the host is crashed, with the host's tasks.
    let compactor = run_compactor(
        Arc::clone(&replica),
        software.watch_history,
        CancellationToken::new(),
    );
    let status = axum::serve(status_listener, status_router(replica));
    tokio::try_join!(
        peer.into_future(),
        api.into_future(),
        status.into_future(),
        async {
            compactor.await;
            Ok(())
        }
    )?;
    Ok(())
}

//! The one wiring of a replica and its API, from injected parts: [`run_host`]. `apiary serve`
//! reaches it through [`crate::run`] (TLS sockets, the disk, the wall clock, OS randomness, raft
//! on its own [`RaftRuntime`]); every simulated host calls it directly (turmoil sockets without
//! TLS, a simulated disk and network, a virtual clock, a seeded [`RandomSource`], everything on
//! the host's one thread). So both run the same replica start-up, peer router, API, bootstrap
//! ([`ensure_cluster_objects`]), readiness, token signer, compactor and shutdown order.
//!
//! Until the cluster-wide feature gates agree with the cluster's record
//! ([`crate::cluster_gates`]) the API answers only health probes (others get 503) and the
//! bootstrap waits; a replica that differs shuts down as below and ends with the error.
//!
//! Shutdown order ([`crate::drain`]): stop reporting ready (the `shutdown` check), keep serving
//! for the shutdown delay, then, with `send_retry_after`, refuse new requests with 429 until the
//! requests in flight finished; then end the open watches cleanly (waiting up to the watch
//! termination grace period); then close and drain the API listener (requests in flight may
//! still need the peers, e.g. a write forwarded to the leader) and stop the bootstrap, the
//! compactor and the controllers; a leader then hands raft leadership to another voter; then
//! the peer listener, then raft, then the raft runtime if there is one.
//!
//! Two seams let a caller add to a host without re-wiring it: [`HostParts::storage_layer`]
//! wraps the API's storage (the simulation's planted bugs), [`HostParts::extra_routes`] adds
//! routes beside the API on its listener (the simulation's status endpoint).

use std::fmt::Debug;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use apiary_api::ApiConfig;
use apiary_api::Clock;
use apiary_api::Feature;
use apiary_api::FeatureGates;
use apiary_api::Flavor;
use apiary_api::IssuerDiscovery;
use apiary_api::RandomSource;
use apiary_api::TokenSigner;
use apiary_api::WatchSettings;
use apiary_api::audit::AuditConfig;
use apiary_api::auth::AuthenticationMethods;
use apiary_api::auth::BootstrapTokenAuthenticator;
use apiary_api::auth::ClientCertificate;
use apiary_api::flowcontrol::FlowControlSettings;
use apiary_api::metrics::Exposure;
use apiary_api::metrics::Metrics;
use apiary_api::registry::RuntimeConfig;
use apiary_api::registry::allocator::ServiceRanges;
use apiary_api::storage::Storage;
use apiary_raft::log::LogFs;
use apiary_raft::log::LogOptions;
use apiary_raft::log::LogStore;
use apiary_raft::log::WriterMode;
use apiary_raft::metrics::LogMetrics;
use apiary_raft::network::Transport;
use apiary_raft::replica::Replica;
use apiary_raft::replica::ReplicaConfig;
use apiary_raft::replica::ReplicaError;
use apiary_raft::replica::peer_router;
use apiary_raft::version;
use apiary_raft::version::ProtocolRange;
use apiary_raft::version::VersionAnswer;
use axum::Extension;
use axum::Router;
use axum::serve::Listener;
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::admin::NodeAdmin;
use crate::authn::jwt::JwtConfig;
use crate::authz::AuthorizationSettings;
use crate::authz::StartParts;
use crate::backend::ReplicaStorage;
use crate::bootstrap::ClusterObjects;
use crate::bootstrap::ensure_cluster_objects;
use crate::cluster_gates::GateRecord;
use crate::cluster_gates::ensure_agreement;
use crate::cluster_version;
use crate::cluster_version::binary_version;
use crate::compactor::run_compactor;
use crate::controllers::ControllerContext;
use crate::controllers::ControllerSelection;
use crate::controllers::changes::Changes;
use crate::controllers::runner::run_controllers;
use crate::drain::DrainGate;
use crate::drain::ShutdownSettings;
use crate::error::NodeError;
use crate::https::HttpLimits;
use crate::https::serve_https;
use crate::periodic_snapshots::PeriodicSnapshots;
use crate::periodic_snapshots::run_periodic_snapshots;
use crate::raft_runtime::RaftRuntime;
use crate::readiness::ReplicaReadiness;
use crate::webhook_transport::HttpsWebhooks;

/// After shutdown, a plain listener's open connections get this long to finish their requests
/// (as [`serve_https`] gives its own).
const PLAIN_DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// With `send_retry_after`, the longest wait for the requests in flight before the listener
/// closes anyway (the longest a non-watch request may take: kube-apiserver's request timeout).
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

/// What one replica host is, apart from the parts injected into it ([`HostParts`]).
pub struct HostConfig {
    /// The replica's name (logs).
    pub name: String,
    /// The raft replica: id, data directory, members, timings.
    pub replica: ReplicaConfig,
    /// Product naming of the API.
    pub flavor: Flavor,
    /// How much history the leader keeps before it compacts (`--watch-history`).
    pub watch_history: Duration,
    /// Periodic automatic snapshots (none: not taken).
    pub periodic_snapshots: Option<PeriodicSnapshots>,
    /// Watch durations and bookmark interval of the API.
    pub watch: WatchSettings,
    /// Which API versions and resources are served.
    pub runtime_config: RuntimeConfig,
    /// Signs service account tokens.
    pub token_signer: Arc<dyn TokenSigner>,
    /// How requests are authenticated (client certificates by default).
    pub authentication: AuthenticationMethods,
    /// The service account issuer discovery documents, when served.
    pub issuer_discovery: Option<Arc<IssuerDiscovery>>,
    /// Where Services get cluster IPs and node ports.
    pub service_ranges: ServiceRanges,
    /// The most bytes an object's stored form may have.
    pub max_object_bytes: usize,
    /// The admission plugins enabled.
    pub admission: apiary_api::admission::PluginSelection,
    /// The admission plugins' configurations.
    pub admission_config: apiary_api::admission::AdmissionConfig,
    /// Which gated features are on.
    pub feature_gates: FeatureGates,
    /// How the cluster-wide gates meet the cluster's record (before the API admits requests).
    pub gate_record: GateRecord,
    /// The peer protocols this replica speaks ([`ProtocolRange::CURRENT`] but in simulations
    /// playing an older build); see [`crate::cluster_version`].
    pub protocol: ProtocolRange,
    /// The shutdown delay and whether to refuse requests while draining.
    pub shutdown: ShutdownSettings,
    /// How long after start `/livez` passes unfinished start-up steps.
    pub livez_grace_period: Duration,
    /// The audit policy and backends (none: nothing audited).
    pub audit: AuditConfig,
    /// API Priority and Fairness.
    pub flow_control: FlowControlSettings,
    /// Which metrics `/metrics` shows (`--show-hidden-metrics-for-version`).
    pub metrics_exposure: Exposure,
    /// Whether bootstrap tokens authenticate (`--enable-bootstrap-token-auth`).
    pub bootstrap_token_auth: bool,
    /// The controllers run while this replica leads (`--controllers`).
    pub controllers: ControllerSelection,
    /// The PEM CA bundle clients verify the API with, published in every namespace.
    pub root_ca: Arc<str>,
    /// JWT authentication, if configured.
    pub jwt: Option<JwtConfig>,
    /// The authorization modes consulted after `system:masters` and the always-on
    /// authorizers.
    pub authorization: AuthorizationSettings,
}

/// The replica's two bound sockets and how their connections are secured.
pub enum Sockets<L> {
    /// TLS on both: the API's (client certificates optional) and the peers' (mutual), served
    /// within [`HttpLimits`]. With [`RaftPlacement::OwnRuntime`] the peer listener moves there.
    Tls {
        /// The API listener.
        api: TcpListener,
        /// The peer listener.
        peer: TcpListener,
        /// The API listener's TLS configuration.
        api_tls: Arc<ServerConfig>,
        /// The peer listener's TLS configuration.
        peer_tls: Arc<ServerConfig>,
    },
    /// No TLS (the simulation), both served on the current runtime. Every API request carries
    /// `identity`, as a verified client certificate would give it, so the real x509
    /// authenticator and authorizer still decide who the client is.
    Plain {
        /// The API listener.
        api: L,
        /// The peer listener.
        peer: L,
        /// The client certificate every API request is taken to come with.
        identity: ClientCertificate,
    },
}

/// Where raft runs.
pub enum RaftPlacement {
    /// On a runtime of its own, apart from the API (production; see [`crate::raft_runtime`]).
    OwnRuntime(RaftRuntime),
    /// On the current runtime, with the API (the simulation: turmoil runs each host on one
    /// thread, which keeps it deterministic).
    Current,
}

/// The raft log's file system and writer.
pub struct LogParts {
    /// The file system of the log and the snapshots.
    pub fs: Arc<dyn LogFs>,
    /// Where the log's writer runs. [`WriterMode::Task`] means `fs` never blocks, so the log
    /// is opened right on the current task; otherwise it is opened on a blocking thread.
    pub writer: WriterMode,
}

/// Wraps the storage the API uses.
pub type StorageLayer = Box<dyn FnOnce(Arc<dyn Storage>) -> Arc<dyn Storage> + Send>;

/// Routes served beside the API, on its listener, made once the replica has started.
pub type ExtraRoutes = Box<dyn FnOnce(Arc<Replica>) -> Router + Send>;

/// The parts injected into one replica host.
pub struct HostParts<L> {
    /// The bound sockets.
    pub sockets: Sockets<L>,
    /// How raft reaches the peers.
    pub transport: Arc<dyn Transport>,
    /// Where the raft log lives.
    pub log: LogParts,
    /// The wall clock the API and the bootstrap stamp objects with.
    pub clock: Arc<dyn Clock>,
    /// The randomness of uids, generated names, token ids and watch timeouts.
    pub random: RandomSource,
    /// Where raft runs.
    pub raft: RaftPlacement,
    /// Wraps the API's storage, if given.
    pub storage_layer: Option<StorageLayer>,
    /// Routes added beside the API, if given.
    pub extra_routes: Option<ExtraRoutes>,
}

/// Runs one replica host from `parts` until `shutdown` resolves, then shuts it down in order.
/// Fails only at start-up (the data directory, the raft state); once serving, failures are
/// answered per request.
pub async fn run_host<L>(
    config: HostConfig,
    parts: HostParts<L>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), NodeError>
where
    L: Listener<Addr = SocketAddr>,
{
    let HostParts {
        sockets,
        transport,
        log,
        clock,
        random,
        raft,
        storage_layer,
        extra_routes,
    } = parts;
    let name = config.name.clone();
    let version_transport = transport.clone();
    let (replica, log_metrics) = match &raft {
        RaftPlacement::OwnRuntime(runtime) => {
            let transport = Arc::new(runtime.transport(transport));
            runtime
                .run(start_replica(config.replica.clone(), transport, log))
                .await
                .map_err(NodeError::ReplicaStart)?
        }
        RaftPlacement::Current => start_replica(config.replica.clone(), transport, log).await,
    }
    .map_err(NodeError::Replica)?;
    tracing::info!(%name, id = config.replica.id, "replica started");

    let shutting_down = CancellationToken::new();
    let stop_api = CancellationToken::new();
    let stop_peer = CancellationToken::new();
    let local_versions = VersionAnswer::local(config.protocol, &binary_version());
    let peers = peer_router(replica.clone()).merge(version::router(local_versions));
    let mut storage: Arc<dyn Storage> = Arc::new(ReplicaStorage::new(replica.clone()));
    if let Some(layer) = storage_layer {
        storage = layer(storage);
    }
    let live_from = tokio::time::Instant::now() + config.livez_grace_period;
    let readiness = ReplicaReadiness::new(replica.clone(), shutting_down.clone(), live_from);
    let mut api_config = ApiConfig::new(config.flavor, Arc::new(readiness.clone()));
    api_config.clock = clock.clone();
    api_config.random = random.clone();
    api_config.watch = config.watch;
    api_config.runtime_config = config.runtime_config.clone();
    api_config.token_signer = Some(config.token_signer.clone());
    api_config.authentication = config.authentication.clone();
    api_config.issuer_discovery = config.issuer_discovery.clone();
    api_config.service_ranges = config.service_ranges;
    api_config.max_object_bytes = config.max_object_bytes;
    api_config.admission = config.admission.clone();
    api_config.admission_config = config.admission_config.clone();
    api_config.feature_gates = config.feature_gates;
    api_config.audit = config.audit.clone();
    api_config.flow_control = config.flow_control;
    api_config.metrics = Metrics::new(config.metrics_exposure);
    if config.bootstrap_token_auth {
        let bootstrap_tokens = Arc::new(BootstrapTokenAuthenticator);
        api_config.authentication.tokens.push(bootstrap_tokens);
    }
    api_config.webhooks = Some(Arc::new(HttpsWebhooks::default()));
    api_config.cluster_admin = Some(Arc::new(NodeAdmin {
        replica: replica.clone(),
    }));
    crate::metrics::register_store_metrics(&api_config.metrics, replica.clone(), log_metrics);
    crate::object_counts::track_object_counts(&api_config.metrics, &replica);
    if let Some(jwt) = &config.jwt {
        let authenticators = jwt
            .start(
                &api_config.authentication.api_audiences,
                &api_config.metrics,
                &name,
                stop_api.clone(),
            )
            .map_err(|e| NodeError::Config(e.into()))?;
        api_config
            .authentication
            .tokens
            .push(Arc::new(authenticators));
    }
    let modes = config
        .authorization
        .start(StartParts {
            flavor: config.flavor,
            storage: storage.clone(),
            with_selectors: config
                .feature_gates
                .enabled(Feature::AuthorizeNodeWithSelectors)
                && config
                    .feature_gates
                    .enabled(Feature::AuthorizeWithSelectors),
            metrics: &api_config.metrics,
            replica: &name,
            stop: stop_api.clone(),
        })
        .map_err(|e| NodeError::Config(e.into()))?;
    api_config.authorizers.push(modes);
    let mut app = apiary_api::router(storage.clone(), api_config);
    if let Some(extra) = extra_routes {
        app = app.merge(extra(replica.clone()));
    }
    let gate = DrainGate::held(config.shutdown.send_retry_after);
    let app = gate.wrap(app);
    let controller_context = ControllerContext {
        api: app.clone(),
        flavor: config.flavor,
        clock: clock.clone(),
        changes: Changes::follow(replica.subscribe_applied(), replica.subscribe_notices()),
    };

    let (api_port, api_server, peer_server) = match sockets {
        Sockets::Tls {
            api,
            peer,
            api_tls,
            peer_tls,
        } => {
            let api_port = api.local_addr().map_or(443, |a| a.port());
            let limits = HttpLimits::default();
            let api_server = tokio::spawn(serve_https(
                api,
                api_tls,
                app,
                limits.clone(),
                stop_api.clone(),
            ));
            let peer_server = match &raft {
                RaftPlacement::OwnRuntime(runtime) => {
                    let peer = runtime.adopt(peer).map_err(NodeError::PeerListener)?;
                    runtime.spawn(serve_https(
                        peer,
                        peer_tls,
                        peers,
                        limits,
                        stop_peer.clone(),
                    ))
                }
                RaftPlacement::Current => tokio::spawn(serve_https(
                    peer,
                    peer_tls,
                    peers,
                    limits,
                    stop_peer.clone(),
                )),
            };
            (api_port, api_server, peer_server)
        }
        Sockets::Plain {
            api,
            peer,
            identity,
        } => {
            let api_port = api.local_addr().map_or(443, |a| a.port());
            let app = app.layer(Extension(identity));
            let api_server = serve_plain(api, app, stop_api.clone());
            let peer_server = serve_plain(peer, peers, stop_peer.clone());
            (api_port, api_server, peer_server)
        }
    };

    let periodic_snapshots = config.periodic_snapshots.clone().map(|settings| {
        tokio::spawn(run_periodic_snapshots(
            replica.clone(),
            name.clone(),
            clock.clone(),
            settings,
            stop_api.clone(),
        ))
    });
    let objects = ClusterObjects {
        flavor: config.flavor,
        service_ranges: config.service_ranges,
        api_port,
        clock,
        random,
    };
    let stop_bootstrap = stop_api.clone();
    let (refused, refusal) = tokio::sync::oneshot::channel();
    let agreement = (replica.clone(), config.feature_gates, config.gate_record);
    let admit = gate.clone();
    let bootstrap = tokio::spawn(async move {
        let (replica, gates, mode) = agreement;
        tokio::select! {
            agreed = ensure_agreement(&replica, &gates, mode) => match agreed {
                Ok(()) => admit.open(),
                Err(error) => {
                    let _ = refused.send(error);
                    return;
                }
            },
            () = stop_bootstrap.cancelled() => return,
        }
        ensure_cluster_objects(storage, objects, readiness, stop_bootstrap).await;
    });
    let compactor = tokio::spawn(run_compactor(
        replica.clone(),
        config.watch_history,
        stop_api.clone(),
    ));
    let versions = tokio::spawn(cluster_version::run(
        replica.clone(),
        version_transport,
        config.protocol,
        stop_api.clone(),
    ));
    let selected = config.controllers.build(&config.root_ca);
    let controllers = (!selected.is_empty()).then(|| {
        tokio::spawn(run_controllers(
            replica.clone(),
            selected,
            controller_context,
            stop_api.clone(),
        ))
    });

    let refusal = tokio::select! {
        () = shutdown => None,
        Ok(error) = refusal => Some(error),
    };
    let delay = if refusal.is_some() {
        Duration::ZERO
    } else {
        config.shutdown.delay
    };
    tracing::info!(%name, ?delay, "shutting down: not ready, serving for the delay");
    shutting_down.cancel();
    gate.stop_keep_alive();
    tokio::time::sleep(delay).await;
    gate.start_draining();
    if config.shutdown.send_retry_after {
        tracing::info!(%name, "draining: new requests get 429");
        if tokio::time::timeout(DRAIN_LIMIT, gate.drained())
            .await
            .is_err()
        {
            tracing::warn!(%name, "requests still in flight after the drain limit");
        }
    }
    gate.close_watches();
    let grace = config.shutdown.watch_termination_grace;
    if tokio::time::timeout(grace, gate.watches_closed())
        .await
        .is_err()
    {
        tracing::info!(%name, ?grace, "watches still sending after the grace period");
    }
    stop_api.cancel();
    for task in [api_server, bootstrap, compactor, versions]
        .into_iter()
        .chain(controllers)
        .chain(periodic_snapshots)
    {
        if let Err(error) = task.await {
            tracing::warn!(%error, "API task ended abnormally");
        }
    }
    // A leader hands over while its peer listener still answers its successor's vote request.
    let hand_over = config.replica.raft.election_timeout() * 4;
    if let Some(leader) = replica.transfer_leadership(hand_over).await {
        tracing::info!(%name, leader, "raft leadership handed over");
    }
    stop_peer.cancel();
    if let Err(error) = peer_server.await {
        tracing::warn!(%error, "peer listener ended abnormally");
    }
    if let Err(error) = replica.shutdown().await {
        tracing::warn!(%error, "raft did not stop cleanly");
    }
    if let RaftPlacement::OwnRuntime(runtime) = raft {
        runtime.shutdown().await;
    }
    tracing::info!(%name, "stopped");
    refusal.map_or(Ok(()), |error| Err(NodeError::FeatureGates(error)))
}

/// Opens the raft log on `log` and starts the replica on the current runtime; the replica and
/// what its log measures.
async fn start_replica(
    config: ReplicaConfig,
    transport: Arc<dyn Transport>,
    log: LogParts,
) -> Result<(Arc<Replica>, LogMetrics), ReplicaError> {
    let path = config.data_dir.join("log");
    let options = LogOptions {
        fs: log.fs.clone(),
        writer: log.writer,
        ..LogOptions::default()
    };
    let open_error = |source: Box<dyn std::error::Error + Send + Sync>| ReplicaError::OpenLog {
        path: path.clone(),
        source,
    };
    let opened = match log.writer {
        WriterMode::Task => LogStore::open(&path, options),
        WriterMode::Thread => {
            let open_path = path.clone();
            tokio::task::spawn_blocking(move || LogStore::open(open_path, options))
                .await
                .map_err(|e| open_error(Box::new(e)))?
        }
    };
    let store = opened.map_err(|e| open_error(Box::new(e)))?;
    let log_metrics = store.metrics();
    let replica = Replica::start_with_storage(config, transport, store, log.fs).await?;
    Ok((replica, log_metrics))
}

/// Serves `app` on `listener` without TLS until `stop` is cancelled, then gives open
/// connections [`PLAIN_DRAIN_TIMEOUT`] to finish.
fn serve_plain<L>(listener: L, app: Router, stop: CancellationToken) -> JoinHandle<()>
where
    L: Listener,
    L::Addr: Debug,
{
    let serving = axum::serve(listener, app).with_graceful_shutdown(stop.clone().cancelled_owned());
    let drained = async move {
        stop.cancelled().await;
        tokio::time::sleep(PLAIN_DRAIN_TIMEOUT).await;
    };
    tokio::spawn(async move {
        tokio::select! {
            served = serving.into_future() => {
                if let Err(error) = served {
                    tracing::warn!(%error, "listener failed");
                }
            }
            () = drained => {}
        }
    })
}

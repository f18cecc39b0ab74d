//! One replica, wired together: the raft replica, the peer listener (mutual TLS, raft RPCs),
//! the API listener (TLS, the HTTP API over [`ReplicaStorage`]), the start-up bootstrap and the
//! history compactor.
//!
//! Sockets and the shutdown trigger are injected ([`run`]), so tests run several replicas in
//! one process on ports the OS picked.
//!
//! Raft and the peer listener run on the replica's [`RaftRuntime`], the API, the bootstrap and
//! the compactor on the runtime that calls [`run`]: request work cannot delay heartbeats.
//!
//! Shutdown order: stop reporting ready, drain the API listener (requests in flight may still
//! need the peers, e.g. a write forwarded to the leader) and stop the compactor, then the peer
//! listener, then raft, then the raft runtime.

use std::net::SocketAddr;
use std::sync::Arc;

use apiary_api::ApiConfig;
use apiary_api::Flavor;
use apiary_api::storage::Storage;
use apiary_raft::network::HttpTransport;
use apiary_raft::replica::Replica;
use apiary_raft::replica::ReplicaConfig;
use apiary_raft::replica::peer_router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::backend::ReplicaStorage;
use crate::bootstrap::ensure_cluster_objects;
use crate::cli::DevArgs;
use crate::cli::FlavorName;
use crate::cli::ServeArgs;
use crate::compactor::run_compactor;
use crate::config::ServeConfig;
use crate::error::NodeError;
use crate::https::HttpLimits;
use crate::https::serve_https;
use crate::raft_runtime::RaftRuntime;
use crate::readiness::ReplicaReadiness;
use crate::service_account_key;
use crate::shutdown::terminate_signal;
use crate::tls;

/// Build a snapshot every this many applied entries (a snapshot lets the log be purged and a
/// lagging replica catch up without the whole log).
const SNAPSHOT_LOGS_THRESHOLD: u64 = 10_000;

/// The bound sockets of one replica.
#[derive(Debug)]
pub struct Listeners {
    /// The HTTPS API listener.
    pub api: TcpListener,
    /// The peer (raft RPC) listener.
    pub peer: TcpListener,
}

impl Listeners {
    /// Binds both listeners.
    pub async fn bind(api: SocketAddr, peer: SocketAddr) -> Result<Self, NodeError> {
        let bind = |addr: SocketAddr| async move {
            TcpListener::bind(addr)
                .await
                .map_err(|source| NodeError::Bind { addr, source })
        };
        Ok(Self {
            api: bind(api).await?,
            peer: bind(peer).await?,
        })
    }
}

/// The API's flavor for a `--flavor` value.
pub fn flavor(name: FlavorName) -> Flavor {
    match name {
        FlavorName::Platform => Flavor::Platform,
        FlavorName::Kubernetes => Flavor::Kubernetes,
    }
}

/// Runs one replica on `listeners` until `shutdown` resolves, then shuts it down gracefully.
/// Fails only at start-up (certificates, data directory); once serving, failures are answered
/// per request.
pub async fn run(
    config: ServeConfig,
    listeners: Listeners,
    shutdown: impl Future<Output = ()>,
) -> Result<(), NodeError> {
    tls::install_crypto_provider();
    let api_tls = tls::api_server_config(&config.api_tls)?;
    let peer_tls = tls::peer_server_config(&config.peer_tls)?;
    let peer_client_tls = tls::peer_client_config(&config.peer_tls)?;
    let flavor = flavor(config.flavor);
    let raft_runtime = RaftRuntime::start().map_err(NodeError::RaftRuntime)?;
    let peer_listener = raft_runtime
        .adopt(listeners.peer)
        .map_err(NodeError::PeerListener)?;
    let transport =
        Arc::new(raft_runtime.transport(Arc::new(HttpTransport::new(Some(peer_client_tls)))));

    let peer_url = config
        .initial_cluster
        .get(&config.id)
        .cloned()
        .unwrap_or_default();
    let replica_config = ReplicaConfig {
        id: config.id,
        data_dir: config.data_dir.clone(),
        peer_url,
        initial_cluster: config.initial_cluster.clone(),
        join_existing: config.join_existing,
        raft: config.raft.clone(),
        snapshot_logs_threshold: SNAPSHOT_LOGS_THRESHOLD,
    };
    let replica = raft_runtime
        .run(Replica::start(replica_config, transport))
        .await
        .map_err(NodeError::ReplicaStart)?
        .map_err(NodeError::Replica)?;
    tracing::info!(name = %config.name, id = config.id, "replica started");

    let stop_api = CancellationToken::new();
    let stop_peer = CancellationToken::new();
    let peer_server = raft_runtime.spawn(serve_https(
        peer_listener,
        peer_tls,
        peer_router(replica.clone()),
        HttpLimits::default(),
        stop_peer.clone(),
    ));

    let storage: Arc<dyn Storage> = Arc::new(ReplicaStorage::new(replica.clone()));
    let readiness = ReplicaReadiness::new(replica.clone(), stop_api.clone());
    let mut api_config = ApiConfig::new(flavor, Arc::new(readiness.clone()));
    api_config.watch = config.watch;
    api_config.runtime_config = config.runtime_config.clone();
    api_config.token_signer = Some(Arc::new(service_account_key::signer(
        &config.service_account_key,
        &config.service_account_issuer,
    )?));
    api_config.service_ranges = config.service_ranges;
    api_config.max_object_bytes = config.max_object_bytes;
    let api_port = listeners.api.local_addr().map(|a| a.port()).unwrap_or(443);
    let service_ranges = config.service_ranges;
    let app = apiary_api::router(storage.clone(), api_config);
    let api_server = tokio::spawn(serve_https(
        listeners.api,
        api_tls,
        app,
        HttpLimits::default(),
        stop_api.clone(),
    ));
    let stop_bootstrap = stop_api.clone();
    let bootstrap = tokio::spawn(async move {
        let service = Some((service_ranges, api_port));
        if ensure_cluster_objects(storage, flavor, service, stop_bootstrap).await {
            readiness.mark_bootstrapped();
        }
    });

    let compactor = tokio::spawn(run_compactor(
        replica.clone(),
        config.watch_history,
        stop_api.clone(),
    ));

    shutdown.await;
    tracing::info!(name = %config.name, "shutting down");
    stop_api.cancel();
    for task in [api_server, bootstrap, compactor] {
        if let Err(error) = task.await {
            tracing::warn!(%error, "API task ended abnormally");
        }
    }
    stop_peer.cancel();
    if let Err(error) = peer_server.await {
        tracing::warn!(%error, "peer listener ended abnormally");
    }
    if let Err(error) = replica.shutdown().await {
        tracing::warn!(%error, "raft did not stop cleanly");
    }
    raft_runtime.shutdown().await;
    tracing::info!(name = %config.name, "stopped");
    Ok(())
}

/// `apiary serve`: validates the flags, binds the listeners and runs until SIGINT/SIGTERM.
pub async fn serve(args: ServeArgs) -> Result<(), NodeError> {
    let config = ServeConfig::from_args(&args)?;
    let signal = terminate_signal().map_err(NodeError::Signals)?;
    let listeners = Listeners::bind(args.listen_api, args.listen_peer).await?;
    run(config, listeners, signal).await
}

/// `apiary dev`: runs a local cluster until SIGINT/SIGTERM.
pub async fn dev_main(args: DevArgs) -> Result<(), NodeError> {
    let signal = terminate_signal().map_err(NodeError::Signals)?;
    crate::dev::run_dev(args, signal).await?;
    Ok(())
}

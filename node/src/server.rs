//! `apiary serve`: one replica on real sockets, TLS from the configured files, its log on the
//! disk, raft on its own [`RaftRuntime`], wired by [`crate::wiring::run_host`].
//!
//! Sockets and the shutdown trigger are injected ([`run`]), so tests run several replicas in
//! one process on ports the OS picked.

use std::net::SocketAddr;
use std::sync::Arc;

use apiary_api::Flavor;
use apiary_api::IssuerDiscovery;
use apiary_api::RandomSource;
use apiary_api::SystemClock;
use apiary_api::auth::AuthenticationMethods;
use apiary_api::auth::Authenticator;
use apiary_api::auth::CertificateAuthority;
use apiary_api::auth::RequestHeaderAuthenticator;
use apiary_api::auth::ServiceAccountTokenAuthenticator;
use apiary_api::auth::X509Authenticator;
use apiary_raft::log::StdFs;
use apiary_raft::log::WriterMode;
use apiary_raft::network::HttpTransport;
use apiary_raft::replica::ReplicaConfig;
use apiary_raft::version::ProtocolRange;
use tokio::net::TcpListener;

use crate::cli::DevArgs;
use crate::cli::FlavorName;
use crate::cli::ServeArgs;
use crate::config::ConfigError;
use crate::config::ServeConfig;
use crate::error::NodeError;
use crate::raft_runtime::RaftRuntime;
use crate::service_account_key;
use crate::shutdown::terminate_signal;
use crate::tls;
use crate::wiring::HostConfig;
use crate::wiring::HostParts;
use crate::wiring::LogParts;
use crate::wiring::RaftPlacement;
use crate::wiring::Sockets;
use crate::wiring::run_host;

/// Build a snapshot every this many applied entries (a snapshot lets the log be purged and a
/// lagging replica catch up without the whole log). Each snapshot encodes the whole store on
/// every replica, so the interval is etcd's default `--snapshot-count`: at 10,000, a store of
/// 50,000 objects spent a fifth of a follower's CPU under writes building snapshots.
const SNAPSHOT_LOGS_THRESHOLD: u64 = 100_000;

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

/// The CA bundle published in every namespace (`kube-root-ca.crt`): what clients verify the
/// API with. kube-controller-manager publishes its `--root-ca-file`; a replica has no file of
/// its own for the CA that issued its serving certificate, and in the layouts `apiary certs`
/// and `apiary dev` write one CA issues both the serving and the client certificates, so the
/// bundle is `--client-ca-file`, or without it the served chain (`--tls-cert-file`).
fn root_ca_bundle(files: &crate::config::ApiTlsFiles) -> Result<Arc<str>, tls::TlsError> {
    let path = files.client_ca.as_ref().unwrap_or(&files.cert);
    std::fs::read_to_string(path)
        .map(Arc::from)
        .map_err(|e| tls::TlsError::Pem {
            path: path.clone(),
            source: rustls::pki_types::pem::Error::Io(e),
        })
}

/// Runs one replica on `listeners` until `shutdown` resolves, then shuts it down gracefully.
/// Fails only at start-up (certificates, data directory); once serving, failures are answered
/// per request.
pub async fn run(
    config: ServeConfig,
    listeners: Listeners,
    shutdown: impl Future<Output = ()>,
) -> Result<(), NodeError> {
    for warning in &config.feature_gate_warnings {
        tracing::warn!("{warning}");
    }
    tls::install_crypto_provider();
    let client_ca = config
        .api_tls
        .client_ca
        .as_deref()
        .map(tls::CaFile::load)
        .transpose()?;
    let proxy_ca = config
        .request_header
        .as_ref()
        .map(|proxy| tls::CaFile::load(&proxy.client_ca))
        .transpose()?;
    let cas: Vec<_> = client_ca.iter().chain(&proxy_ca).cloned().collect();
    let root_ca = root_ca_bundle(&config.api_tls)?;
    for ca in &cas {
        tls::CaFile::follow(ca);
    }
    let api_tls = tls::api_server_config(&config.api_tls, &cas)?;
    let mut authentication = AuthenticationMethods {
        request_header: config.request_header.zip(proxy_ca).map(|(proxy, ca)| {
            Arc::new(RequestHeaderAuthenticator::new(
                proxy.names,
                ca as Arc<dyn CertificateAuthority>,
            ))
        }),
        request: client_ca
            .into_iter()
            .map(|ca| Arc::new(X509Authenticator::verifying(ca)) as Arc<dyn Authenticator>)
            .collect(),
        ..AuthenticationMethods::default()
    };
    let peer_tls = tls::peer_server_config(&config.peer_tls)?;
    let peer_client_tls = tls::peer_client_config(&config.peer_tls)?;
    let accounts = &config.service_accounts;
    let signer = service_account_key::signer(
        &config.service_account_key,
        &accounts.issuers[0],
        accounts.api_audiences.clone(),
    )?
    .with_limits(accounts.limits);
    let keys =
        service_account_key::verifying_keys(&accounts.key_files, &config.api_tls.key, &signer)?;
    authentication.api_audiences = accounts.api_audiences.clone();
    config
        .token_auth
        .install(&mut authentication, flavor(config.flavor))
        .map_err(ConfigError::from)?;
    if !config.authorization.anonymous_allowed() && authentication.anonymous.take().is_some() {
        tracing::warn!(
            "anonymous requests are not allowed with the AlwaysAllow authorizer; anonymous authentication is off"
        );
    }
    authentication
        .tokens
        .push(Arc::new(ServiceAccountTokenAuthenticator::new(
            keys.clone(),
            accounts.issuers.clone(),
            accounts.api_audiences.clone(),
            accounts.lookup,
        )));
    let issuer_discovery = Arc::new(IssuerDiscovery::new(
        accounts.issuers[0].clone(),
        accounts.jwks_uri.clone(),
        keys,
    ));
    let token_signer = Arc::new(signer);
    let raft_runtime = RaftRuntime::start().map_err(NodeError::RaftRuntime)?;
    let peer_url = config
        .initial_cluster
        .get(&config.id)
        .cloned()
        .unwrap_or_default();
    let host = HostConfig {
        name: config.name,
        replica: ReplicaConfig {
            id: config.id,
            data_dir: config.data_dir,
            peer_url,
            initial_cluster: config.initial_cluster,
            join_existing: config.join_existing,
            raft: config.raft,
            snapshot_logs_threshold: SNAPSHOT_LOGS_THRESHOLD,
        },
        flavor: flavor(config.flavor),
        watch_history: config.watch_history,
        periodic_snapshots: config.periodic_snapshots,
        watch: config.watch,
        runtime_config: config.runtime_config,
        token_signer,
        authentication,
        issuer_discovery: Some(issuer_discovery),
        service_ranges: config.service_ranges,
        max_object_bytes: config.max_object_bytes,
        admission: config.admission,
        admission_config: config.admission_config,
        feature_gates: config.feature_gates,
        gate_record: config.gate_record,
        protocol: ProtocolRange::CURRENT,
        shutdown: config.shutdown,
        livez_grace_period: config.livez_grace_period,
        audit: config
            .audit
            .start(flavor(config.flavor))
            .map_err(ConfigError::from)?,
        flow_control: config.flow_control,
        metrics_exposure: config.metrics_exposure,
        bootstrap_token_auth: config.bootstrap_token_auth,
        controllers: config.controllers,
        root_ca,
        jwt: config.jwt,
        authorization: config.authorization,
    };
    let parts: HostParts<TcpListener> = HostParts {
        sockets: Sockets::Tls {
            api: listeners.api,
            peer: listeners.peer,
            api_tls,
            peer_tls,
        },
        transport: Arc::new(HttpTransport::new(Some(peer_client_tls))),
        log: LogParts {
            fs: Arc::new(StdFs),
            writer: WriterMode::Thread,
        },
        clock: Arc::new(SystemClock),
        random: RandomSource::from_os_entropy(),
        raft: RaftPlacement::OwnRuntime(raft_runtime),
        storage_layer: None,
        extra_routes: None,
    };
    run_host(host, parts, shutdown).await
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

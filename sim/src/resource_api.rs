//! The resource API on a simulated replica host: `apiary_api::router` over the node crate's
//! `ReplicaStorage`, with the node's readiness and namespace bootstrap, wired as `apiary serve`
//! wires them, on a plain simulated socket.
//!
//! TLS is not simulated. What a verified TLS client certificate would give the API, the
//! [`ClientCertificate`] request extension, is inserted directly for every request, so the real
//! x509 authenticator and `system:masters` authorizer still decide who the client is.

use std::sync::Arc;
use std::time::Duration;

use apiary_api::ApiConfig;
use apiary_api::Flavor;
use apiary_api::auth::ClientCertificate;
use apiary_api::auth::SYSTEM_MASTERS;
use apiary_api::storage::Storage;
use apiary_node::backend::ReplicaStorage;
use apiary_node::bootstrap::ensure_namespaces;
use apiary_node::readiness::ReplicaReadiness;
use apiary_raft::replica::Replica;
use axum::Extension;
use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::clock::VirtualClock;
use crate::planted::PlantedBug;

/// The port every replica host serves the resource API on.
pub const API_PORT: u16 = 6443;
/// The user the simulated clients act as (a member of `system:masters`).
pub const CLIENT_USER: &str = "sim-client";
/// How often a watch with `allowWatchBookmarks` gets a bookmark: often, so that watchers'
/// progress reaches revisions no change has (elections' entries) within seconds of virtual
/// time, and bookmarks are checked many times a run.
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(1);
/// The naming flavor of simulated clusters.
pub const FLAVOR: Flavor = Flavor::Platform;

/// A certificate naming [`CLIENT_USER`] in `system:masters`, as a TLS handshake would hand it
/// to the API.
pub fn client_certificate() -> Result<ClientCertificate, rcgen::Error> {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, CLIENT_USER);
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, SYSTEM_MASTERS);
    let key = rcgen::KeyPair::generate()?;
    let certificate = params.self_signed(&key)?;
    Ok(ClientCertificate(certificate.der().to_vec()))
}

/// The resource API of `replica`, every request carrying `identity`, stamping objects with
/// `clock`, over storage with the `planted` bug if one is given. Also starts, on the
/// current host, the node's bootstrap of the system namespaces (retried until a leader takes
/// it), which lives as long as the host's software.
pub fn serve_router(
    replica: &Arc<Replica>,
    identity: ClientCertificate,
    clock: VirtualClock,
    planted: Option<PlantedBug>,
) -> Router {
    let mut storage: Arc<dyn Storage> = Arc::new(ReplicaStorage::new(Arc::clone(replica)));
    if let Some(bug) = planted {
        storage = bug.plant(storage);
    }
    let stopping = CancellationToken::new();
    let readiness = Arc::new(ReplicaReadiness::new(Arc::clone(replica), stopping.clone()));
    let mut config = ApiConfig::new(FLAVOR, readiness);
    config.clock = Arc::new(clock);
    config.watch.bookmark_interval = BOOKMARK_INTERVAL;
    tokio::spawn(ensure_namespaces(Arc::clone(&storage), FLAVOR, stopping));
    apiary_api::router(storage, config).layer(Extension(identity))
}

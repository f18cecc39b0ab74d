//! What the resource API of a simulated replica host is configured with: its port, flavor,
//! bookmark interval, the clients' identity and the service account signing key. The API
//! itself is wired by the node crate ([`apiary_node::wiring::run_host`]), as for `apiary serve`.
//!
//! TLS is not simulated. What a verified TLS client certificate would give the API, the
//! [`ClientCertificate`] request extension, is inserted by the wiring for every request
//! ([`apiary_node::wiring::Sockets::Plain`]), so the real x509 authenticator and
//! `system:masters` authorizer still decide who the client is.

use std::time::Duration;

use apiary_api::Flavor;
use apiary_api::RsaTokenSigner;
use apiary_api::TokenSignError;
use apiary_api::auth::ClientCertificate;
use apiary_api::auth::SYSTEM_MASTERS;

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
    Ok(ClientCertificate::new(certificate.der().to_vec()))
}

/// Signs every simulated replica's service account tokens: a fixed key, held in memory, so
/// no host touches the machine's disk and no run spends time generating one.
const SERVICE_ACCOUNT_KEY: &str = include_str!("service_account_key.pem");
/// The issuer of the simulated replicas' service account tokens.
const SERVICE_ACCOUNT_ISSUER: &str = "https://apiary.sim";

/// The signer of the simulated replicas' service account tokens.
pub fn token_signer() -> Result<RsaTokenSigner, TokenSignError> {
    let issuer = SERVICE_ACCOUNT_ISSUER.to_owned();
    RsaTokenSigner::from_pem(
        SERVICE_ACCOUNT_KEY.as_bytes(),
        &issuer,
        vec![issuer.clone()],
    )
}

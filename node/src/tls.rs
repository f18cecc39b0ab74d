//! TLS material of a replica: reading PEM files (`rustls::pki_types::pem`) and building the
//! rustls configurations of the API listener (client certificates optional, verified), the peer
//! listener (client certificates required) and the peer client.
//!
//! Exactly one crypto provider (ring) is used process-wide: [`install_crypto_provider`] installs
//! it as rustls' default at start-up and every config here is built from that default.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::ServerConfig;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use rustls::server::WebPkiClientVerifier;

use crate::config::ApiTlsFiles;
use crate::config::PeerTlsFiles;

/// ALPN protocols offered by both listeners, preferred first.
const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// Why TLS material could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file could not be read or holds no usable item.
    #[error("cannot read PEM file {path}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// A certificate file holds no certificate.
    #[error("no certificate in {path}")]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// A CA certificate was rejected as a trust anchor.
    #[error("CA certificate in {path} is not a usable trust anchor")]
    TrustAnchor {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rustls::Error,
    },
    /// The client certificate verifier could not be built.
    #[error("cannot build the client certificate verifier")]
    Verifier(#[source] rustls::server::VerifierBuilderError),
    /// rustls rejected the certificate/key pair or the protocol settings.
    #[error("invalid TLS configuration")]
    Config(#[source] rustls::Error),
}

/// Installs ring as the process-wide rustls crypto provider. Idempotent: a second call (several
/// in-process replicas in one test) keeps the provider already installed, which is ring too
/// because nothing else in this binary installs one.
pub fn install_crypto_provider() {
    // `Err` only means a provider is already installed; that one is kept on purpose.
    let _already_installed = rustls::crypto::ring::default_provider().install_default();
}

/// Every certificate of a PEM file, in order (leaf first for a chain).
pub fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem_error = |source| TlsError::Pem {
        path: path.to_owned(),
        source,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(pem_error)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error)?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_owned(),
        });
    }
    Ok(certs)
}

/// The first private key (PKCS#8, PKCS#1 or SEC1) of a PEM file.
pub fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|source| TlsError::Pem {
        path: path.to_owned(),
        source,
    })
}

/// A root store holding every certificate of a PEM CA bundle.
pub fn load_roots(path: &Path) -> Result<Arc<RootCertStore>, TlsError> {
    let mut roots = RootCertStore::empty();
    for cert in load_certs(path)? {
        roots.add(cert).map_err(|source| TlsError::TrustAnchor {
            path: path.to_owned(),
            source,
        })?;
    }
    Ok(Arc::new(roots))
}

/// The API listener: serves `files.cert`; with a client CA, asks for a client certificate,
/// verifies any presented one against the CA and lets clients without one through (they may
/// authenticate with a token, or be anonymous).
pub fn api_server_config(files: &ApiTlsFiles) -> Result<Arc<ServerConfig>, TlsError> {
    let builder = match &files.client_ca {
        Some(ca) => {
            let verifier = WebPkiClientVerifier::builder(load_roots(ca)?)
                .allow_unauthenticated()
                .build()
                .map_err(TlsError::Verifier)?;
            ServerConfig::builder().with_client_cert_verifier(verifier)
        }
        None => ServerConfig::builder().with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(load_certs(&files.cert)?, load_key(&files.key)?)
        .map_err(TlsError::Config)?;
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// The peer listener: a client certificate chaining to the peer CA is required.
pub fn peer_server_config(files: &PeerTlsFiles) -> Result<Arc<ServerConfig>, TlsError> {
    let verifier = WebPkiClientVerifier::builder(load_roots(&files.trusted_ca)?)
        .build()
        .map_err(TlsError::Verifier)?;
    let mut config = ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(load_certs(&files.cert)?, load_key(&files.key)?)
        .map_err(TlsError::Config)?;
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// The peer client: trusts only the peer CA and presents this replica's peer certificate.
pub fn peer_client_config(files: &PeerTlsFiles) -> Result<Arc<ClientConfig>, TlsError> {
    let config = ClientConfig::builder()
        .with_root_certificates(load_roots(&files.trusted_ca)?)
        .with_client_auth_cert(load_certs(&files.cert)?, load_key(&files.key)?)
        .map_err(TlsError::Config)?;
    Ok(Arc::new(config))
}

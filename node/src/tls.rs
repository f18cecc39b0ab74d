//! TLS material of a replica: reading PEM files (`rustls::pki_types::pem`) and building the
//! rustls configurations of the API listener (client certificates optional, verified against
//! the client CAs or the authenticating proxy's CAs), the peer listener (client certificates
//! required) and the peer client.
//!
//! The API's CA files are [`CaFile`]s: followed while the replica runs (Kubernetes' dynamic CA
//! content), so a replaced bundle counts for new connections and for x509 authentication
//! without a restart; a file that cannot be read or parsed keeps the previous CAs and is
//! logged. Each reading remembers the client certificates it verified until they expire, so
//! x509 authentication, which runs on every request, checks a certificate's signatures once.
//!
//! Exactly one crypto provider (ring) is used process-wide: [`install_crypto_provider`] installs
//! it as rustls' default at start-up and every config here is built from that default.

use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::RwLock;
use std::sync::Weak;
use std::time::Duration;

use apiary_api::auth::CertificateAuthority;
use rustls::ClientConfig;
use rustls::DigitallySignedStruct;
use rustls::DistinguishedName;
use rustls::RootCertStore;
use rustls::ServerConfig;
use rustls::SignatureScheme;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::UnixTime;
use rustls::pki_types::pem::PemObject;
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerified;
use rustls::server::danger::ClientCertVerifier;
use sha2::Digest;
use sha2::Sha256;

use crate::config::ApiTlsFiles;
use crate::config::PeerTlsFiles;
use crate::error::error_chain;

/// How often a [`CaFile`] is read again to see whether it changed.
pub const CA_RELOAD_INTERVAL: Duration = Duration::from_secs(2);

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
    /// The client certificate verifier of a CA file could not be built.
    #[error("cannot build a client certificate verifier from {path}")]
    Verifier {
        /// The CA file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rustls::server::VerifierBuilderError,
    },
    /// A CA file could not be read.
    #[error("cannot read CA file {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
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

/// The API listener: serves `files.cert`; asks for a client certificate, verifies any presented
/// one against the client CAs or the request-header (proxy) CAs and lets clients without one
/// through (they may authenticate with a token, or be anonymous). `cas` are the CA files
/// (the client CAs and the request-header CAs, as loaded from `files.client_ca` and
/// `--requestheader-client-ca-file`); without any, no client certificate is asked for.
pub fn api_server_config(
    files: &ApiTlsFiles,
    cas: &[Arc<CaFile>],
) -> Result<Arc<ServerConfig>, TlsError> {
    let builder = if cas.is_empty() {
        ServerConfig::builder().with_no_client_auth()
    } else {
        let verifier = AnyCaVerifier { cas: cas.to_vec() };
        ServerConfig::builder().with_client_cert_verifier(Arc::new(verifier))
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
        .map_err(|source| TlsError::Verifier {
            path: files.trusted_ca.clone(),
            source,
        })?;
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

/// A PEM CA bundle (`--client-ca-file`, `--requestheader-client-ca-file`) followed as it
/// changes: [`CaFile::follow`] reads it again every [`CA_RELOAD_INTERVAL`] and swaps in the new
/// CAs when the contents changed and parse; a bad file keeps the previous CAs (logged).
#[derive(Debug)]
pub struct CaFile {
    path: PathBuf,
    current: RwLock<LoadedCas>,
}

/// Client certificates remembered as verified per reading of a CA file; when full, the
/// reading forgets them all and starts again.
const MAX_VERIFIED: usize = 4_096;

/// One reading of a CA file.
#[derive(Debug)]
struct LoadedCas {
    contents: Vec<u8>,
    verifier: Arc<dyn ClientCertVerifier>,
    /// The client certificates these CAs verified, by SHA-256 of their DER, with their
    /// `notAfter`: verification depends only on the certificate, the CAs and the time, and
    /// the time only through the validity window, which had begun when it verified.
    verified: Mutex<HashMap<[u8; 32], UnixTime>>,
}

impl LoadedCas {
    fn new(contents: Vec<u8>, verifier: Arc<dyn ClientCertVerifier>) -> Self {
        Self {
            contents,
            verifier,
            verified: Mutex::new(HashMap::new()),
        }
    }

    /// Verifies the DER client certificate `certificate` at `now`, from memory when these CAs
    /// verified it before and it has not expired since.
    fn verify_at(&self, certificate: &[u8], now: UnixTime) -> Result<(), String> {
        let digest: [u8; 32] = Sha256::digest(certificate).into();
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if verified
            .get(&digest)
            .is_some_and(|not_after| now <= *not_after)
        {
            return Ok(());
        }
        drop(verified);
        self.verifier
            .verify_client_cert(&CertificateDer::from(certificate), &[], now)
            .map_err(|error| error.to_string())?;
        let Some(not_after) = not_after(certificate) else {
            return Ok(());
        };
        verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if verified.len() >= MAX_VERIFIED {
            verified.clear();
        }
        verified.insert(digest, not_after);
        Ok(())
    }
}

/// The end of a DER certificate's validity window; `None` when it cannot be read.
fn not_after(certificate: &[u8]) -> Option<UnixTime> {
    use x509_parser::prelude::FromDer;
    let (_, cert) = x509_parser::prelude::X509Certificate::from_der(certificate).ok()?;
    let seconds = u64::try_from(cert.validity().not_after.timestamp()).ok()?;
    Some(UnixTime::since_unix_epoch(Duration::from_secs(seconds)))
}

impl CaFile {
    /// Reads the CA bundle at `path` (one or more CAs); fails when it holds no usable CA.
    pub fn load(path: &Path) -> Result<Arc<Self>, TlsError> {
        let contents = read_file(path)?;
        let verifier = verifier_of(path, &contents)?;
        Ok(Arc::new(Self {
            path: path.to_owned(),
            current: RwLock::new(LoadedCas::new(contents, verifier)),
        }))
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the file again: `Ok(true)` when its contents changed and are now in use,
    /// `Ok(false)` when they did not change; `Err` (the previous CAs stay) when it cannot be
    /// read or holds no usable CA.
    pub fn reload(&self) -> Result<bool, TlsError> {
        let contents = read_file(&self.path)?;
        if self.read_current().contents == contents {
            return Ok(false);
        }
        let verifier = verifier_of(&self.path, &contents)?;
        let mut current = self
            .current
            .write()
            .unwrap_or_else(|poison| poison.into_inner());
        *current = LoadedCas::new(contents, verifier);
        Ok(true)
    }

    /// Starts following the file on the current runtime, until every holder of `this` has
    /// dropped it.
    pub fn follow(this: &Arc<Self>) {
        let weak: Weak<Self> = Arc::downgrade(this);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(CA_RELOAD_INTERVAL).await;
                let Some(ca) = weak.upgrade() else {
                    return;
                };
                match ca.reload() {
                    Ok(true) => {
                        tracing::info!(path = %ca.path.display(), "CA file changed; using its new contents")
                    }
                    Ok(false) => {}
                    Err(error) => tracing::warn!(
                        path = %ca.path.display(),
                        error = %error_chain(&error),
                        "CA file unusable; keeping the previous CAs"
                    ),
                }
            }
        });
    }

    fn verifier(&self) -> Arc<dyn ClientCertVerifier> {
        self.read_current().verifier.clone()
    }

    fn read_current(&self) -> std::sync::RwLockReadGuard<'_, LoadedCas> {
        self.current
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl CertificateAuthority for CaFile {
    fn verify(&self, certificate: &[u8]) -> Result<(), String> {
        self.read_current().verify_at(certificate, UnixTime::now())
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_owned(),
        source,
    })
}

/// A verifier of client certificates against every CA in `contents`, the PEM file at `path`.
fn verifier_of(path: &Path, contents: &[u8]) -> Result<Arc<dyn ClientCertVerifier>, TlsError> {
    let pem_error = |source| TlsError::Pem {
        path: path.to_owned(),
        source,
    };
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(contents) {
        roots
            .add(cert.map_err(pem_error)?)
            .map_err(|source| TlsError::TrustAnchor {
                path: path.to_owned(),
                source,
            })?;
    }
    if roots.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_owned(),
        });
    }
    WebPkiClientVerifier::builder(Arc::new(roots))
        .allow_unauthenticated()
        .build()
        .map_err(|source| TlsError::Verifier {
            path: path.to_owned(),
            source,
        })
}

/// Accepts a client certificate that any of its CA files (as they are now) verifies, and
/// clients without one. It names no acceptable CA to clients (the files change), so a client
/// with a certificate always presents it.
#[derive(Debug)]
struct AnyCaVerifier {
    /// Never empty.
    cas: Vec<Arc<CaFile>>,
}

impl AnyCaVerifier {
    /// The first file's verifier: signatures are checked the same by all of them.
    fn signatures(&self) -> Arc<dyn ClientCertVerifier> {
        self.cas[0].verifier()
    }
}

impl ClientCertVerifier for AnyCaVerifier {
    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let mut last = rustls::Error::General("no client CA configured".to_owned());
        for ca in &self.cas {
            match ca
                .verifier()
                .verify_client_cert(end_entity, intermediates, now)
            {
                Ok(verified) => return Ok(verified),
                Err(error) => last = error,
            }
        }
        Err(last)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signatures().verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signatures().verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.signatures().supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use rcgen::BasicConstraints;
    use rcgen::CertificateParams;
    use rcgen::DnType;
    use rcgen::ExtendedKeyUsagePurpose;
    use rcgen::IsCa;
    use rcgen::Issuer;
    use rcgen::KeyPair;

    use super::*;

    /// A CA's PEM and the DER of a client certificate it signed.
    fn ca_and_client(name: &str) -> (String, Vec<u8>) {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let pem = params.self_signed(&key).expect("CA").pem();
        let issuer = Issuer::new(params, key);
        let mut leaf = CertificateParams::new(Vec::<String>::new()).expect("params");
        leaf.distinguished_name.push(DnType::CommonName, "user");
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let leaf_key = KeyPair::generate().expect("key");
        let der = leaf
            .signed_by(&leaf_key, &issuer)
            .expect("leaf")
            .der()
            .to_vec();
        (pem, der)
    }

    // R-ACC-115: a CA file may hold several CAs; a changed file is used once read again, a
    // file without a usable CA keeps the previous CAs.
    #[test]
    fn ca_files_hold_several_cas_and_bad_contents_keep_the_previous() {
        install_crypto_provider();
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("ca.crt");
        let (first, first_client) = ca_and_client("first");
        let (second, second_client) = ca_and_client("second");
        std::fs::write(&path, &first).expect("write");
        let ca = CaFile::load(&path).expect("loads");
        assert!(ca.verify(&first_client).is_ok());
        assert!(ca.verify(&second_client).is_err());
        assert!(matches!(ca.reload(), Ok(false)));

        std::fs::write(&path, "not a certificate\n").expect("write");
        assert!(ca.reload().is_err());
        assert!(ca.verify(&first_client).is_ok());

        std::fs::write(&path, format!("{first}{second}")).expect("write");
        assert!(matches!(ca.reload(), Ok(true)));
        assert!(ca.verify(&first_client).is_ok());
        assert!(ca.verify(&second_client).is_ok());
    }

    // R-ACC-113, R-ACC-115: a certificate verified before is still refused once the CA file no
    // longer holds its CA, and once it expired.
    #[test]
    fn remembered_verifications_end_with_the_cas_and_the_certificate() {
        install_crypto_provider();
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("ca.crt");
        let (first, first_client) = ca_and_client("first");
        let (second, second_client) = ca_and_client("second");
        std::fs::write(&path, &first).expect("write");
        let ca = CaFile::load(&path).expect("loads");
        assert!(ca.verify(&first_client).is_ok());
        assert!(ca.verify(&first_client).is_ok(), "remembered");
        let expiry = not_after(&first_client).expect("notAfter");
        let later = UnixTime::since_unix_epoch(Duration::from_secs(expiry.as_secs() + 1));
        assert!(ca.read_current().verify_at(&first_client, expiry).is_ok());
        assert!(ca.read_current().verify_at(&first_client, later).is_err());

        std::fs::write(&path, &second).expect("write");
        assert!(matches!(ca.reload(), Ok(true)));
        assert!(ca.verify(&first_client).is_err());
        assert!(ca.verify(&second_client).is_ok());
    }
}

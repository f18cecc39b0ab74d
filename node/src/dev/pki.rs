//! The certificates of a local `apiary dev` cluster, generated with rcgen and kept in its
//! directory so a restart reuses them (clients keep trusting the same CA).
//!
//! Two CAs keep the two trust domains apart: `ca` signs the API serving certificates and the
//! admin client certificate (the API's `--client-ca-file`), `peer-ca` signs the replicas' peer
//! certificates (the peer listener's `--peer-trusted-ca-file`), so an API client certificate can
//! never pass as a replica.

use std::fs;
use std::io;
use std::path::Path;
use std::path::PathBuf;

use rcgen::BasicConstraints;
use rcgen::CertificateParams;
use rcgen::DnType;
use rcgen::ExtendedKeyUsagePurpose;
use rcgen::IsCa;
use rcgen::Issuer;
use rcgen::KeyPair;
use rcgen::KeyUsagePurpose;

/// Names the serving certificates are valid for: every way a local client dials a replica.
const LOOPBACK_NAMES: [&str; 3] = ["127.0.0.1", "localhost", "::1"];

/// The common name and organization of the admin client certificate: user `admin` in group
/// `system:masters`, which the authorizer grants everything (spec 001, x509 authentication).
pub const ADMIN_USER: &str = "admin";
/// See [`ADMIN_USER`].
pub const ADMIN_GROUP: &str = "system:masters";

/// Why the certificates could not be generated or stored.
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    /// rcgen failed (key generation, encoding, or a CA key file it cannot parse).
    #[error("certificate generation failed for {what}")]
    Generate {
        /// Which certificate.
        what: String,
        /// Why.
        #[source]
        source: rcgen::Error,
    },
    /// A file could not be read or written.
    #[error("cannot access {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// A certificate and its key, both PEM, and where they are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PemPair {
    /// The certificate file.
    pub cert_path: PathBuf,
    /// The private key file.
    pub key_path: PathBuf,
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PEM.
    pub key_pem: String,
}

/// All certificate files of a dev cluster of `nodes` replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevPki {
    /// CA of the API (serving and client certificates).
    pub ca: PemPair,
    /// CA of the peer certificates.
    pub peer_ca: PemPair,
    /// Per replica (index 0 is `node-1`): its API serving certificate.
    pub serving: Vec<PemPair>,
    /// Per replica: its peer certificate (server and client use).
    pub peer: Vec<PemPair>,
    /// The admin client certificate (CN=admin, O=system:masters).
    pub admin: PemPair,
}

/// The name of replica `index` (0-based): `node-1`, `node-2`, ...
pub fn node_name(index: usize) -> String {
    format!("node-{}", index + 1)
}

impl DevPki {
    /// Loads the certificates in `dir`, generating whatever is missing. Existing CAs are reused,
    /// so certificates generated later still chain to the CA clients already trust.
    pub fn load_or_generate(dir: &Path, nodes: usize) -> Result<Self, PkiError> {
        let ca = load_or_create_ca(dir, "ca", "apiary-dev-ca")?;
        let peer_ca = load_or_create_ca(dir, "peer-ca", "apiary-dev-peer-ca")?;
        let ca_issuer = issuer(&ca, "apiary-dev-ca")?;
        let peer_issuer = issuer(&peer_ca, "apiary-dev-peer-ca")?;
        let mut serving = Vec::with_capacity(nodes);
        let mut peer = Vec::with_capacity(nodes);
        for index in 0..nodes {
            let name = node_name(index);
            serving.push(load_or_create_leaf(dir, &name, &ca_issuer, || {
                leaf_params(&name, None, &[ExtendedKeyUsagePurpose::ServerAuth])
            })?);
            let peer_name = format!("{name}-peer");
            peer.push(load_or_create_leaf(dir, &peer_name, &peer_issuer, || {
                leaf_params(
                    &name,
                    None,
                    &[
                        ExtendedKeyUsagePurpose::ServerAuth,
                        ExtendedKeyUsagePurpose::ClientAuth,
                    ],
                )
            })?);
        }
        let admin = load_or_create_leaf(dir, "admin", &ca_issuer, || {
            leaf_params(
                ADMIN_USER,
                Some(ADMIN_GROUP),
                &[ExtendedKeyUsagePurpose::ClientAuth],
            )
        })?;
        Ok(Self {
            ca,
            peer_ca,
            serving,
            peer,
            admin,
        })
    }
}

/// A CA's parameters. Deterministic, so that an [`Issuer`] rebuilt from them and the stored key
/// signs certificates that chain to the stored CA certificate (same subject, same key id).
fn ca_params(common_name: &str) -> Result<CertificateParams, rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

fn leaf_params(
    common_name: &str,
    organization: Option<&str>,
    usages: &[ExtendedKeyUsagePurpose],
) -> Result<CertificateParams, rcgen::Error> {
    let names: Vec<String> = if usages.contains(&ExtendedKeyUsagePurpose::ServerAuth) {
        LOOPBACK_NAMES.iter().map(|n| (*n).to_owned()).collect()
    } else {
        Vec::new()
    };
    let mut params = CertificateParams::new(names)?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    if let Some(organization) = organization {
        params
            .distinguished_name
            .push(DnType::OrganizationName, organization);
    }
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = usages.to_vec();
    params.use_authority_key_identifier_extension = true;
    Ok(params)
}

fn generate_error(what: &str) -> impl FnOnce(rcgen::Error) -> PkiError + '_ {
    move |source| PkiError::Generate {
        what: what.to_owned(),
        source,
    }
}

fn load_or_create_ca(dir: &Path, file: &str, common_name: &str) -> Result<PemPair, PkiError> {
    if let Some(pair) = load_pair(dir, file)? {
        return Ok(pair);
    }
    let key = KeyPair::generate().map_err(generate_error(file))?;
    let cert = ca_params(common_name)
        .and_then(|p| p.self_signed(&key))
        .map_err(generate_error(file))?;
    store_pair(dir, file, cert.pem(), key.serialize_pem())
}

fn issuer(ca: &PemPair, common_name: &str) -> Result<Issuer<'static, KeyPair>, PkiError> {
    let key = KeyPair::from_pem(&ca.key_pem).map_err(generate_error(common_name))?;
    let params = ca_params(common_name).map_err(generate_error(common_name))?;
    Ok(Issuer::new(params, key))
}

fn load_or_create_leaf(
    dir: &Path,
    file: &str,
    issuer: &Issuer<'_, KeyPair>,
    params: impl FnOnce() -> Result<CertificateParams, rcgen::Error>,
) -> Result<PemPair, PkiError> {
    if let Some(pair) = load_pair(dir, file)? {
        return Ok(pair);
    }
    let key = KeyPair::generate().map_err(generate_error(file))?;
    let cert = params()
        .and_then(|p| p.signed_by(&key, issuer))
        .map_err(generate_error(file))?;
    store_pair(dir, file, cert.pem(), key.serialize_pem())
}

fn paths(dir: &Path, file: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{file}.crt")),
        dir.join(format!("{file}.key")),
    )
}

/// Both files of a pair, or `None` if either is missing (then the pair is generated afresh).
fn load_pair(dir: &Path, file: &str) -> Result<Option<PemPair>, PkiError> {
    let (cert_path, key_path) = paths(dir, file);
    let read = |path: &Path| match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PkiError::Io {
            path: path.to_owned(),
            source,
        }),
    };
    let (Some(cert_pem), Some(key_pem)) = (read(&cert_path)?, read(&key_path)?) else {
        return Ok(None);
    };
    Ok(Some(PemPair {
        cert_path,
        key_path,
        cert_pem,
        key_pem,
    }))
}

fn store_pair(
    dir: &Path,
    file: &str,
    cert_pem: String,
    key_pem: String,
) -> Result<PemPair, PkiError> {
    let (cert_path, key_path) = paths(dir, file);
    write_private(&key_path, &key_pem)?;
    fs::write(&cert_path, &cert_pem).map_err(|source| PkiError::Io {
        path: cert_path.clone(),
        source,
    })?;
    Ok(PemPair {
        cert_path,
        key_path,
        cert_pem,
        key_pem,
    })
}

/// Writes a private key readable by its owner only.
fn write_private(path: &Path, contents: &str) -> Result<(), PkiError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;

    let io_error = |source| PkiError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(io_error)?;
    file.write_all(contents.as_bytes()).map_err(io_error)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rustls::RootCertStore;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::ServerName;
    use rustls::pki_types::UnixTime;
    use rustls::pki_types::pem::PemObject;
    use rustls::server::WebPkiClientVerifier;
    use x509_parser::prelude::FromDer;
    use x509_parser::prelude::X509Certificate;

    use super::*;

    fn der(pem: &str) -> CertificateDer<'static> {
        CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
    }

    fn roots(ca: &PemPair) -> Arc<RootCertStore> {
        let mut roots = RootCertStore::empty();
        roots.add(der(&ca.cert_pem)).unwrap();
        Arc::new(roots)
    }

    fn verifies_as_server(ca: &PemPair, leaf: &PemPair, name: &str) -> bool {
        crate::tls::install_crypto_provider();
        let verifier = rustls::client::WebPkiServerVerifier::builder(roots(ca))
            .build()
            .unwrap();
        verifier
            .verify_server_cert(
                &der(&leaf.cert_pem),
                &[],
                &ServerName::try_from(name.to_owned()).unwrap(),
                &[],
                UnixTime::now(),
            )
            .is_ok()
    }

    fn verifies_as_client(ca: &PemPair, leaf: &PemPair) -> bool {
        crate::tls::install_crypto_provider();
        let verifier = WebPkiClientVerifier::builder(roots(ca)).build().unwrap();
        verifier
            .verify_client_cert(&der(&leaf.cert_pem), &[], UnixTime::now())
            .is_ok()
    }

    #[test]
    fn serving_certs_chain_to_the_ca_for_every_loopback_name() {
        let dir = tempfile::tempdir().unwrap();
        let pki = DevPki::load_or_generate(dir.path(), 3).unwrap();
        assert_eq!(pki.serving.len(), 3);
        for leaf in &pki.serving {
            for name in LOOPBACK_NAMES {
                assert!(verifies_as_server(&pki.ca, leaf, name), "{name}");
            }
            assert!(!verifies_as_server(&pki.ca, leaf, "example.com"));
            assert!(!verifies_as_server(&pki.peer_ca, leaf, "localhost"));
        }
    }

    // R-ACC (x509 authentication): the admin certificate names user `admin`, group
    // `system:masters`, and is accepted as a client certificate by the API CA only.
    #[test]
    fn admin_cert_carries_user_and_group_and_is_a_client_cert() {
        let dir = tempfile::tempdir().unwrap();
        let pki = DevPki::load_or_generate(dir.path(), 1).unwrap();
        let der = der(&pki.admin.cert_pem);
        let (_, cert) = X509Certificate::from_der(&der).unwrap();
        let cn: Vec<_> = cert
            .subject()
            .iter_common_name()
            .map(|a| a.as_str().unwrap())
            .collect();
        let orgs: Vec<_> = cert
            .subject()
            .iter_organization()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(cn, vec![ADMIN_USER]);
        assert_eq!(orgs, vec![ADMIN_GROUP]);
        assert!(verifies_as_client(&pki.ca, &pki.admin));
        assert!(!verifies_as_client(&pki.peer_ca, &pki.admin));
    }

    #[test]
    fn peer_certs_serve_and_authenticate_under_the_peer_ca_only() {
        let dir = tempfile::tempdir().unwrap();
        let pki = DevPki::load_or_generate(dir.path(), 2).unwrap();
        for leaf in &pki.peer {
            assert!(verifies_as_client(&pki.peer_ca, leaf));
            assert!(verifies_as_server(&pki.peer_ca, leaf, "127.0.0.1"));
            assert!(!verifies_as_client(&pki.ca, leaf));
        }
    }

    #[test]
    fn a_second_run_reuses_files_and_fills_in_missing_ones() {
        let dir = tempfile::tempdir().unwrap();
        let first = DevPki::load_or_generate(dir.path(), 2).unwrap();
        let again = DevPki::load_or_generate(dir.path(), 2).unwrap();
        assert_eq!(first, again);

        fs::remove_file(&first.serving[1].cert_path).unwrap();
        let grown = DevPki::load_or_generate(dir.path(), 3).unwrap();
        assert_eq!(grown.ca, first.ca);
        assert_eq!(grown.serving[0], first.serving[0]);
        assert_ne!(grown.serving[1], first.serving[1]);
        // Regenerated and new leaves chain to the CA that was already there.
        assert!(verifies_as_server(
            &grown.ca,
            &grown.serving[1],
            "localhost"
        ));
        assert!(verifies_as_server(&grown.ca, &grown.serving[2], "::1"));
        assert!(verifies_as_client(&grown.peer_ca, &grown.peer[2]));
    }

    #[test]
    fn keys_are_private_to_the_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let pki = DevPki::load_or_generate(dir.path(), 1).unwrap();
        let mode = fs::metadata(&pki.admin.key_path)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0);
    }
}

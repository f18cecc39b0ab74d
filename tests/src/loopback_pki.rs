//! Certificates for the etcd baseline, so that it runs with TLS and client certificates like
//! Apiary does and the benchmark compares like with like: one CA and one loopback certificate
//! valid for serving and as a client, used by every member, between members and by the
//! benchmark's client. [`TestCa`] makes further CAs and client certificates (an authenticating
//! proxy's, a rotated client CA's) for the authentication tests.

use std::fs;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use rcgen::BasicConstraints;
use rcgen::CertificateParams;
use rcgen::DnType;
use rcgen::ExtendedKeyUsagePurpose;
use rcgen::IsCa;
use rcgen::Issuer;
use rcgen::KeyPair;
use rcgen::KeyUsagePurpose;
use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::PrivatePkcs8KeyDer;
use rustls::pki_types::pem::PemObject;

use crate::error::HarnessError;
use crate::error::Result;
use crate::kubeconfig::install_crypto_provider;

/// The files of a [`LoopbackPki`] and the matching client configuration.
pub struct LoopbackPki {
    /// The CA certificate, PEM.
    pub ca_file: PathBuf,
    /// The certificate for 127.0.0.1 and localhost (server and client use), PEM.
    pub cert_file: PathBuf,
    /// Its private key, PKCS#8 PEM.
    pub key_file: PathBuf,
    /// Trusts the CA and presents the certificate.
    pub client: Arc<ClientConfig>,
}

impl LoopbackPki {
    /// Generates a CA and a loopback certificate into `dir` (`ca.crt`, `loopback.crt`,
    /// `loopback.key`).
    pub fn generate(dir: &Path) -> Result<Self> {
        Self::generate_naming(dir, &[])
    }

    /// As [`Self::generate`], the certificate also valid for `names` (a Service's
    /// `<name>.<namespace>.svc`, for webhooks reached through a Service).
    pub fn generate_naming(dir: &Path, names: &[&str]) -> Result<Self> {
        install_crypto_provider();
        let ca_key = KeyPair::generate().map_err(rcgen_error)?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(rcgen_error)?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "apiary-bench-ca");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_cert = ca_params.self_signed(&ca_key).map_err(rcgen_error)?;
        let issuer = Issuer::new(ca_params, ca_key);

        let key = KeyPair::generate().map_err(rcgen_error)?;
        let mut sans = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
        sans.extend(names.iter().map(|n| (*n).to_owned()));
        let mut params = CertificateParams::new(sans).map_err(rcgen_error)?;
        params
            .distinguished_name
            .push(DnType::CommonName, "apiary-bench");
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        // etcd's JSON gateway dials the member's own gRPC port with the serving certificate, so
        // that certificate must be valid as a client too.
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let cert = params.signed_by(&key, &issuer).map_err(rcgen_error)?;

        let write = |name: &str, contents: &str| -> Result<PathBuf> {
            let path = dir.join(name);
            fs::write(&path, contents).map_err(|source| HarnessError::Io {
                path: path.clone(),
                source,
            })?;
            Ok(path)
        };
        let ca_file = write("ca.crt", &ca_cert.pem())?;
        let cert_file = write("loopback.crt", &cert.pem())?;
        let key_file = write("loopback.key", &key.serialize_pem())?;

        let mut roots = RootCertStore::empty();
        roots
            .add(ca_cert.der().clone())
            .map_err(|e| tls_error(e.to_string()))?;
        let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
        let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let client = ClientConfig::builder()
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, private)
            .map_err(|e| tls_error(e.to_string()))?;
        Ok(Self {
            ca_file,
            cert_file,
            key_file,
            client: Arc::new(client),
        })
    }
}

/// A CA of a test's own, and the client certificates it signs.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

/// A client certificate and its key, PEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCert {
    /// The certificate.
    pub cert_pem: String,
    /// Its private key (PKCS#8).
    pub key_pem: String,
}

impl TestCa {
    /// A new self-signed CA named `name`.
    pub fn generate(name: &str) -> Result<Self> {
        install_crypto_provider();
        let key = KeyPair::generate().map_err(rcgen_error)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(rcgen_error)?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let pem = params.self_signed(&key).map_err(rcgen_error)?.pem();
        Ok(Self {
            issuer: Issuer::new(params, key),
            pem,
        })
    }

    /// The CA whose subject is only `common_name` and whose private key is `key_pem` (a CA
    /// that already exists, such as `apiary dev`'s), so its certificates chain to that CA.
    pub fn from_key(common_name: &str, key_pem: &str) -> Result<Self> {
        install_crypto_provider();
        let key = KeyPair::from_pem(key_pem).map_err(rcgen_error)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(rcgen_error)?;
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let pem = params.self_signed(&key).map_err(rcgen_error)?.pem();
        Ok(Self {
            issuer: Issuer::new(params, key),
            pem,
        })
    }

    /// The CA certificate, PEM.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// A client certificate for user `common_name` in groups `organizations`.
    pub fn client_cert(&self, common_name: &str, organizations: &[&str]) -> Result<ClientCert> {
        let key = KeyPair::generate().map_err(rcgen_error)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(rcgen_error)?;
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        for organization in organizations {
            params
                .distinguished_name
                .push(DnType::OrganizationName, *organization);
        }
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&key, &self.issuer).map_err(rcgen_error)?;
        Ok(ClientCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// A client configuration trusting the PEM CAs of `server_ca` and presenting `client` (or no
/// certificate).
pub fn client_config(server_ca: &str, client: Option<&ClientCert>) -> Result<Arc<ClientConfig>> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(server_ca.as_bytes()) {
        let cert = cert.map_err(|e| tls_error(e.to_string()))?;
        roots.add(cert).map_err(|e| tls_error(e.to_string()))?;
    }
    roots_client_config(roots, client)
}

/// A client configuration trusting `roots` and presenting `client` (or no certificate).
pub fn roots_client_config(
    roots: RootCertStore,
    client: Option<&ClientCert>,
) -> Result<Arc<ClientConfig>> {
    install_crypto_provider();
    let builder = ClientConfig::builder().with_root_certificates(roots);
    let config = match client {
        Some(client) => {
            let chain = CertificateDer::pem_slice_iter(client.cert_pem.as_bytes())
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| tls_error(e.to_string()))?;
            let key = PrivateKeyDer::from_pem_slice(client.key_pem.as_bytes())
                .map_err(|e| tls_error(e.to_string()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| tls_error(e.to_string()))?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

fn rcgen_error(e: rcgen::Error) -> HarnessError {
    tls_error(e.to_string())
}

fn tls_error(reason: String) -> HarnessError {
    HarnessError::Certificates { reason }
}

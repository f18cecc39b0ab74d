//! Certificate files shared by `apiary certs` and `apiary dev`: CAs and the leaves they sign,
//! generated with rcgen, stored as `<file>.crt` and `<file>.key` (keys mode 0600) and reused when
//! both files already exist, so running either command again never re-keys what is there.

use std::fs;
use std::io;
use std::path::Path;
use std::path::PathBuf;

use apiary_api::auth::SYSTEM_MASTERS;
use rcgen::BasicConstraints;
use rcgen::CertificateParams;
use rcgen::DnType;
use rcgen::ExtendedKeyUsagePurpose;
use rcgen::IsCa;
use rcgen::Issuer;
use rcgen::KeyPair;
use rcgen::KeyUsagePurpose;

/// Names every serving and peer certificate is valid for besides a host's own, so a client on
/// the same machine (a health probe, `kubectl` on the host) can dial a replica on loopback.
pub const LOOPBACK_NAMES: [&str; 3] = ["127.0.0.1", "localhost", "::1"];

/// The common name of the admin client certificate: user `admin`, in group
/// [`SYSTEM_MASTERS`], which the authorizer grants everything (spec 001, x509 authentication).
pub const ADMIN_USER: &str = "admin";

/// The file name (without `.crt`/`.key`) of the admin client certificate.
pub const ADMIN_FILE: &str = "admin";

/// Why certificates could not be generated or stored.
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
    /// A stored CA is not the one this command makes (another command's, or not a CA
    /// certificate at all): certificates issued under it would not chain to it.
    #[error("{path} is not this command's CA (expected common name {expected})")]
    ForeignCa {
        /// The CA certificate file.
        path: PathBuf,
        /// The common name this command gives its CA.
        expected: String,
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

/// What a leaf certificate is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    /// An API serving certificate (TLS server).
    Serving,
    /// A peer certificate, presented as server and as client.
    Peer,
    /// A client certificate.
    Client,
}

impl Usage {
    fn purposes(self) -> Vec<ExtendedKeyUsagePurpose> {
        match self {
            Self::Serving => vec![ExtendedKeyUsagePurpose::ServerAuth],
            Self::Peer => vec![
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ],
            Self::Client => vec![ExtendedKeyUsagePurpose::ClientAuth],
        }
    }
}

/// The subject and names of a leaf certificate.
#[derive(Debug, Clone, Copy)]
pub struct Leaf<'a> {
    /// The common name (a replica's name, or the user of a client certificate).
    pub common_name: &'a str,
    /// The organization (a client certificate's group), if any.
    pub organization: Option<&'a str>,
    /// Subject alternative names: IP addresses and DNS names.
    pub names: &'a [String],
    /// What it is used for.
    pub usage: Usage,
}

/// A CA whose certificate and key are stored in a directory.
pub struct Ca {
    /// The CA's certificate and key.
    pub pair: PemPair,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    /// Loads the CA stored as `file` in `dir`, or creates it with `common_name` when either of
    /// its files is missing. A CA is always reloaded with the common name it was created with.
    pub fn load_or_create(dir: &Path, file: &str, common_name: &str) -> Result<Self, PkiError> {
        let pair = match load_pair(dir, file)? {
            Some(pair) => {
                if !has_common_name(&pair.cert_pem, common_name) {
                    return Err(PkiError::ForeignCa {
                        path: pair.cert_path,
                        expected: common_name.to_owned(),
                    });
                }
                pair
            }
            None => {
                let key = KeyPair::generate().map_err(generate_error(file))?;
                let cert = ca_params(common_name)
                    .and_then(|p| p.self_signed(&key))
                    .map_err(generate_error(file))?;
                store_pair(dir, file, cert.pem(), key.serialize_pem())?
            }
        };
        let key = KeyPair::from_pem(&pair.key_pem).map_err(generate_error(file))?;
        let params = ca_params(common_name).map_err(generate_error(file))?;
        Ok(Self {
            pair,
            issuer: Issuer::new(params, key),
        })
    }

    /// Loads the leaf stored as `file` in `dir`, or issues `leaf` under this CA when either of
    /// its files is missing.
    pub fn load_or_issue(
        &self,
        dir: &Path,
        file: &str,
        leaf: Leaf<'_>,
    ) -> Result<PemPair, PkiError> {
        if let Some(pair) = load_pair(dir, file)? {
            return Ok(pair);
        }
        let key = KeyPair::generate().map_err(generate_error(file))?;
        let cert = leaf_params(leaf)
            .and_then(|p| p.signed_by(&key, &self.issuer))
            .map_err(generate_error(file))?;
        store_pair(dir, file, cert.pem(), key.serialize_pem())
    }

    /// Loads or issues the admin client certificate (user [`ADMIN_USER`], group
    /// [`SYSTEM_MASTERS`]) stored as [`ADMIN_FILE`] in `dir`.
    pub fn load_or_issue_admin(&self, dir: &Path) -> Result<PemPair, PkiError> {
        let admin = Leaf {
            common_name: ADMIN_USER,
            organization: Some(SYSTEM_MASTERS),
            names: &[],
            usage: Usage::Client,
        };
        self.load_or_issue(dir, ADMIN_FILE, admin)
    }
}

/// `names` followed by the [`LOOPBACK_NAMES`] it does not already hold.
pub fn with_loopback(names: &[String]) -> Vec<String> {
    let mut all = names.to_vec();
    for name in LOOPBACK_NAMES {
        if !all.iter().any(|n| n == name) {
            all.push(name.to_owned());
        }
    }
    all
}

/// Whether the PEM certificate `pem` is a CA certificate with exactly the subject common name
/// `common_name`.
fn has_common_name(pem: &str, common_name: &str) -> bool {
    let Ok((_, pem)) = x509_parser::pem::parse_x509_pem(pem.as_bytes()) else {
        return false;
    };
    let Ok(cert) = pem.parse_x509() else {
        return false;
    };
    if !cert.is_ca() {
        return false;
    }
    let mut names = cert.subject().iter_common_name().map(|n| n.as_str());
    matches!((names.next(), names.next()), (Some(Ok(name)), None) if name == common_name)
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

fn leaf_params(leaf: Leaf<'_>) -> Result<CertificateParams, rcgen::Error> {
    let mut params = CertificateParams::new(leaf.names.to_vec())?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, leaf.common_name);
    if let Some(organization) = leaf.organization {
        params
            .distinguished_name
            .push(DnType::OrganizationName, organization);
    }
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = leaf.usage.purposes();
    params.use_authority_key_identifier_extension = true;
    Ok(params)
}

fn generate_error(what: &str) -> impl FnOnce(rcgen::Error) -> PkiError + '_ {
    move |source| PkiError::Generate {
        what: what.to_owned(),
        source,
    }
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

/// Writes a private key (or a file that embeds one) readable by its owner only.
pub fn write_private(path: &Path, contents: &str) -> Result<(), PkiError> {
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
    use super::*;

    #[test]
    fn a_ca_is_reused_only_under_the_name_it_was_made_with() {
        let dir = tempfile::tempdir().unwrap();
        let first = Ca::load_or_create(dir.path(), "ca", "one-ca").unwrap();
        let again = Ca::load_or_create(dir.path(), "ca", "one-ca").unwrap();
        assert_eq!(first.pair, again.pair);
        let other = Ca::load_or_create(dir.path(), "ca", "other-ca");
        assert!(matches!(other, Err(PkiError::ForeignCa { .. })));
        // A leaf stored where a CA is expected is refused too.
        let leaf = Leaf {
            common_name: "one-ca",
            organization: None,
            names: &[],
            usage: Usage::Client,
        };
        first.load_or_issue(dir.path(), "leaf", leaf).unwrap();
        let not_a_ca = Ca::load_or_create(dir.path(), "leaf", "one-ca");
        assert!(matches!(not_a_ca, Err(PkiError::ForeignCa { .. })));
    }

    #[test]
    fn loopback_names_are_added_once() {
        let names = with_loopback(&["10.0.0.1".to_owned(), "localhost".to_owned()]);
        assert_eq!(names, ["10.0.0.1", "localhost", "127.0.0.1", "::1"]);
    }
}

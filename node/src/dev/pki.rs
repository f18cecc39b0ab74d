//! The certificates of a local `apiary dev` cluster, generated with rcgen and kept in its
//! directory so a restart reuses them (clients keep trusting the same CA).
//!
//! Two CAs keep the two trust domains apart: `ca` signs the API serving certificates and the
//! admin client certificate (the API's `--client-ca-file`), `peer-ca` signs the replicas' peer
//! certificates (the peer listener's `--peer-trusted-ca-file`), so an API client certificate can
//! never pass as a replica.

use std::path::Path;

use crate::certs::pki::Ca;
use crate::certs::pki::Leaf;
use crate::certs::pki::PemPair;
use crate::certs::pki::PkiError;
use crate::certs::pki::Usage;
use crate::certs::pki::with_loopback;

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
        let ca = Ca::load_or_create(dir, "ca", "apiary-dev-ca")?;
        let peer_ca = Ca::load_or_create(dir, "peer-ca", "apiary-dev-peer-ca")?;
        let loopback = with_loopback(&[]);
        let mut serving = Vec::with_capacity(nodes);
        let mut peer = Vec::with_capacity(nodes);
        for index in 0..nodes {
            let name = node_name(index);
            let leaf = |usage| Leaf {
                common_name: &name,
                organization: None,
                names: &loopback,
                usage,
            };
            serving.push(ca.load_or_issue(dir, &name, leaf(Usage::Serving))?);
            peer.push(peer_ca.load_or_issue(dir, &format!("{name}-peer"), leaf(Usage::Peer))?);
        }
        let admin = ca.load_or_issue_admin(dir)?;
        Ok(Self {
            ca: ca.pair,
            peer_ca: peer_ca.pair,
            serving,
            peer,
            admin,
        })
    }
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

    use std::fs;

    use apiary_api::auth::SYSTEM_MASTERS;

    use super::*;
    use crate::certs::pki::ADMIN_USER;
    use crate::certs::pki::LOOPBACK_NAMES;

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
        assert_eq!(orgs, vec![SYSTEM_MASTERS]);
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

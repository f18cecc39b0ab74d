//! The verified TLS client certificate of a connection, as the node hands it to the API.

use std::sync::Arc;
use std::sync::OnceLock;

use super::UserInfo;

/// The verified TLS client leaf certificate of a connection. The node inserts it as a request
/// extension on every request of a connection that presented one (after rustls verified the
/// chain against the client CA), so authentication here only reads identities from it.
///
/// Cloning shares the certificate: every request of a connection holds the same one, so the
/// identity read from it ([`ClientCertificate::identity`]) is parsed once per connection.
#[derive(Debug, Clone)]
pub struct ClientCertificate(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    der: Vec<u8>,
    identity: OnceLock<Result<UserInfo, String>>,
}

impl ClientCertificate {
    /// The certificate of DER `der`.
    pub fn new(der: Vec<u8>) -> Self {
        Self(Arc::new(Shared {
            der,
            identity: OnceLock::new(),
        }))
    }

    /// The certificate's DER.
    pub fn der(&self) -> &[u8] {
        &self.0.der
    }

    /// `read(der)`, computed on the first call and remembered for every later one of any
    /// clone: `read` must be a function of the DER alone.
    pub fn identity(
        &self,
        read: impl FnOnce(&[u8]) -> Result<UserInfo, String>,
    ) -> &Result<UserInfo, String> {
        self.0.identity.get_or_init(|| read(&self.0.der))
    }
}

impl PartialEq for ClientCertificate {
    fn eq(&self, other: &Self) -> bool {
        self.der() == other.der()
    }
}

impl Eq for ClientCertificate {}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[test]
    fn the_identity_is_read_once_for_every_clone() {
        let reads = Cell::new(0);
        let read = |der: &[u8]| {
            reads.set(reads.get() + 1);
            Ok(UserInfo {
                name: String::from_utf8_lossy(der).into_owned(),
                ..UserInfo::default()
            })
        };
        let certificate = ClientCertificate::new(b"alice".to_vec());
        let clone = certificate.clone();
        let first = certificate.identity(read).clone();
        let second = clone.identity(read).clone();
        assert_eq!(Ok("alice".to_owned()), first.map(|u| u.name));
        assert_eq!(Ok("alice".to_owned()), second.map(|u| u.name));
        assert_eq!(
            1,
            reads.get(),
            "the second request reuses the first one's read"
        );
        let other = ClientCertificate::new(b"bob".to_vec());
        assert_eq!(
            Ok("bob".to_owned()),
            other.identity(read).clone().map(|u| u.name),
            "another connection's certificate is read on its own"
        );
        assert_eq!(2, reads.get());
    }
}

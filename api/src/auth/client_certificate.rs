//! The verified TLS client certificate of a connection, as the node hands it to the API.

/// DER of the verified TLS client leaf certificate. The node inserts it as a request
/// extension on every request of a connection that presented one (after rustls verified the
/// chain against the client CA), so authentication here only reads identities from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate(pub Vec<u8>);

//! The errors that end `apiary serve` or `apiary dev`, and how they are printed.

use std::net::SocketAddr;

pub use apiary_raft::error_chain;

use crate::certs::CertsError;
use crate::config::ConfigError;
use crate::dev::DevError;
use crate::service_account_key::KeyError;
use crate::tls::TlsError;

/// Why the binary stopped with a failure. All of these are fatal at start-up; failures while
/// serving are handled (retried or answered) where they happen.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The flags do not describe a replica.
    #[error("invalid configuration")]
    Config(#[from] ConfigError),
    /// Certificates or keys could not be loaded.
    #[error("TLS setup failed")]
    Tls(#[from] TlsError),
    /// A listener could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The signal handlers could not be installed.
    #[error("cannot install signal handlers")]
    Signals(#[source] std::io::Error),
    /// A cluster-wide feature gate differs from the cluster's value.
    #[error("feature gates disagree with the cluster")]
    FeatureGates(#[source] crate::cluster_gates::GateAgreementError),
    /// The replica could not start (its data directory, its raft state).
    #[error("cannot start the replica")]
    Replica(#[source] apiary_raft::replica::ReplicaError),
    /// The raft runtime's threads could not be started.
    #[error("cannot start the raft runtime")]
    RaftRuntime(#[source] std::io::Error),
    /// The replica's start-up on the raft runtime did not finish (it panicked).
    #[error("the replica's start-up failed")]
    ReplicaStart(#[source] tokio::task::JoinError),
    /// The peer listener could not be moved to the raft runtime.
    #[error("cannot serve the peer listener")]
    PeerListener(#[source] std::io::Error),
    /// `apiary dev` failed.
    #[error("apiary dev failed")]
    Dev(#[from] DevError),
    /// An operator command (`apiary member`, `apiary status`) failed.
    #[error(transparent)]
    Ctl(#[from] crate::ctl::CtlError),
    /// `apiary certs` could not write the cluster's files.
    #[error("apiary certs failed")]
    Certs(#[from] CertsError),
    /// The service account signing key is unusable.
    #[error("service account tokens cannot be signed")]
    ServiceAccountKey(#[from] KeyError),
    /// `apiary snapshot` failed.
    #[error("apiary snapshot failed")]
    Snapshot(#[from] crate::ctl::snapshot::SnapshotError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_lists_every_cause_once() {
        let error = NodeError::Config(ConfigError::EmptyCluster);
        assert_eq!(
            error_chain(&error),
            "invalid configuration: --initial-cluster is empty"
        );
    }
}

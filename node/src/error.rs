//! The errors that end `apiary serve` or `apiary dev`, and how they are printed.

use std::net::SocketAddr;

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
    /// The service account signing key is unusable.
    #[error("service account tokens cannot be signed")]
    ServiceAccountKey(#[from] KeyError),
}

/// `error` and its sources, joined with ": " (each `#[error]` message names only its own step).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
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

//! The seam between the replica and the network: one request/response call to a peer, bounded
//! by a deadline. Production uses [`super::HttpTransport`]; the simulation implements it over
//! turmoil.

use std::time::Duration;

use bytes::Bytes;

/// Sends one peer RPC and returns the peer's answer.
///
/// ### Correctness requirements
/// - `call` returns within `deadline` (plus scheduling slack): a peer that does not answer in
///   time yields [`TransportError::Timeout`], never a hang.
/// - `body` is delivered to the peer's handler for `rpc` (one of [`super::rpc`]'s names) as
///   is, and an `Ok` answer is exactly the bytes that handler returned with success.
/// - A call may be delivered and still fail (for example a timeout after the peer acted): the
///   callers treat every error as "outcome unknown".
#[async_trait::async_trait]
pub trait Transport: Send + Sync + 'static {
    /// Calls `rpc` on the peer at `target` (its peer URL) with the protobuf `body`.
    async fn call(
        &self,
        target: &str,
        rpc: &str,
        body: Bytes,
        deadline: Duration,
    ) -> Result<Bytes, TransportError>;
}

/// Why a peer call produced no answer. Only [`TransportError::Unreachable`] and
/// [`TransportError::InvalidTarget`] guarantee that the peer did not act on the request.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// No connection could be made, so the request was not delivered: back off, then retry.
    #[error("peer {target} is unreachable")]
    Unreachable {
        /// The peer URL.
        target: String,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The connection broke after the request may have been delivered: the outcome is unknown.
    #[error("connection to peer {target} broke during {rpc}")]
    Broken {
        /// The peer URL.
        target: String,
        /// The RPC name.
        rpc: String,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The deadline passed before the answer arrived; the request may have been delivered.
    #[error("peer call {rpc} to {target} timed out after {deadline:?}")]
    Timeout {
        /// The peer URL.
        target: String,
        /// The RPC name.
        rpc: String,
        /// The deadline that passed.
        deadline: Duration,
    },
    /// The peer answered, but not with success (it could not decode the request, or it is
    /// shutting down).
    #[error("peer {target} answered {rpc} with status {status}: {message}")]
    Rejected {
        /// The peer URL.
        target: String,
        /// The RPC name.
        rpc: String,
        /// The HTTP status.
        status: u16,
        /// The peer's explanation.
        message: String,
    },
    /// The peer URL cannot be used: a configuration error, not retryable.
    #[error("invalid peer URL {target:?}: {reason}")]
    InvalidTarget {
        /// The peer URL.
        target: String,
        /// Why it is invalid.
        reason: String,
    },
}

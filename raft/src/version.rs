//! The versions of everything a replica persists or sends to its peers, in one place: the peer
//! protocol a build speaks, the snapshot file format and the log format it reads and writes,
//! and the `version` peer RPC through which a replica learns what a peer speaks.
//!
//! # Protocol versions
//! - 1: the build pinned in `scripts/old-apiary-commit` and everything before it: the raft
//!   RPCs, write forwarding, follower read index, join and member removal, and the commands of
//!   [`crate::command`] as that build knew them. A peer that answers the `version` RPC with 404
//!   (it has no such route) speaks 1.
//! - 2: adds the `version` RPC ([`router`], [`probe`]).
//!
//! Optional RPCs that a sender can do without are not versioned: a peer without one answers
//! 404 and the sender falls back (pre-vote counts as granted; `forward-writes`, a batch of
//! forwarded writes, is sent again one write per `forward-write` call).
//!
//! # The rule for changes (the specification's rule 4b)
//! Messages and records are protobuf with fields only ever added, so adjacent builds read each
//! other's. Anything every replica must understand — a new command kind (an unknown kind
//! applies as an empty command on an older replica), a new stored form, a cluster-wide feature
//! gate — is introduced at a new protocol version N and used only once the cluster's effective
//! version (the lowest newest-protocol of its voters, kept by the node's `cluster_version`) is
//! at least N. A build keeps reading the formats of the previous version, so a rollback to it
//! finds nothing it cannot read.
//!
//! # Storage formats
//! - Snapshot files: the last byte of their magic is [`SNAPSHOT_FORMAT`]; a file of a newer
//!   format is refused with an error naming both formats, never misread.
//! - The log: [`LOG_FORMAT`] 1 is framed records (`log::record`) of protobuf entries
//!   ([`crate::wire::Entry`]) in `.wal` segments.

use std::time::Duration;

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::post;
use bytes::Bytes;
use prost::Message;

use crate::network::Transport;
use crate::network::TransportError;
use crate::network::rpc;

/// The newest peer protocol this build speaks.
pub const PROTOCOL_VERSION: u32 = 2;
/// The oldest peer protocol this build still speaks (and whose stored forms it reads).
pub const OLDEST_PROTOCOL_VERSION: u32 = 1;
/// The protocol of a peer that does not say which it speaks (a build before version 2).
pub const UNANNOUNCED_PROTOCOL_VERSION: u32 = 1;
/// The snapshot file format this build writes, and the newest it reads.
pub const SNAPSHOT_FORMAT: u8 = 1;
/// The log format this build writes, and the newest it reads.
pub const LOG_FORMAT: u32 = 1;

/// The peer protocols a replica speaks: [`ProtocolRange::CURRENT`] in production; a
/// simulation configures an older newest version to play an older build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtocolRange {
    /// The oldest protocol spoken.
    pub oldest: u32,
    /// The newest protocol spoken: what the replica announces to its peers.
    pub newest: u32,
}

impl ProtocolRange {
    /// What this build speaks.
    pub const CURRENT: Self = Self {
        oldest: OLDEST_PROTOCOL_VERSION,
        newest: PROTOCOL_VERSION,
    };

    /// This build's range, capped at `newest` (at least the oldest version this build speaks).
    pub fn capped(newest: u32) -> Self {
        Self {
            oldest: OLDEST_PROTOCOL_VERSION,
            newest: newest.clamp(OLDEST_PROTOCOL_VERSION, PROTOCOL_VERSION),
        }
    }
}

impl Default for ProtocolRange {
    fn default() -> Self {
        Self::CURRENT
    }
}

/// The answer of the `version` peer RPC: what the answering replica speaks and stores. Fields
/// are only ever added, with new tags.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct VersionAnswer {
    /// The newest protocol the replica speaks (what it announces).
    #[prost(uint32, tag = "1")]
    pub newest_protocol: u32,
    /// The oldest protocol the replica speaks.
    #[prost(uint32, tag = "2")]
    pub oldest_protocol: u32,
    /// The replica's binary version (for people; nothing parses it).
    #[prost(string, tag = "3")]
    pub binary: String,
    /// The snapshot file format the replica writes.
    #[prost(uint32, tag = "4")]
    pub snapshot_format: u32,
    /// The log format the replica writes.
    #[prost(uint32, tag = "5")]
    pub log_format: u32,
}

impl VersionAnswer {
    /// The answer of a replica of this build speaking `protocol`, whose binary is `binary`.
    pub fn local(protocol: ProtocolRange, binary: &str) -> Self {
        Self {
            newest_protocol: protocol.newest,
            oldest_protocol: protocol.oldest,
            binary: binary.to_owned(),
            snapshot_format: u32::from(SNAPSHOT_FORMAT),
            log_format: LOG_FORMAT,
        }
    }

    /// What a peer that has no `version` RPC is known to speak.
    pub fn unannounced() -> Self {
        Self {
            newest_protocol: UNANNOUNCED_PROTOCOL_VERSION,
            oldest_protocol: UNANNOUNCED_PROTOCOL_VERSION,
            binary: String::new(),
            snapshot_format: 1,
            log_format: 1,
        }
    }
}

/// The `version` RPC's route, answering `answer`; the node serves it beside
/// [`crate::replica::peer_router`].
pub fn router(answer: VersionAnswer) -> Router {
    let body = Bytes::from(answer.encode_to_vec());
    Router::new().route(
        &format!("{}{}", rpc::PATH_PREFIX, rpc::VERSION),
        post(move || {
            let body = body.clone();
            async move { ([(CONTENT_TYPE, "application/x-protobuf")], body).into_response() }
        }),
    )
}

/// Why a peer's versions are unknown.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The peer did not answer (unreachable, timed out, or refused for another reason).
    #[error("asking the peer for its versions failed")]
    Transport(#[from] TransportError),
    /// The answer was not a version answer.
    #[error("the peer's version answer does not decode")]
    Decode(#[from] prost::DecodeError),
}

/// Asks the peer at `target` what it speaks. A peer without the RPC (404) is a build before
/// protocol 2 and speaks [`UNANNOUNCED_PROTOCOL_VERSION`].
pub async fn probe(
    transport: &dyn Transport,
    target: &str,
    deadline: Duration,
) -> Result<VersionAnswer, ProbeError> {
    match transport
        .call(target, rpc::VERSION, Bytes::new(), deadline)
        .await
    {
        Ok(body) => Ok(VersionAnswer::decode(body)?),
        Err(TransportError::Rejected { status: 404, .. }) => Ok(VersionAnswer::unannounced()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::network::HttpTransport;

    const DEADLINE: Duration = Duration::from_secs(5);

    async fn serve(router: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        url
    }

    // R-HA-015: a replica learns what its peer speaks; a peer of the older build, which has
    // no version route, speaks protocol 1.
    #[tokio::test]
    async fn a_probe_reads_the_announced_versions_and_a_peer_without_them_is_version_1() {
        let transport: Arc<dyn Transport> = Arc::new(HttpTransport::new(None));
        let answer = VersionAnswer::local(ProtocolRange::CURRENT, "0.1.0");
        let current = serve(router(answer.clone())).await;
        assert_eq!(
            probe(&*transport, &current, DEADLINE).await.unwrap(),
            answer
        );

        let older = serve(Router::new()).await;
        let unannounced = probe(&*transport, &older, DEADLINE).await.unwrap();
        assert_eq!(unannounced.newest_protocol, UNANNOUNCED_PROTOCOL_VERSION);

        let capped = VersionAnswer::local(ProtocolRange::capped(1), "0.1.0");
        let pretending = serve(router(capped)).await;
        let answer = probe(&*transport, &pretending, DEADLINE).await.unwrap();
        assert_eq!((answer.oldest_protocol, answer.newest_protocol), (1, 1));
    }

    #[test]
    fn a_cap_stays_within_what_this_build_speaks() {
        assert_eq!(ProtocolRange::capped(0).newest, OLDEST_PROTOCOL_VERSION);
        assert_eq!(ProtocolRange::capped(99), ProtocolRange::CURRENT);
    }
}

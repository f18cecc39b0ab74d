//! A replica's own figures for the operating API's status (the `report` peer RPC): its term,
//! commit and applied indexes, log bounds, newest snapshot and store size, as only the replica
//! itself knows them. Any replica asks any other; one that does not answer is unreachable.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::response::Response;
use prost::Message;

use super::Replica;
use crate::network::PeerCallError;
use crate::network::TransportError;
use crate::network::rpc;

/// The answer of the `report` peer RPC. Fields are only ever added, with new tags.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct ReplicaReport {
    /// The answering replica's node id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Whether raft runs there.
    #[prost(bool, tag = "2")]
    pub running: bool,
    /// Its current term.
    #[prost(uint64, tag = "3")]
    pub term: u64,
    /// The leader as far as it knows.
    #[prost(uint64, optional, tag = "4")]
    pub leader: Option<u64>,
    /// The newest log index it knows committed.
    #[prost(uint64, tag = "5")]
    pub committed: u64,
    /// The newest revision applied to its store.
    #[prost(uint64, tag = "6")]
    pub applied: u64,
    /// The oldest log index it holds, when its log is not empty.
    #[prost(uint64, optional, tag = "7")]
    pub first_log_index: Option<u64>,
    /// The newest log index it holds, when its log is not empty.
    #[prost(uint64, optional, tag = "8")]
    pub last_log_index: Option<u64>,
    /// The last log index its newest snapshot covers.
    #[prost(uint64, optional, tag = "9")]
    pub snapshot_index: Option<u64>,
    /// The size of the newest snapshot it built, in bytes (0 before any).
    #[prost(uint64, tag = "10")]
    pub snapshot_bytes: u64,
    /// The keys its store holds a value for.
    #[prost(uint64, tag = "11")]
    pub keys: u64,
    /// Its store's compaction point.
    #[prost(uint64, tag = "12")]
    pub compacted: u64,
    /// The bytes of the values its store holds.
    #[prost(uint64, tag = "13")]
    pub store_bytes: u64,
    /// Seconds since it built or installed its newest snapshot (absent: none since it started).
    #[prost(uint64, optional, tag = "14")]
    pub snapshot_age_seconds: Option<u64>,
}

impl Replica {
    /// This replica's own figures.
    pub fn report(&self) -> ReplicaReport {
        let status = self.status();
        let (live, compacted) = self.with_store(|store| (store.live_size(), store.compacted()));
        ReplicaReport {
            id: self.id,
            running: status.running,
            term: status.term,
            leader: status.leader,
            committed: status.committed,
            applied: status.applied,
            first_log_index: status.first_log_index,
            last_log_index: status.last_log_index,
            snapshot_index: status.snapshot,
            snapshot_bytes: u64::try_from(self.metrics().snapshot_bytes.get()).unwrap_or(0),
            keys: u64::try_from(live.keys).unwrap_or(u64::MAX),
            compacted,
            store_bytes: live.bytes,
            snapshot_age_seconds: self.metrics().snapshot_age().map(|age| age.as_secs()),
        }
    }

    /// The figures of the replica at `peer_url`, asked within `deadline`; this replica's own
    /// when the URL is its own. `None`: the peer answers but has no `report` RPC (a build of
    /// peer protocol 1).
    pub async fn report_of(
        &self,
        peer_url: &str,
        deadline: Duration,
    ) -> Result<Option<ReplicaReport>, PeerCallError> {
        if peer_url == self.peer_url {
            return Ok(Some(self.report()));
        }
        match self.peers.call(peer_url, rpc::REPORT, &(), deadline).await {
            Ok(report) => Ok(Some(report)),
            Err(PeerCallError::Transport(TransportError::Rejected { status: 404, .. })) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Server side of the `report` RPC.
pub(super) async fn serve_report(State(replica): State<Arc<Replica>>, _body: Bytes) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/x-protobuf")],
        replica.report().encode_to_vec(),
    )
        .into_response()
}

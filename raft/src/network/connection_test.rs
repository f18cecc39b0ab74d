//! How the raft network client maps transport outcomes to openraft's errors, with a scripted
//! transport in place of the network.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use super::*;
use crate::metrics::ROUND_TRIP_BUCKETS;
use crate::network::Transport;

/// Answers every call with the same outcome, after an optional delay.
struct Scripted {
    delay: Duration,
    answer: fn(&str) -> Result<Bytes, TransportError>,
}

#[async_trait]
impl Transport for Scripted {
    async fn call(
        &self,
        _target: &str,
        rpc: &str,
        _body: Bytes,
        _deadline: Duration,
    ) -> Result<Bytes, TransportError> {
        tokio::time::sleep(self.delay).await;
        (self.answer)(rpc)
    }
}

fn connection(answer: fn(&str) -> Result<Bytes, TransportError>) -> PeerConnection {
    let transport = Scripted {
        delay: Duration::ZERO,
        answer,
    };
    PeerConnection {
        client: PeerClient::new(Arc::new(transport)),
        local: 1,
        target: 2,
        url: "http://peer".to_string(),
        health: Arc::new(PeerHealth::new(2)),
        round_trips: LatencyHistogram::new(&ROUND_TRIP_BUCKETS),
    }
}

fn vote_request() -> VoteRequest<TypeConfig> {
    VoteRequest::new(typ::Vote::new(3, 1), None)
}

fn option() -> RPCOption {
    RPCOption::new(Duration::from_millis(100))
}

#[tokio::test]
async fn a_peer_without_pre_vote_counts_as_granting() {
    let mut c = connection(|rpc| {
        Err(TransportError::Rejected {
            target: "http://peer".to_string(),
            rpc: rpc.to_string(),
            status: 404,
            message: String::new(),
        })
    });
    let answer = c.pre_vote(vote_request(), option()).await.unwrap();
    assert!(answer.vote_granted);
    // A real vote is never synthesized.
    let err = c.vote(vote_request(), option()).await.unwrap_err();
    assert!(matches!(err, RPCError::Unreachable(_)), "{err:?}");
}

#[tokio::test]
async fn deadlines_are_timeouts_and_other_failures_unreachable() {
    let mut timed_out = connection(|rpc| {
        Err(TransportError::Timeout {
            target: "http://peer".to_string(),
            rpc: rpc.to_string(),
            deadline: Duration::from_millis(75),
        })
    });
    let err = timed_out.vote(vote_request(), option()).await.unwrap_err();
    assert!(
        matches!(&err, RPCError::Timeout(t) if t.target == 2 && t.id == 1),
        "{err:?}"
    );

    let mut garbage = connection(|_| Ok(Bytes::from_static(b"\xff\xff\xff")));
    let err = garbage.vote(vote_request(), option()).await.unwrap_err();
    assert!(matches!(err, RPCError::Unreachable(_)), "{err:?}");

    // Decodes, but lacks the required vote.
    let mut empty = connection(|_| Ok(Bytes::new()));
    let err = empty.vote(vote_request(), option()).await.unwrap_err();
    assert!(matches!(err, RPCError::Unreachable(_)), "{err:?}");
}

#[tokio::test]
async fn a_cancelled_snapshot_transfer_stops_at_once() {
    let transport = Scripted {
        delay: Duration::from_secs(30),
        answer: |_| Ok(Bytes::new()),
    };
    let mut c = PeerConnection {
        client: PeerClient::new(Arc::new(transport)),
        local: 1,
        target: 2,
        url: "http://peer".to_string(),
        health: Arc::new(PeerHealth::new(2)),
        round_trips: LatencyHistogram::new(&ROUND_TRIP_BUCKETS),
    };
    let snapshot = SnapshotOf::<TypeConfig, Bytes> {
        meta: typ::SnapshotMeta::default(),
        snapshot: Bytes::new(),
    };
    let cancel = async { ReplicationClosed::new("test") };
    let started = tokio::time::Instant::now();
    let err = c
        .full_snapshot(
            typ::Vote::new_committed(3, 1),
            snapshot,
            cancel,
            RPCOption::new(Duration::from_secs(60)),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StreamingError::Closed(_)), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

//! The peer router refuses malformed or forged peer messages with 400 and keeps working: no
//! input from a peer panics or stops raft.

use apiary_raft::command::Command;
use apiary_raft::network::raft_message::InstallSnapshotRequest;
use apiary_raft::network::replica_message::ForwardWriteRequest;
use apiary_raft::network::replica_message::ForwardWritesRequest;
use apiary_raft::network::replica_message::JoinRequest;
use apiary_raft::network::replica_message::MAX_FORWARD_WRITES;
use apiary_raft::network::replica_message::ReadIndexResponse;
use apiary_raft::network::replica_message::read_index_response::Outcome;
use apiary_raft::network::rpc;
use apiary_raft::replica::peer_router;
use apiary_raft::wire;
use axum::body::Body;
use axum::http::Request;
use axum::http::StatusCode;
use http_body_util::BodyExt;
use prost::Message;
use tower::ServiceExt;

use crate::harness::Cluster;
use crate::harness::put;

async fn post(router: &axum::Router, name: &str, body: Vec<u8>) -> (StatusCode, bytes::Bytes) {
    let request = Request::post(format!("{}{name}", rpc::PATH_PREFIX))
        .body(Body::from(body))
        .expect("request");
    let response = router.clone().oneshot(request).await.expect("infallible");
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_forged_peer_messages_are_refused() {
    let mut cluster = Cluster::founded(1, 1000).await;
    let replica = cluster.replica(1);
    let router = peer_router(replica.clone());

    {
        tracing::info!("--- bytes that are not protobuf");
        for name in [
            rpc::APPEND_ENTRIES,
            rpc::VOTE,
            rpc::TRANSFER_LEADER,
            rpc::INSTALL_SNAPSHOT,
            rpc::FORWARD_WRITE,
            rpc::FORWARD_WRITES,
            rpc::JOIN,
        ] {
            let (status, _) = post(&router, name, vec![0xff, 0xff, 0xff, 0xff]).await;
            assert_eq!(StatusCode::BAD_REQUEST, status, "{name}");
        }
    }
    {
        tracing::info!("--- valid protobuf missing required fields");
        for name in [
            rpc::APPEND_ENTRIES,
            rpc::VOTE,
            rpc::TRANSFER_LEADER,
            rpc::INSTALL_SNAPSHOT,
            rpc::FORWARD_WRITE,
        ] {
            let (status, _) = post(&router, name, Vec::new()).await;
            assert_eq!(StatusCode::BAD_REQUEST, status, "{name}");
        }
        let anonymous = JoinRequest {
            node_id: 0,
            peer_url: String::new(),
        };
        let (status, _) = post(&router, rpc::JOIN, anonymous.encode_to_vec()).await;
        assert_eq!(StatusCode::BAD_REQUEST, status);
        let empty = ForwardWriteRequest { command: None };
        let (status, _) = post(&router, rpc::FORWARD_WRITE, empty.encode_to_vec()).await;
        assert_eq!(StatusCode::BAD_REQUEST, status);
        let too_many = ForwardWritesRequest {
            commands: vec![Command::txn(put("/k", "v")); MAX_FORWARD_WRITES + 1],
        };
        let (status, body) = post(&router, rpc::FORWARD_WRITES, too_many.encode_to_vec()).await;
        assert_eq!(StatusCode::BAD_REQUEST, status);
        assert!(String::from_utf8_lossy(&body).contains("257 forwarded writes"));
    }
    {
        tracing::info!("--- forged snapshots");
        let meta = |term: u64, index: u64| wire::SnapshotMeta {
            last_log_id: Some(wire::LogId {
                term,
                node_id: 9,
                index,
            }),
            last_membership: Some(wire::StoredMembership::default()),
            snapshot_id: String::new(),
        };
        let vote = Some(wire::Vote {
            term: 1,
            node_id: 9,
            committed: true,
        });
        let beyond_term = InstallSnapshotRequest {
            vote,
            meta: Some(meta(5, 100)),
            data: bytes::Bytes::new(),
        };
        let garbage_data = InstallSnapshotRequest {
            vote,
            meta: Some(meta(1, 100)),
            data: bytes::Bytes::from_static(b"\xff\xff\xff"),
        };
        for forged in [beyond_term, garbage_data] {
            let (status, _) = post(&router, rpc::INSTALL_SNAPSHOT, forged.encode_to_vec()).await;
            assert_eq!(StatusCode::BAD_REQUEST, status);
        }
    }

    tracing::info!("--- the replica still serves");
    let written = replica.write(put("/still", "alive")).await.expect("write");
    let (status, body) = post(&router, rpc::READ_INDEX, Vec::new()).await;
    assert_eq!(StatusCode::OK, status);
    let answer = ReadIndexResponse::decode(body).expect("decodes");
    assert!(
        matches!(answer.outcome, Some(Outcome::Index(i)) if i >= written.revision),
        "{answer:?}"
    );
    cluster.stop_all().await;
}

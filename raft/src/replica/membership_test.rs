//! The joining replica's side against scripted members: one that never answers, one that names
//! the leader, and the leader.

use std::sync::Arc;
use std::sync::Mutex;

use async_trait::async_trait;
use bytes::Bytes;
use prost::Message;

use super::*;
use crate::network::Transport;
use crate::network::TransportError;
use crate::network::replica_message::FailureKind;

const DOWN: &str = "http://down";
const FOLLOWER: &str = "http://follower";
const LEADER: &str = "http://leader";

/// How long `DOWN` holds a call: the join deadline, as long as a snapshot may take.
const DOWN_FOR: Duration = Duration::from_secs(5);

/// `DOWN` answers nothing until the call's deadline; `FOLLOWER` names `LEADER`; `LEADER`
/// refuses its first `refusals` calls as unavailable, then admits the replica.
struct Members {
    refusals: Mutex<usize>,
    calls: Mutex<Vec<String>>,
}

#[async_trait]
impl Transport for Members {
    async fn call(
        &self,
        target: &str,
        rpc: &str,
        _body: Bytes,
        deadline: Duration,
    ) -> Result<Bytes, TransportError> {
        assert_eq!(rpc::JOIN, rpc);
        self.calls.lock().unwrap().push(target.to_owned());
        let outcome = match target {
            DOWN => {
                tokio::time::sleep(deadline).await;
                return Err(TransportError::Timeout {
                    target: target.to_owned(),
                    rpc: rpc.to_owned(),
                    deadline,
                });
            }
            FOLLOWER => Outcome::NotLeader(NotLeader {
                leader_id: Some(1),
                leader_url: Some(LEADER.to_owned()),
            }),
            LEADER => {
                let mut refusals = self.refusals.lock().unwrap();
                if *refusals > 0 {
                    *refusals -= 1;
                    Outcome::Failed(Failure::new(FailureKind::Unavailable, "catching up"))
                } else {
                    Outcome::Joined(42)
                }
            }
            other => panic!("unexpected target {other}"),
        };
        let answer = JoinResponse {
            outcome: Some(outcome),
        };
        Ok(answer.encode_to_vec().into())
    }
}

/// Runs a join of replica 4 that asks `DOWN` first, then `FOLLOWER`; how long it took and the
/// targets called.
async fn join(refusals: usize) -> (Duration, Vec<String>) {
    let members = Arc::new(Members {
        refusals: Mutex::new(refusals),
        calls: Mutex::new(Vec::new()),
    });
    let joiner = Joiner {
        peers: PeerClient::new(members.clone()),
        request: JoinRequest {
            node_id: 4,
            peer_url: "http://new".to_owned(),
        },
        targets: vec![DOWN.to_owned(), FOLLOWER.to_owned()],
        first_backoff: Duration::from_millis(10),
        deadline: DOWN_FOR,
    };
    let started = Instant::now();
    joiner.run().await;
    let calls = members.calls.lock().unwrap().clone();
    (started.elapsed(), calls)
}

#[tokio::test]
async fn a_member_that_does_not_answer_holds_up_only_its_own_call() {
    let (took, calls) = join(0).await;
    assert!(took < DOWN_FOR / 2, "took {took:?}: {calls:?}");
    assert_eq!(calls, vec![DOWN, FOLLOWER, LEADER]);
}

#[tokio::test]
async fn a_leader_that_refused_is_asked_again_while_another_call_hangs() {
    let (took, calls) = join(2).await;
    assert!(took < DOWN_FOR / 2, "took {took:?}: {calls:?}");
    assert_eq!(
        3,
        calls.iter().filter(|c| *c == LEADER).count(),
        "{calls:?}"
    );
    assert_eq!(1, calls.iter().filter(|c| *c == DOWN).count(), "{calls:?}");
}

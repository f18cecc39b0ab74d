//! [`SimClient`]: a client host's view of the cluster. It calls the replicas' client API over
//! the simulated network, every call bounded by a deadline, and records each write it makes in
//! a [`History`].

use std::time::Duration;

use apiary_raft::command::CommandResponse;
use apiary_raft::command::Op;
use apiary_raft::command::Txn;
use bytes::Bytes;
use prost::Message;

use crate::client_api::READ_PATH;
use crate::client_api::ReadReply;
use crate::client_api::ReadRequest;
use crate::client_api::STATUS_PATH;
use crate::client_api::StatusReply;
use crate::client_api::WRITE_PATH;
use crate::cluster::client_url;
use crate::history::History;
use crate::history::ReadValue;
use crate::history::WriteOutcome;
use crate::history::WriteRecord;
use crate::net::CallError;
use crate::net::post;

/// Why a client call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The call did not get a success answer.
    #[error("call to {replica} failed")]
    Call {
        /// The replica host called.
        replica: String,
        /// The transport or server failure.
        #[source]
        source: CallError,
    },
    /// The answer was not the expected protobuf message.
    #[error("undecodable answer from {replica}")]
    Decode {
        /// The replica host called.
        replica: String,
        /// The decode failure.
        #[source]
        source: prost::DecodeError,
    },
}

/// A simulated client: calls replica hosts by name (`replica-1`, ...) and records its writes.
#[derive(Debug)]
pub struct SimClient {
    deadline: Duration,
    history: History,
}

/// Virtual time since the simulation started (zero outside a simulation).
pub fn now() -> Duration {
    turmoil::sim_elapsed().unwrap_or_default()
}

impl SimClient {
    /// A client whose every call gives up after `deadline` of virtual time.
    pub fn new(deadline: Duration) -> Self {
        Self {
            deadline,
            history: History::default(),
        }
    }

    /// The history recorded so far.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// Takes the recorded history, leaving an empty one.
    pub fn take_history(&mut self) -> History {
        std::mem::take(&mut self.history)
    }

    async fn call<M: Message + Default>(
        &self,
        replica: &str,
        path: &str,
        body: Vec<u8>,
    ) -> Result<M, ClientError> {
        let answer = post(&client_url(replica), path, Bytes::from(body), self.deadline)
            .await
            .map_err(|source| ClientError::Call {
                replica: replica.to_owned(),
                source,
            })?;
        M::decode(answer).map_err(|source| ClientError::Decode {
            replica: replica.to_owned(),
            source,
        })
    }

    /// Writes `value` at `key` through `replica` and records the write and its outcome.
    pub async fn put(&mut self, replica: &str, key: &str, value: Bytes) -> WriteRecord {
        let txn = Txn {
            compares: Vec::new(),
            success: vec![Op::put(key, value.clone())],
            failure: Vec::new(),
        };
        let sent_at = now();
        let answer: Result<CommandResponse, _> =
            self.call(replica, WRITE_PATH, txn.encode_to_vec()).await;
        let outcome = match answer {
            Ok(response) => WriteOutcome::Acked {
                revision: response.revision,
            },
            Err(error) => WriteOutcome::Unknown {
                reason: error_chain(&error),
            },
        };
        let record = WriteRecord {
            key: key.to_owned(),
            value,
            replica: replica.to_owned(),
            sent_at,
            done_at: now(),
            outcome,
        };
        self.history.record_write(record.clone());
        record
    }

    /// Reads `key` linearizably on `replica`.
    pub async fn read(&self, replica: &str, key: &str) -> Result<Option<ReadValue>, ClientError> {
        let request = ReadRequest {
            key: key.to_owned(),
        };
        let reply: ReadReply = self
            .call(replica, READ_PATH, request.encode_to_vec())
            .await?;
        Ok(reply.kv.map(|kv| ReadValue {
            value: kv.value,
            mod_revision: kv.mod_revision,
        }))
    }

    /// What `replica` knows about the cluster.
    pub async fn status(&self, replica: &str) -> Result<StatusReply, ClientError> {
        self.call(replica, STATUS_PATH, Vec::new()).await
    }
}

/// An error with its sources, one line, for histories and failure reports.
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

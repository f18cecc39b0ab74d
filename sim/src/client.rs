//! [`SimClient`]: a client host's view of the cluster. It writes and reads ConfigMaps through
//! the replicas' resource API and asks their status endpoint who leads, over the simulated
//! network, every call bounded by a deadline, and records each write and read in a
//! [`History`].

use std::cell::RefCell;
use std::time::Duration;

use apiary_node::error::error_chain;
use bytes::Bytes;
use http::Method;
use http::StatusCode;
use prost::Message;
use serde_json::Value;
use serde_json::json;

use crate::cluster::api_url;
use crate::cluster::status_url;
use crate::history::History;
use crate::history::ReadAt;
use crate::history::ReadOutcome;
use crate::history::ReadRecord;
use crate::history::ReadValue;
use crate::history::WriteOp;
use crate::history::WriteOutcome;
use crate::history::WriteRecord;
use crate::net::CallError;
use crate::net::post;
use crate::net::send;
use crate::status_api::STATUS_PATH;
use crate::status_api::StatusReply;

mod generated;
mod paged_list;

pub use generated::GeneratedCreate;

/// The namespace the clients' ConfigMaps live in (created by every replica's bootstrap).
pub const NAMESPACE: &str = "default";
/// The ConfigMap data key holding a write's value.
pub const VALUE_KEY: &str = "value";

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
    /// The answer was not what the API promises.
    #[error("malformed answer from {replica}: {reason}")]
    Malformed {
        /// The replica host called.
        replica: String,
        /// What was wrong with it.
        reason: String,
    },
}

/// A simulated client: calls replica hosts by name (`replica-1`, ...) and records its writes.
/// Its calls take `&self`, so that one client can have several requests in flight at once.
#[derive(Debug)]
pub struct SimClient {
    deadline: Duration,
    /// Never borrowed across an `.await`.
    history: RefCell<History>,
}

/// Virtual time since the simulation started (zero outside a simulation).
pub fn now() -> Duration {
    turmoil::sim_elapsed().unwrap_or_default()
}

/// The collection path of the clients' ConfigMaps.
pub fn configmaps_path() -> String {
    format!("/api/v1/namespaces/{NAMESPACE}/configmaps")
}

/// How a write ended, from its answer (`Ok` with the revision it carried, if any). Rejected
/// only when the API says the write did not happen: a 4xx other than 408 Request Timeout, or a
/// 503 inviting a retry with `Retry-After` (the API answers so only for a write it never
/// proposed). Unknown otherwise: a 504 Timeout says the write may have happened, other 5xx
/// and transport failures promise nothing.
fn write_outcome(answer: Result<Option<u64>, ClientError>) -> WriteOutcome {
    match answer {
        Ok(revision) => WriteOutcome::Acked { revision },
        Err(ClientError::Call {
            source:
                CallError::Status {
                    status,
                    retry_after,
                    body,
                },
            ..
        }) if not_done(status, retry_after) => WriteOutcome::Rejected {
            status: status.as_u16(),
            reason: String::from_utf8_lossy(&body).into_owned(),
        },
        Err(error) => WriteOutcome::Unknown {
            reason: error_chain(&error),
        },
    }
}

/// Whether an answer with `status` (and `Retry-After` seconds) says the write did not happen.
fn not_done(status: StatusCode, retry_after: Option<u64>) -> bool {
    (status.is_client_error() && status != StatusCode::REQUEST_TIMEOUT)
        || (status == StatusCode::SERVICE_UNAVAILABLE && retry_after.is_some())
}

/// The value and revision of a ConfigMap as the API served it.
fn parse_configmap(replica: &str, body: &[u8]) -> Result<ReadValue, ClientError> {
    let object: Value = serde_json::from_slice(body).map_err(|e| ClientError::Malformed {
        replica: replica.to_owned(),
        reason: e.to_string(),
    })?;
    configmap_value(replica, &object)
}

/// The value and revision of a decoded ConfigMap.
fn configmap_value(replica: &str, object: &Value) -> Result<ReadValue, ClientError> {
    let malformed = |reason: String| ClientError::Malformed {
        replica: replica.to_owned(),
        reason,
    };
    let revision = object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .ok_or_else(|| malformed("no numeric metadata.resourceVersion".to_owned()))?;
    let value = object["data"][VALUE_KEY]
        .as_str()
        .ok_or_else(|| malformed(format!("no data.{VALUE_KEY}")))?;
    Ok(ReadValue {
        value: Bytes::copy_from_slice(value.as_bytes()),
        mod_revision: revision,
    })
}

impl SimClient {
    /// A client whose every call gives up after `deadline` of virtual time.
    pub fn new(deadline: Duration) -> Self {
        Self {
            deadline,
            history: RefCell::default(),
        }
    }

    /// Every key written so far, each once, in key order.
    pub fn written_keys(&self) -> Vec<String> {
        self.history.borrow().keys()
    }

    /// The key and revision of the newest write acknowledged with a revision, if any: what a
    /// read-your-writes read asks for.
    pub fn last_acked_write(&self) -> Option<(String, u64)> {
        self.history
            .borrow()
            .writes
            .iter()
            .rev()
            .find_map(|w| Some((w.key.clone(), w.acked_revision()?)))
    }

    /// Takes the recorded history, leaving an empty one.
    pub fn take_history(&self) -> History {
        self.history.take()
    }

    fn call_error(replica: &str) -> impl FnOnce(CallError) -> ClientError + '_ {
        move |source| ClientError::Call {
            replica: replica.to_owned(),
            source,
        }
    }

    /// Creates ConfigMap `name` holding `value` through `replica` and records the write and its
    /// outcome: acknowledged with the answer's `resourceVersion`, rejected by an answer saying
    /// nothing was done, or unknown (see [`write_outcome`]). A write is sent once: an unknown
    /// outcome (a 504 Timeout above all) is never retried blindly.
    pub async fn create(&self, replica: &str, name: &str, value: &str) -> WriteRecord {
        self.write(WriteOp::Create, replica, name, value).await
    }

    /// Replaces ConfigMap `name` with one holding `value` (unconditionally: no
    /// `resourceVersion`) through `replica`, and records it as [`SimClient::create`] does.
    pub async fn update(&self, replica: &str, name: &str, value: &str) -> WriteRecord {
        self.write(WriteOp::Update, replica, name, value).await
    }

    /// Replaces ConfigMap `name` with one holding `value` only if its revision is still
    /// `expected` (`metadata.resourceVersion` in the body) through `replica`, and records it as
    /// [`SimClient::create`] does: a 409 Conflict (the revision moved on) is a rejection.
    pub async fn update_if(
        &self,
        replica: &str,
        name: &str,
        value: &str,
        expected: u64,
    ) -> WriteRecord {
        self.write(WriteOp::UpdateIf { expected }, replica, name, value)
            .await
    }

    /// Deletes ConfigMap `name` through `replica` and records it as [`SimClient::create`]
    /// does, except that an acknowledged delete has no revision: the API answers a `Status`.
    pub async fn delete(&self, replica: &str, name: &str) -> WriteRecord {
        self.write(WriteOp::Delete, replica, name, "").await
    }

    async fn write(&self, op: WriteOp, replica: &str, name: &str, value: &str) -> WriteRecord {
        let object = || {
            let mut metadata = json!({ "name": name });
            if let WriteOp::UpdateIf { expected } = op {
                metadata["resourceVersion"] = Value::String(expected.to_string());
            }
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": metadata,
                "data": { VALUE_KEY: value },
            })
            .to_string()
        };
        let (method, path, body) = match op {
            WriteOp::Create => (Method::POST, configmaps_path(), Bytes::from(object())),
            WriteOp::Update | WriteOp::UpdateIf { .. } => (
                Method::PUT,
                format!("{}/{name}", configmaps_path()),
                Bytes::from(object()),
            ),
            WriteOp::Delete => (
                Method::DELETE,
                format!("{}/{name}", configmaps_path()),
                Bytes::new(),
            ),
        };
        let sent_at = now();
        let answer = send(
            method,
            &api_url(replica),
            &path,
            "application/json",
            body,
            self.deadline,
        )
        .await
        .map_err(Self::call_error(replica))
        .and_then(|answer| match op {
            WriteOp::Create | WriteOp::Update | WriteOp::UpdateIf { .. } => {
                parse_configmap(replica, &answer).map(|written| Some(written.mod_revision))
            }
            WriteOp::Delete => Ok(None),
        });
        let outcome = write_outcome(answer);
        let record = WriteRecord {
            op,
            key: name.to_owned(),
            value: Bytes::copy_from_slice(value.as_bytes()),
            replica: replica.to_owned(),
            sent_at,
            done_at: now(),
            outcome,
        };
        self.history.borrow_mut().record_write(record.clone());
        record
    }

    /// A backup of the cluster (`GET /apiary/v1/snapshot`) from `replica`: the file
    /// `apiary snapshot save` writes.
    pub async fn backup(&self, replica: &str) -> Result<Bytes, ClientError> {
        send(
            Method::GET,
            &api_url(replica),
            "/apiary/v1/snapshot",
            "application/json",
            Bytes::new(),
            self.deadline,
        )
        .await
        .map_err(Self::call_error(replica))
    }

    /// The body of one quorum list of the ConfigMaps on `replica` (no `resourceVersion`).
    async fn quorum_list(&self, replica: &str) -> Result<Bytes, ClientError> {
        send(
            Method::GET,
            &api_url(replica),
            &configmaps_path(),
            "application/json",
            Bytes::new(),
            self.deadline,
        )
        .await
        .map_err(Self::call_error(replica))
    }

    /// Lists the ConfigMaps on `replica` with a quorum read (no `resourceVersion`) and returns
    /// the list's `metadata.resourceVersion`: the revision a watch started from it continues
    /// at. Not recorded in the history (a watcher records it in its own log).
    pub async fn list_revision(&self, replica: &str) -> Result<u64, ClientError> {
        let body = self.quorum_list(replica).await?;
        serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|list| list["metadata"]["resourceVersion"].as_str()?.parse().ok())
            .ok_or_else(|| ClientError::Malformed {
                replica: replica.to_owned(),
                reason: "a list without a numeric metadata.resourceVersion".to_owned(),
            })
    }

    /// Reads ConfigMap `name` on `replica` with a quorum read (no `resourceVersion`: "Most
    /// Recent"), records the read, and returns what was served: `None` when the API answers
    /// 404.
    pub async fn read(&self, replica: &str, name: &str) -> Result<Option<ReadValue>, ClientError> {
        self.read_at(replica, name, ReadAt::Quorum).await
    }

    /// Reads ConfigMap `name` on `replica` at `at` (`resourceVersion` unset, `0` or `R`),
    /// records the read, and returns what was served: `None` when the API answers 404. A 504
    /// "Too large resource version" is a failed read.
    pub async fn read_at(
        &self,
        replica: &str,
        name: &str,
        at: ReadAt,
    ) -> Result<Option<ReadValue>, ClientError> {
        let query = match at {
            ReadAt::Quorum => String::new(),
            ReadAt::Any => "?resourceVersion=0".to_owned(),
            ReadAt::NotOlderThan(revision) => format!("?resourceVersion={revision}"),
        };
        let sent_at = now();
        let answer = send(
            Method::GET,
            &api_url(replica),
            &format!("{}/{name}{query}", configmaps_path()),
            "application/json",
            Bytes::new(),
            self.deadline,
        )
        .await;
        let result = match answer {
            Ok(body) => parse_configmap(replica, &body).map(Some),
            Err(CallError::Status { status, .. }) if status == StatusCode::NOT_FOUND => Ok(None),
            Err(source) => Err(Self::call_error(replica)(source)),
        };
        let outcome = match &result {
            Ok(served) => ReadOutcome::Served(served.clone()),
            Err(error) => ReadOutcome::Failed {
                reason: error_chain(error),
            },
        };
        self.history.borrow_mut().record_read(ReadRecord {
            key: name.to_owned(),
            at,
            replica: replica.to_owned(),
            sent_at,
            done_at: now(),
            outcome,
        });
        result
    }

    /// What `replica` knows about the cluster.
    pub async fn status(&self, replica: &str) -> Result<StatusReply, ClientError> {
        let answer = post(
            &status_url(replica),
            STATUS_PATH,
            Bytes::new(),
            self.deadline,
        )
        .await
        .map_err(Self::call_error(replica))?;
        StatusReply::decode(answer).map_err(|e| ClientError::Malformed {
            replica: replica.to_owned(),
            reason: e.to_string(),
        })
    }
}

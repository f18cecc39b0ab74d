//! Creates named by the server (`metadata.generateName`), the writes a blind retry would
//! duplicate. They stay out of the [`crate::history::History`], whose keys are names the client
//! chose; each is returned with its outcome, and [`SimClient::values`] lists what the store
//! holds, so that a scenario can check by value that each happened at most once, and exactly
//! once if it was acknowledged.

use std::collections::BTreeMap;

use bytes::Bytes;
use http::Method;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use super::ClientError;
use super::SimClient;
use super::VALUE_KEY;
use super::configmap_value;
use super::configmaps_path;
use super::parse_configmap;
use super::write_outcome;
use crate::cluster::api_url;
use crate::history::WriteOutcome;
use crate::net::CallError;
use crate::net::send;

/// One create with `generateName` and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedCreate {
    /// The replica host the request went to.
    pub replica: String,
    /// The value written (each create's own).
    pub value: Bytes,
    /// The name the API chose, when it acknowledged the create.
    pub name: Option<String>,
    /// The outcome, as [`SimClient::create`] records one.
    pub outcome: WriteOutcome,
    /// Whether the API answered 504 Timeout: the create may have happened.
    pub timed_out: bool,
}

impl SimClient {
    /// Creates a ConfigMap named `prefix` plus a suffix the API picks, holding `value`, through
    /// `replica`; sent once, never retried.
    pub async fn create_generated(
        &self,
        replica: &str,
        prefix: &str,
        value: &str,
    ) -> GeneratedCreate {
        let object = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": { "generateName": prefix },
            "data": { VALUE_KEY: value },
        });
        let answer = send(
            Method::POST,
            &api_url(replica),
            &configmaps_path(),
            "application/json",
            Bytes::from(object.to_string()),
            self.deadline,
        )
        .await;
        let timed_out = matches!(
            &answer,
            Err(CallError::Status { status, .. }) if *status == StatusCode::GATEWAY_TIMEOUT
        );
        let answer = answer.map_err(Self::call_error(replica));
        let name = answer
            .as_ref()
            .ok()
            .and_then(|body| serde_json::from_slice::<Value>(body).ok())
            .and_then(|object| Some(object["metadata"]["name"].as_str()?.to_owned()));
        let revision = answer.and_then(|body| {
            parse_configmap(replica, &body).map(|written| Some(written.mod_revision))
        });
        GeneratedCreate {
            replica: replica.to_owned(),
            value: Bytes::copy_from_slice(value.as_bytes()),
            name,
            outcome: write_outcome(revision),
            timed_out,
        }
    }

    /// The value of every ConfigMap by name, from one quorum list on `replica` (not recorded).
    pub async fn values(&self, replica: &str) -> Result<BTreeMap<String, Bytes>, ClientError> {
        let body = self.quorum_list(replica).await?;
        let malformed = |reason: &str| ClientError::Malformed {
            replica: replica.to_owned(),
            reason: reason.to_owned(),
        };
        let list: Value = serde_json::from_slice(&body).map_err(|e| malformed(&e.to_string()))?;
        list["items"]
            .as_array()
            .ok_or_else(|| malformed("a list without items"))?
            .iter()
            .map(|item| {
                let name = item["metadata"]["name"]
                    .as_str()
                    .ok_or_else(|| malformed("an item without metadata.name"))?;
                Ok((name.to_owned(), configmap_value(replica, item)?.value))
            })
            .collect()
    }
}

//! Paged lists: `GET .../configmaps?limit=N`, then each `continue` page on another replica,
//! every page recorded with what it served (R-RES-167, R-HA-008).

use bytes::Bytes;
use http::Method;
use http::StatusCode;
use rand::Rng;
use rand::rngs::StdRng;
use serde_json::Value;

use super::ClientError;
use super::SimClient;
use super::configmap_value;
use super::configmaps_path;
use super::now;
use crate::cluster::api_url;
use crate::history::ListItem;
use crate::history::ListRecord;
use crate::history::Page;
use crate::history::PageOutcome;
use crate::history::PageRecord;
use crate::net::CallError;
use crate::net::send;
use apiary_node::error::error_chain;

/// A decoded `ConfigMapList` page.
fn parse_page(replica: &str, body: &[u8]) -> Result<Page, ClientError> {
    let malformed = |reason: String| ClientError::Malformed {
        replica: replica.to_owned(),
        reason,
    };
    let list: Value = serde_json::from_slice(body).map_err(|e| malformed(e.to_string()))?;
    let metadata = &list["metadata"];
    let revision = metadata["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .ok_or_else(|| malformed("a list without a numeric metadata.resourceVersion".to_owned()))?;
    let items = list["items"]
        .as_array()
        .ok_or_else(|| malformed("a list without items".to_owned()))?
        .iter()
        .map(|item| {
            let key = item["metadata"]["name"]
                .as_str()
                .ok_or_else(|| malformed("an item without metadata.name".to_owned()))?;
            Ok(ListItem {
                key: key.to_owned(),
                value: configmap_value(replica, item)?,
            })
        })
        .collect::<Result<Vec<_>, ClientError>>()?;
    Ok(Page {
        revision,
        items,
        continue_token: metadata["continue"].as_str().map(str::to_owned),
        remaining: metadata["remainingItemCount"].as_u64(),
    })
}

impl SimClient {
    /// Lists the ConfigMaps `limit` at a time: the first page with a quorum list on a random
    /// replica of `hosts`, each following page with its `continue` token on a different random
    /// replica, until the last page or the first page not served (a 410 for an expired token
    /// included). Records the list and returns it.
    pub async fn list_paged(&self, hosts: &[String], limit: u64, rng: &mut StdRng) -> ListRecord {
        let mut record = ListRecord {
            limit,
            pages: Vec::new(),
        };
        let mut host = rng.random_range(0..hosts.len());
        let mut token: Option<String> = None;
        loop {
            let replica = &hosts[host];
            let query = match &token {
                Some(token) => format!("?limit={limit}&continue={token}"),
                None => format!("?limit={limit}"),
            };
            let sent_at = now();
            let answer = send(
                Method::GET,
                &api_url(replica),
                &format!("{}{query}", configmaps_path()),
                "application/json",
                Bytes::new(),
                self.deadline,
            )
            .await;
            let outcome = match answer {
                Ok(body) => match parse_page(replica, &body) {
                    Ok(page) => PageOutcome::Served(page),
                    Err(error) => PageOutcome::Failed {
                        reason: error_chain(&error),
                    },
                },
                Err(CallError::Status { status, .. }) if status == StatusCode::GONE => {
                    PageOutcome::Gone
                }
                Err(source) => PageOutcome::Failed {
                    reason: error_chain(&Self::call_error(replica)(source)),
                },
            };
            token = match &outcome {
                PageOutcome::Served(page) => page.continue_token.clone(),
                PageOutcome::Gone | PageOutcome::Failed { .. } => None,
            };
            record.pages.push(PageRecord {
                replica: replica.clone(),
                sent_at,
                done_at: now(),
                outcome,
            });
            if token.is_none() {
                break;
            }
            if hosts.len() > 1 {
                // Another replica than the one that issued the token.
                host = (host + rng.random_range(1..hosts.len())) % hosts.len();
            }
        }
        self.history.borrow_mut().record_list(record.clone());
        record
    }
}

//! Client steps that scenarios are built from: wait for an agreed leader, write until
//! acknowledged, read every replica's final view, see every watcher reach the fence. Each is
//! bounded in virtual time and reports [`ScenarioError::Stuck`] with the last error when the
//! bound passes.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::time::Duration;

use apiary_raft::typ::NodeId;

use crate::client::SimClient;
use crate::client::now;
use crate::history::ReplicaView;
use crate::history::WriteRecord;
use crate::scenario::ScenarioError;
use crate::watch_history::WatchLog;
use apiary_node::error::error_chain;

/// Pause between two attempts of a step: long enough not to flood a cluster that is electing,
/// short against every bound.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

pub(crate) fn stuck(phase: &str, bound: Duration, last: String) -> ScenarioError {
    ScenarioError::Stuck {
        phase: phase.to_owned(),
        bound,
        last,
    }
}

/// Waits until every host in `hosts` names the same leader, other than `not`, and returns it.
pub async fn agreed_leader(
    client: &SimClient,
    hosts: &[String],
    not: Option<NodeId>,
    bound: Duration,
) -> Result<NodeId, ScenarioError> {
    let start = now();
    let mut last = String::from("no status yet");
    loop {
        let mut leaders = BTreeSet::new();
        for host in hosts {
            match client.status(host).await {
                Ok(status) => {
                    leaders.insert(status.leader);
                }
                Err(error) => {
                    last = error_chain(&error);
                    leaders.insert(None);
                }
            }
        }
        let leaders: Vec<Option<NodeId>> = leaders.into_iter().collect();
        if let [Some(leader)] = leaders[..]
            && Some(leader) != not
        {
            return Ok(leader);
        }
        last = format!("{last}; leaders seen {leaders:?}");
        if now().saturating_sub(start) > bound {
            return Err(stuck("electing an agreed leader", bound, last));
        }
        tokio::time::sleep(RETRY_PAUSE).await;
    }
}

/// Creates ConfigMaps through `host` until one is acknowledged, each attempt under its own key
/// (`{key}.{attempt}`) so that every write in the history has a key of its own. Returns the
/// acknowledged write.
pub async fn write_acked(
    client: &SimClient,
    host: &str,
    key: &str,
    bound: Duration,
) -> Result<WriteRecord, ScenarioError> {
    let start = now();
    let mut last = String::from("no attempt yet");
    for attempt in 0u32.. {
        let key = format!("{key}.{attempt}");
        let value = format!("{key} via {host}");
        let record = client.create(host, &key, &value).await;
        if record.acked_revision().is_some() {
            return Ok(record);
        }
        last = format!("{record}");
        if now().saturating_sub(start) > bound {
            break;
        }
        tokio::time::sleep(RETRY_PAUSE).await;
    }
    Err(stuck(&format!("writing {key} through {host}"), bound, last))
}

/// Reads every ConfigMap of `keys` with a quorum read on `host`, retrying each until it succeeds.
/// Waits for a leader all of `hosts` agree on, then reads every key the client wrote on each
/// of them: the final views the store checkers compare.
pub async fn final_views(
    client: &SimClient,
    hosts: &[String],
    bound: Duration,
) -> Result<BTreeMap<String, ReplicaView>, ScenarioError> {
    agreed_leader(client, hosts, None, bound).await?;
    let keys = client.written_keys();
    let mut views = BTreeMap::new();
    for host in hosts {
        views.insert(host.clone(), final_view(client, host, &keys, bound).await?);
    }
    Ok(views)
}

pub async fn final_view(
    client: &SimClient,
    host: &str,
    keys: &[String],
    bound: Duration,
) -> Result<ReplicaView, ScenarioError> {
    let start = now();
    let mut view = ReplicaView::default();
    for key in keys {
        let read = loop {
            match client.read(host, key).await {
                Ok(read) => break read,
                Err(error) => {
                    if now().saturating_sub(start) > bound {
                        let phase = format!("reading the final view of {host}");
                        return Err(stuck(&phase, bound, error_chain(&error)));
                    }
                    tokio::time::sleep(RETRY_PAUSE).await;
                }
            }
        };
        view.reads.insert(key.clone(), read);
    }
    Ok(view)
}

/// Fails as stuck unless every watcher's progress (its newest event or bookmark) reached
/// `target`, the fence's revision, within `bound`.
pub fn watchers_caught_up(
    logs: &[WatchLog],
    target: u64,
    bound: Duration,
) -> Result<(), ScenarioError> {
    for log in logs {
        let reached = log.progress().unwrap_or(0);
        if reached < target {
            let last = format!("reached {reached} of {target}: {:?}", log.entries.last());
            let phase = format!("{} catching up to the fence", log.watcher);
            return Err(stuck(&phase, bound, last));
        }
    }
    Ok(())
}

//! The cluster's versions, kept in the replicated store outside every resource key space:
//! each replica records what it runs, speaks and stores under [`REPLICAS_PREFIX`]`<id>` when
//! it starts, and the leader asks every voter which peer protocol it speaks (the `version`
//! peer RPC, [`apiary_raft::version`]) and records the cluster's EFFECTIVE version at
//! [`EFFECTIVE_KEY`]: the lowest newest-protocol of the voters.
//!
//! A voter that has no `version` RPC (a build before protocol 2) speaks 1; a voter that does
//! not answer keeps what it last announced (1 if it never did), so a stopped replica never
//! raises the effective version. The effective version rises once every voter announces a
//! newer protocol and falls as soon as one announces an older one (a rollback).
//!
//! What every replica must understand is used only once the effective version allows it
//! ([`ClusterVersions::allows`]; rule 4b of the specification): see `apiary_raft::version`
//! for the rule and [`crate::cluster_gates`] for the cluster-wide feature gates.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use apiary_raft::command::Compare;
use apiary_raft::command::Op;
use apiary_raft::command::Txn;
use apiary_raft::network::Transport;
use apiary_raft::replica::Replica;
use apiary_raft::typ::NodeId;
use apiary_raft::version::ProtocolRange;
use apiary_raft::version::UNANNOUNCED_PROTOCOL_VERSION;
use apiary_raft::version::VersionAnswer;
use apiary_raft::version::probe;
use serde::Deserialize;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

/// Where each replica records its versions: this prefix, then its node id.
pub const REPLICAS_PREFIX: &str = "/apiary/cluster/replicas/";
/// Where the leader records the cluster's effective version.
pub const EFFECTIVE_KEY: &str = "/apiary/cluster/version";

/// How often the leader asks the voters what they speak.
const PERIOD: Duration = Duration::from_secs(2);
/// How long one voter may take to answer.
const PROBE_DEADLINE: Duration = Duration::from_secs(1);
/// The pause between two attempts to record this replica's versions.
const RETRY: Duration = Duration::from_millis(500);
/// The most replica records read (a cluster has a handful of replicas).
const MAX_RECORDS: usize = 1024;

/// This binary's version: the crate version, and the git commit when the build was given one
/// in `APIARY_GIT_COMMIT`.
pub fn binary_version() -> String {
    let version = env!("CARGO_PKG_VERSION");
    match option_env!("APIARY_GIT_COMMIT") {
        Some(commit) => format!("{version} ({commit})"),
        None => version.to_owned(),
    }
}

/// What one replica runs, speaks and stores, as it recorded at its last start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaVersions {
    /// The binary's version.
    pub binary: String,
    /// The oldest peer protocol it speaks.
    pub oldest_protocol: u32,
    /// The newest peer protocol it speaks.
    pub newest_protocol: u32,
    /// The snapshot file format it writes.
    pub snapshot_format: u32,
    /// The log format it writes.
    pub log_format: u32,
}

impl From<&VersionAnswer> for ReplicaVersions {
    fn from(answer: &VersionAnswer) -> Self {
        Self {
            binary: answer.binary.clone(),
            oldest_protocol: answer.oldest_protocol,
            newest_protocol: answer.newest_protocol,
            snapshot_format: answer.snapshot_format,
            log_format: answer.log_format,
        }
    }
}

/// The leader's record: the effective version and what each voter announced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EffectiveVersion {
    /// The lowest of `voters`.
    pub version: u32,
    /// Each voter's newest protocol, as it last announced it.
    pub voters: BTreeMap<NodeId, u32>,
}

/// The cluster's versions as this replica's store holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterVersions {
    /// The effective version; [`UNANNOUNCED_PROTOCOL_VERSION`] until a leader recorded one.
    pub effective: u32,
    /// What each voter announced when the leader last looked (empty until it did).
    pub voters: BTreeMap<NodeId, u32>,
    /// What each replica recorded at its last start (none for a build before protocol 2).
    pub replicas: BTreeMap<NodeId, ReplicaVersions>,
}

impl ClusterVersions {
    /// Whether something introduced at protocol `since` may be used: every voter speaks it.
    pub fn allows(&self, since: u32) -> bool {
        self.effective >= since
    }
}

/// A version record in the store does not decode.
#[derive(Debug, thiserror::Error)]
pub enum ClusterVersionError {
    /// The local store refused the read (it is being replaced by a snapshot, say): retry.
    #[error("reading the cluster's version records failed: {0}")]
    Read(String),
    /// A record holds something else than versions.
    #[error("the version record {key} is unreadable")]
    Unreadable {
        /// The record's key.
        key: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

fn decode<T: for<'de> Deserialize<'de>>(key: &str, value: &[u8]) -> Result<T, ClusterVersionError> {
    serde_json::from_slice(value).map_err(|source| ClusterVersionError::Unreadable {
        key: key.to_owned(),
        source,
    })
}

/// The effective version record and its modification revision, if there is one.
fn read_effective(
    replica: &Replica,
) -> Result<Option<(EffectiveVersion, u64)>, ClusterVersionError> {
    let kv = replica
        .with_store(|store| store.get(EFFECTIVE_KEY, None))
        .map_err(|e| ClusterVersionError::Read(e.to_string()))?;
    kv.map(|kv| Ok((decode(EFFECTIVE_KEY, &kv.value)?, kv.mod_revision)))
        .transpose()
}

/// The cluster's versions in this replica's store (a local read: after
/// [`Replica::read_index`] it is linearizable).
pub fn read(replica: &Replica) -> Result<ClusterVersions, ClusterVersionError> {
    let effective = read_effective(replica)?.map(|(record, _)| record);
    let records = replica
        .with_store(|store| store.range_prefix(REPLICAS_PREFIX, None, MAX_RECORDS))
        .map_err(|e| ClusterVersionError::Read(e.to_string()))?;
    let mut replicas = BTreeMap::new();
    for kv in records.kvs {
        let Some(id) = kv
            .key
            .strip_prefix(REPLICAS_PREFIX)
            .and_then(|id| id.parse::<NodeId>().ok())
        else {
            continue;
        };
        replicas.insert(id, decode(&kv.key, &kv.value)?);
    }
    Ok(ClusterVersions {
        effective: effective
            .as_ref()
            .map_or(UNANNOUNCED_PROTOCOL_VERSION, |e| e.version),
        voters: effective.map(|e| e.voters).unwrap_or_default(),
        replicas,
    })
}

/// The effective version from what each voter announced now (`None`: it did not answer),
/// falling back to what it announced before, else to [`UNANNOUNCED_PROTOCOL_VERSION`].
pub fn effective(
    announced: &BTreeMap<NodeId, Option<u32>>,
    previous: Option<&EffectiveVersion>,
) -> EffectiveVersion {
    let voters: BTreeMap<NodeId, u32> = announced
        .iter()
        .map(|(id, now)| {
            let before = previous.and_then(|p| p.voters.get(id).copied());
            (*id, now.or(before).unwrap_or(UNANNOUNCED_PROTOCOL_VERSION))
        })
        .collect();
    EffectiveVersion {
        version: voters
            .values()
            .copied()
            .min()
            .unwrap_or(UNANNOUNCED_PROTOCOL_VERSION),
        voters,
    }
}

/// Records this replica's versions (replacing what it recorded before).
async fn record_self(replica: &Replica, local: &VersionAnswer) -> Result<(), String> {
    let key = format!("{REPLICAS_PREFIX}{}", replica.id());
    let value = serde_json::to_vec(&ReplicaVersions::from(local)).map_err(|e| e.to_string())?;
    let txn = Txn {
        compares: vec![],
        success: vec![Op::put(key, value)],
        failure: vec![],
    };
    replica.write(txn).await.map_err(|e| e.to_string())?;
    Ok(())
}

/// One pass of the leader: asks every voter what it speaks and records the effective version
/// when it (or a voter's announcement) changed. Two leaders cannot both write: the record is
/// replaced only at the revision it was read at.
async fn pass(
    replica: &Replica,
    transport: &dyn Transport,
    local: &VersionAnswer,
) -> Result<(), String> {
    let mut announced = BTreeMap::new();
    for (id, url) in replica.voter_urls() {
        let version = if id == replica.id() {
            Some(local.newest_protocol)
        } else {
            probe(transport, &url, PROBE_DEADLINE)
                .await
                .map(|answer| answer.newest_protocol)
                .ok()
        };
        announced.insert(id, version);
    }
    let previous = read_effective(replica).map_err(|e| e.to_string())?;
    let next = effective(&announced, previous.as_ref().map(|(record, _)| record));
    let compare = match &previous {
        Some((record, _)) if *record == next => return Ok(()),
        Some((_, revision)) => Compare::mod_revision(EFFECTIVE_KEY, *revision),
        None => Compare::exists(EFFECTIVE_KEY, false),
    };
    let value = serde_json::to_vec(&next).map_err(|e| e.to_string())?;
    let txn = Txn {
        compares: vec![compare],
        success: vec![Op::put(EFFECTIVE_KEY, value)],
        failure: vec![],
    };
    replica.write(txn).await.map_err(|e| e.to_string())?;
    tracing::info!(
        version = next.version,
        voters = ?next.voters,
        "recorded the cluster's effective version"
    );
    Ok(())
}

/// Records this replica's versions, then, while it leads, keeps the effective version
/// current; ends when `stop` is cancelled.
pub async fn run(
    replica: Arc<Replica>,
    transport: Arc<dyn Transport>,
    protocol: ProtocolRange,
    stop: CancellationToken,
) {
    let local = VersionAnswer::local(protocol, &binary_version());
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            recorded = record_self(&replica, &local) => match recorded {
                Ok(()) => break,
                Err(error) => {
                    tracing::debug!(%error, "cannot record this replica's versions yet; retrying");
                }
            },
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(RETRY) => {}
        }
    }
    let mut tick = tokio::time::interval(PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        if !replica.status().is_leader {
            continue;
        }
        tokio::select! {
            () = stop.cancelled() => return,
            done = pass(&replica, &*transport, &local) => if let Err(error) = done {
                tracing::debug!(%error, "the cluster's effective version was not recorded; retrying");
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn announced(pairs: &[(NodeId, Option<u32>)]) -> BTreeMap<NodeId, Option<u32>> {
        pairs.iter().copied().collect()
    }

    // R-HA-015: the effective version is the lowest any voter speaks; one older voter keeps it
    // down, and it rises only once every voter announces the newer protocol.
    #[test]
    fn the_lowest_voter_sets_the_effective_version() {
        let mixed = effective(
            &announced(&[(1, Some(2)), (2, Some(1)), (3, Some(2))]),
            None,
        );
        assert_eq!(mixed.version, 1);
        assert!(
            !ClusterVersions {
                effective: mixed.version,
                voters: mixed.voters.clone(),
                replicas: BTreeMap::new(),
            }
            .allows(2)
        );
        let upgraded = effective(
            &announced(&[(1, Some(2)), (2, Some(2)), (3, Some(2))]),
            Some(&mixed),
        );
        assert_eq!(upgraded.version, 2);
        let rolled_back = effective(
            &announced(&[(1, Some(2)), (2, Some(2)), (3, Some(1))]),
            Some(&upgraded),
        );
        assert_eq!(rolled_back.version, 1);
    }

    // A voter that does not answer keeps its last announcement, or counts as the oldest
    // protocol if it never announced one: silence never raises the effective version.
    #[test]
    fn a_silent_voter_never_raises_the_effective_version() {
        let never = effective(&announced(&[(1, Some(2)), (2, None)]), None);
        assert_eq!(never.version, 1);
        let before = effective(&announced(&[(1, Some(2)), (2, Some(2))]), None);
        let silent = effective(&announced(&[(1, Some(2)), (2, None)]), Some(&before));
        assert_eq!(silent, before);
    }
}

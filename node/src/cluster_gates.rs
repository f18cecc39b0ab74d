//! One value per cluster for the feature gates that change what is stored or replicated
//! ([`apiary_api::features::Gate::cluster_wide`]): the first replica to start records its values
//! in the replicated store; every later start compares its own with that record and refuses to
//! start on a difference, so no two replicas ever write differently. A deliberate change
//! replaces the record: every replica stopped, one started with the new `--feature-gates` and
//! `--replace-cluster-feature-gates`, then the others with the new `--feature-gates`.
//!
//! A cluster-wide gate added after protocol 1 is listed in [`SINCE_PROTOCOL`] with the peer
//! protocol that introduced it (rule 4b: what every replica must understand waits until every
//! replica does). A replica that enables such a gate refuses to start while the cluster's
//! effective version ([`crate::cluster_version`]) is below that protocol, so the gate takes
//! effect only once every voter runs a build that knows it AND every replica's setting agrees.

use std::collections::BTreeMap;
use std::time::Duration;

use apiary_api::FeatureGates;
use apiary_raft::command::Compare;
use apiary_raft::command::Op;
use apiary_raft::command::Txn;
use apiary_raft::replica::Replica;

/// The key of the cluster's record, outside every resource's key space.
pub const RECORD_KEY: &str = "/apiary/cluster/feature-gates";

/// The cluster-wide gates introduced after protocol 1, with the peer protocol each needs
/// (every other cluster-wide gate is known to every protocol).
pub const SINCE_PROTOCOL: &[(&str, u32)] = &[];

/// The pause between two attempts while no leader can take the record's write.
const RETRY: Duration = Duration::from_millis(500);

/// How a starting replica treats the cluster's record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GateRecord {
    /// Records this replica's values if the cluster has none, else requires them to agree.
    #[default]
    Agree,
    /// Replaces the cluster's values with this replica's (`--replace-cluster-feature-gates`).
    Replace,
}

/// Why a replica refuses to start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateAgreementError {
    /// A cluster-wide gate is set differently here and in the cluster's record.
    #[error(
        "feature gate {gate} is {local} on this replica but {cluster} in the cluster; it changes \
         what is stored, so every replica must agree. Start this replica with \
         --feature-gates={gate}={cluster}, or change it for the whole cluster: stop every \
         replica, start one with --feature-gates={gate}={local} --replace-cluster-feature-gates, \
         then the others with --feature-gates={gate}={local}"
    )]
    Differs {
        /// The gate.
        gate: String,
        /// This replica's value.
        local: bool,
        /// The cluster's value.
        cluster: bool,
    },
    /// A gate is enabled here that the cluster's effective version does not allow yet.
    #[error(
        "feature gate {gate} changes what every replica stores and needs peer protocol {since}, \
         but the cluster's effective version is {effective}: a voter runs an older build. \
         Upgrade every replica first, then enable it"
    )]
    AheadOfCluster {
        /// The gate.
        gate: String,
        /// The protocol that introduced it.
        since: u32,
        /// The cluster's effective version.
        effective: u32,
    },
    /// The record holds something else than gate values.
    #[error("the cluster's feature gate record {RECORD_KEY} is unreadable: {reason}")]
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// This replica's cluster-wide gate values, as recorded.
fn record(gates: &FeatureGates) -> BTreeMap<String, bool> {
    gates
        .cluster_wide()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
}

/// Fails on the first gate whose value differs between `local` and `cluster`. A gate the
/// record does not name (one a newer binary added) is not a difference.
pub fn first_difference(
    local: &BTreeMap<String, bool>,
    cluster: &BTreeMap<String, bool>,
) -> Result<(), GateAgreementError> {
    for (gate, &local) in local {
        if let Some(&cluster) = cluster.get(gate)
            && cluster != local
        {
            return Err(GateAgreementError::Differs {
                gate: gate.clone(),
                local,
                cluster,
            });
        }
    }
    Ok(())
}

/// Fails on the first gate enabled in `local` whose protocol in `since` is above `effective`.
pub fn first_held_back(
    local: &BTreeMap<String, bool>,
    since: &[(&str, u32)],
    effective: u32,
) -> Result<(), GateAgreementError> {
    for &(gate, since) in since {
        if local.get(gate) == Some(&true) && since > effective {
            return Err(GateAgreementError::AheadOfCluster {
                gate: gate.to_owned(),
                since,
                effective,
            });
        }
    }
    Ok(())
}

/// Makes `gates` the cluster's record or checks them against it, as `mode` says, then checks
/// that the cluster's effective version allows every enabled gate; retries while no leader can
/// take the write (the record is read and written in one transaction).
pub async fn ensure_agreement(
    replica: &Replica,
    gates: &FeatureGates,
    mode: GateRecord,
) -> Result<(), GateAgreementError> {
    let local = record(gates);
    agree(replica, &local, mode).await?;
    let versions =
        crate::cluster_version::read(replica).map_err(|e| GateAgreementError::Unreadable {
            reason: e.to_string(),
        })?;
    first_held_back(&local, SINCE_PROTOCOL, versions.effective)
}

/// Records `local` or compares it with the cluster's record.
async fn agree(
    replica: &Replica,
    local: &BTreeMap<String, bool>,
    mode: GateRecord,
) -> Result<(), GateAgreementError> {
    let encoded = serde_json::to_vec(local).map_err(|e| GateAgreementError::Unreadable {
        reason: e.to_string(),
    })?;
    let txn = match mode {
        GateRecord::Agree => Txn {
            compares: vec![Compare::exists(RECORD_KEY, false)],
            success: vec![Op::put(RECORD_KEY, encoded)],
            failure: vec![Op::get(RECORD_KEY)],
        },
        GateRecord::Replace => Txn {
            compares: vec![],
            success: vec![Op::put(RECORD_KEY, encoded)],
            failure: vec![],
        },
    };
    let answer = loop {
        match replica.write(txn.clone()).await {
            Ok(answer) => break answer,
            Err(error) => {
                tracing::warn!(%error, "cannot reach the cluster's feature gate record yet; retrying");
                tokio::time::sleep(RETRY).await;
            }
        }
    };
    if answer.succeeded {
        if mode == GateRecord::Replace {
            tracing::warn!(gates = ?local, "replaced the cluster's feature gates");
        }
        return Ok(());
    }
    let stored = answer
        .results
        .first()
        .and_then(|result| result.kv.as_ref())
        .ok_or_else(|| GateAgreementError::Unreadable {
            reason: "the record vanished while it was read".to_owned(),
        })?;
    let cluster: BTreeMap<String, bool> =
        serde_json::from_slice(&stored.value).map_err(|e| GateAgreementError::Unreadable {
            reason: e.to_string(),
        })?;
    first_difference(local, &cluster)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, bool)]) -> BTreeMap<String, bool> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    // Only the cluster-wide gates are recorded: CBOR storage and unsafe deletion.
    #[test]
    fn the_record_holds_the_cluster_wide_gates() {
        let (gates, _) = FeatureGates::parse(["CBORServingAndStorage=true"]).unwrap();
        assert_eq!(
            record(&gates),
            values(&[
                ("AllowUnsafeMalformedObjectDeletion", false),
                ("CBORServingAndStorage", true),
            ])
        );
    }

    // A difference names the gate and both values; a gate the record lacks is none.
    #[test]
    fn a_difference_names_the_gate_and_both_values() {
        let local = values(&[("CBORServingAndStorage", true), ("New", true)]);
        let cluster = values(&[("CBORServingAndStorage", false)]);
        let error = first_difference(&local, &cluster).unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with(
                "feature gate CBORServingAndStorage is true on this replica but false in the cluster"
            ),
            "{text}"
        );
        assert!(text.contains("--replace-cluster-feature-gates"), "{text}");
        assert_eq!(
            first_difference(&values(&[("New", true)]), &cluster),
            Ok(())
        );
    }

    // R-HA-015: a cluster-wide gate introduced at a newer protocol stays refused while an
    // older voter keeps the effective version down, and is allowed once it rises.
    #[test]
    fn a_gate_waits_for_the_effective_version() {
        let since = [("Newer", 2)];
        let local = values(&[("Newer", true)]);
        let error = first_held_back(&local, &since, 1).unwrap_err();
        assert_eq!(
            error,
            GateAgreementError::AheadOfCluster {
                gate: "Newer".to_owned(),
                since: 2,
                effective: 1,
            }
        );
        assert!(error.to_string().contains("Upgrade every replica first"));
        assert_eq!(first_held_back(&local, &since, 2), Ok(()));
        assert_eq!(
            first_held_back(&values(&[("Newer", false)]), &since, 1),
            Ok(())
        );
    }
}

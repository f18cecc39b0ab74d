//! Scenario `leader_isolated_mid_write_answers_unknown`: three replicas; a burst of creates is
//! sent to the leader, and the leader is cut off from both others (the client still reaches it)
//! while the burst is in flight, at a moment the seed picks. A create the leader proposed before
//! the cut but did not see committed is answered 504 Timeout (its outcome is unknown: the
//! majority's new leader may commit it), one the leader never proposed is answered 503 with
//! Retry-After (nothing happened), and no client retries either blindly. Half the creates name
//! their object, and the history checkers judge them (a 503 is a rejection, so one that took
//! effect is caught); the other half use `generateName`, which a blind retry would duplicate,
//! and after the heal each exists at most once, exactly once if acknowledged, never if refused.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use rand::Rng;

use crate::check::Violation;
use crate::client::GeneratedCreate;
use crate::client::SimClient;
use crate::client::now;
use crate::cluster::ClusterOptions;
use crate::cluster::replica_host;
use crate::history::WriteOutcome;
use crate::history::WriteRecord;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::scenario::ScenarioFailure;
use crate::scenario::phases::agreed_leader;
use crate::scenario::phases::final_views;
use crate::scenario::phases::write_acked;
use crate::scenario::runner::actor_rng;
use crate::scenario::runner::run_with_client;
use crate::scenario::verdict::Isolation;
use crate::scenario::verdict::judge;
use apiary_node::error::error_chain;

/// The scenario's name, as its test is named.
pub const LEADER_ISOLATED_MID_WRITE: &str = "leader_isolated_mid_write_answers_unknown";

/// How long the first election may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long after the cut the majority must take writes again.
const RESUME_BOUND: Duration = Duration::from_secs(10);
/// How long after the heal the final reads may take.
const CONVERGE_BOUND: Duration = Duration::from_secs(20);
/// A client call's deadline: longer than the replicas' request timeout (5 s), so that the client
/// hears the leader's own answer to every write of the burst.
const CALL_DEADLINE: Duration = Duration::from_secs(10);
/// The creates of the burst.
const BURST: u32 = 12;
/// Between the sending of two creates of the burst.
const SPACING: Duration = Duration::from_millis(8);
/// The cut falls this long after the burst begins, plus up to [`CUT_JITTER_MS`] (seeded):
/// while its first creates are between proposal and commit.
const CUT_AFTER: Duration = Duration::from_millis(40);
/// See [`CUT_AFTER`].
const CUT_JITTER_MS: u64 = 40;
/// The longest latency of one message: long enough that a create spends tens of milliseconds
/// between its proposal and its commit, for the cut to fall into.
const MAX_LATENCY: Duration = Duration::from_millis(30);

/// The note of a run in which some create was answered 504 Timeout.
pub const TIMED_OUT_NOTE: &str = "some creates were answered 504 Timeout";
/// The note of a run in which a generateName create answered 504 Timeout took effect.
pub const TIMED_OUT_TOOK_EFFECT_NOTE: &str = "a generateName create answered 504 took effect";

/// The guarantee the generateName creates are judged by.
const GUARANTEE: &str = "generated_creates_once";

/// Runs the scenario with `seed`.
pub fn leader_isolated_mid_write_answers_unknown(seed: u64) -> Result<Report, ScenarioFailure> {
    run(seed).map_err(|error| ScenarioFailure {
        scenario: LEADER_ISOLATED_MID_WRITE,
        seed,
        error,
    })
}

fn run(seed: u64) -> Result<Report, ScenarioError> {
    let options = ClusterOptions {
        max_latency: MAX_LATENCY,
        ..ClusterOptions::new(seed)
    };
    run_with_client(&options, move |hosts, _faults| drive(seed, hosts))
}

/// What the burst sent and how each create ended.
#[derive(Default)]
struct Burst {
    named: Vec<WriteRecord>,
    generated: Vec<GeneratedCreate>,
}

impl Burst {
    fn timed_out(&self) -> usize {
        self.generated.iter().filter(|g| g.timed_out).count()
            + self
                .named
                .iter()
                .filter(|w| matches!(&w.outcome, WriteOutcome::Unknown { reason } if reason.contains("server answered 504")))
                .count()
    }

    fn count(&self, outcome: fn(&WriteOutcome) -> bool) -> usize {
        self.named.iter().filter(|w| outcome(&w.outcome)).count()
            + self
                .generated
                .iter()
                .filter(|g| outcome(&g.outcome))
                .count()
    }
}

async fn drive(seed: u64, hosts: Vec<String>) -> Result<Report, ScenarioError> {
    let client = SimClient::new(CALL_DEADLINE);
    let mut notes = Vec::new();

    tracing::info!(seed, "phase: elect and write through every replica");
    let old_leader = agreed_leader(&client, &hosts, None, ELECTION_BOUND).await?;
    for (i, host) in hosts.iter().enumerate() {
        write_acked(&client, host, &format!("before-{i}"), ELECTION_BOUND).await?;
    }
    let leader = replica_host(old_leader);
    let majority: Vec<String> = hosts.iter().filter(|h| **h != leader).cloned().collect();
    let cut_after =
        CUT_AFTER + Duration::from_millis(actor_rng(seed, 1).random_range(0..=CUT_JITTER_MS));
    notes.push(format!(
        "leader {leader} cut off {cut_after:?} into the burst"
    ));

    tracing::info!(seed, %leader, "phase: a burst of creates to the leader, cut off mid-way");
    let burst_at = now();
    let cut = async {
        tokio::time::sleep(cut_after).await;
        for other in &majority {
            turmoil::partition(leader.as_str(), other.as_str());
        }
        now()
    };
    let sends = futures::future::join_all((0..BURST).map(|i| {
        let (client, leader) = (&client, &leader);
        async move {
            tokio::time::sleep(SPACING * i).await;
            let value = format!("burst-{i} via {leader}");
            if i % 2 == 0 {
                (
                    Some(client.create(leader, &format!("burst-{i}"), &value).await),
                    None,
                )
            } else {
                let prefix = format!("burst-{i}-");
                (
                    None,
                    Some(client.create_generated(leader, &prefix, &value).await),
                )
            }
        }
    }));
    let (cut_at, sent) = futures::future::join(cut, sends).await;
    let mut burst = Burst::default();
    for (named, generated) in sent {
        burst.named.extend(named);
        burst.generated.extend(generated);
    }
    notes.push(format!(
        "burst of {BURST} from {:?}: {} acknowledged, {} refused, {} unknown ({} answered 504)",
        burst_at,
        burst.count(|o| matches!(o, WriteOutcome::Acked { .. })),
        burst.count(|o| matches!(o, WriteOutcome::Rejected { .. })),
        burst.count(|o| matches!(o, WriteOutcome::Unknown { .. })),
        burst.timed_out(),
    ));
    if burst.timed_out() > 0 {
        notes.push(TIMED_OUT_NOTE.to_owned());
    }

    tracing::info!(seed, "phase: the majority elects a leader and takes writes");
    let new_leader = agreed_leader(&client, &majority, Some(old_leader), RESUME_BOUND).await?;
    write_acked(&client, &replica_host(new_leader), "majority", RESUME_BOUND).await?;

    tracing::info!(seed, "phase: heal and read every replica");
    let healed_at = now();
    for other in &majority {
        turmoil::repair(leader.as_str(), other.as_str());
    }
    let views = final_views(&client, &hosts, CONVERGE_BOUND).await?;
    let mut violations = Vec::new();
    let mut stored = BTreeMap::new();
    for host in &hosts {
        let values = stored_values(&client, host).await?;
        violations.extend(generated_once(&burst.generated, host, &values));
        stored = values;
    }
    let took_effect = burst
        .generated
        .iter()
        .filter(|g| g.timed_out && stored.values().any(|v| *v == g.value))
        .count();
    if took_effect > 0 {
        notes.push(TIMED_OUT_TOOK_EFFECT_NOTE.to_owned());
    }
    let mut history = client.take_history();
    history.final_views = views;
    let linearizability = judge(
        &history,
        &[Isolation {
            replica: leader.clone(),
            from: cut_at,
            until: healed_at,
        }],
    )
    .map_err(|error| match error {
        ScenarioError::Violations(mut found) => {
            found.append(&mut violations);
            ScenarioError::Violations(found)
        }
        other => other,
    })?;
    if !violations.is_empty() {
        return Err(ScenarioError::Violations(violations));
    }
    notes.push(linearizability.note());
    Ok(Report {
        scenario: LEADER_ISOLATED_MID_WRITE,
        seed,
        notes,
        elapsed: now(),
        history_hash: history.fingerprint(),
        relists: 0,
    })
}

/// The value of every ConfigMap on `host`, from a quorum list retried until it succeeds.
async fn stored_values(
    client: &SimClient,
    host: &str,
) -> Result<BTreeMap<String, Bytes>, ScenarioError> {
    let start = now();
    loop {
        match client.values(host).await {
            Ok(values) => return Ok(values),
            Err(error) if now().saturating_sub(start) > CONVERGE_BOUND => {
                return Err(ScenarioError::Stuck {
                    phase: format!("listing the ConfigMaps on {host}"),
                    bound: CONVERGE_BOUND,
                    last: error_chain(&error),
                });
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// The violations of "each generateName create exists at most once, exactly once (under the
/// name the answer gave) if acknowledged, never if refused" in `values`, the store on `host`.
fn generated_once(
    generated: &[GeneratedCreate],
    host: &str,
    values: &BTreeMap<String, Bytes>,
) -> Vec<Violation> {
    let mut violations = Vec::new();
    for create in generated {
        let names: Vec<&String> = values
            .iter()
            .filter(|(_, value)| **value == create.value)
            .map(|(name, _)| name)
            .collect();
        let holds = match &create.outcome {
            WriteOutcome::Acked { .. } => {
                names.len() == 1 && create.name.as_ref() == names.first().copied()
            }
            WriteOutcome::Unknown { .. } => names.len() <= 1,
            WriteOutcome::Rejected { .. } => names.is_empty(),
        };
        if !holds {
            violations.push(Violation {
                guarantee: GUARANTEE,
                detail: format!(
                    "{host} holds {names:?} for the create of {:?} via {} that ended {:?}",
                    create.value, create.replica, create.outcome
                ),
            });
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(value: &str, outcome: WriteOutcome) -> GeneratedCreate {
        GeneratedCreate {
            replica: "replica-1".to_owned(),
            value: Bytes::copy_from_slice(value.as_bytes()),
            name: matches!(outcome, WriteOutcome::Acked { .. }).then(|| format!("{value}-x")),
            outcome,
            timed_out: false,
        }
    }

    fn stored(items: &[(&str, &str)]) -> BTreeMap<String, Bytes> {
        items
            .iter()
            .map(|(name, value)| ((*name).to_owned(), Bytes::copy_from_slice(value.as_bytes())))
            .collect()
    }

    fn one_violation(violations: &[Violation], needle: &str) {
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert!(violations[0].detail.contains(needle), "{violations:?}");
    }

    // A create answered 504 that took effect twice (a blind retry), an acknowledged one that is
    // missing, and a refused one that is there are each caught; the allowed cases are not.
    #[test]
    fn generated_creates_are_judged_by_outcome() {
        let unknown = || WriteOutcome::Unknown {
            reason: "504".to_owned(),
        };
        let acked = WriteOutcome::Acked { revision: Some(3) };
        let refused = WriteOutcome::Rejected {
            status: 503,
            reason: "no leader".to_owned(),
        };
        let fine = [
            create("a", acked.clone()),
            create("b", unknown()),
            create("c", unknown()),
            create("d", refused.clone()),
        ];
        let values = stored(&[("a-x", "a"), ("b-1", "b")]);
        assert_eq!(generated_once(&fine, "replica-1", &values), Vec::new());

        let twice = stored(&[("a-x", "a"), ("b-1", "b"), ("b-2", "b")]);
        one_violation(&generated_once(&fine, "replica-1", &twice), "\"b-2\"");
        let missing = stored(&[("b-1", "b")]);
        one_violation(&generated_once(&fine, "replica-1", &missing), "Acked");
        let refused_there = stored(&[("a-x", "a"), ("d-1", "d")]);
        one_violation(
            &generated_once(&fine, "replica-1", &refused_there),
            "Rejected",
        );
    }
}

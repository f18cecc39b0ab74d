//! Scenario `membership_changes` (R-HA-011, R-HA-013, R-HA-014): three replicas to start; two
//! writers create and update ConfigMaps and a reader makes quorum reads, through random running
//! replicas, while the seed draws 2–4 membership changes, one at a time: add a replica (a new
//! host `replica-<id>` joins through the real join path), remove one (sometimes the leader;
//! through the real removal path, asked of a random member, which forwards it to the leader;
//! the removed replica keeps running and keeps being called), replace one (sometimes the
//! leader: add, wait until the new one is a voter, remove the old one, power it off). The
//! voters stay between three and five. One change may happen under an ordinary fault: the
//! leader cut off from the other replicas, or a random member's host crashed (restarted after
//! the change, unless the change removed it). At the end the final members agree on a leader,
//! each is read, and the history is checked: acknowledged writes durable, nothing acknowledged
//! by a cut-off replica, rejected writes absent, quorum reads see acknowledged writes (also those
//! served by removed replicas), the final members agree, linearizable.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use apiary_node::error::error_chain;
use apiary_raft::typ::NodeId;
use bytes::Bytes;
use prost::Message;
use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::check::acked_writes_durable;
use crate::check::isolated_writes_not_acked;
use crate::check::linearizable;
use crate::check::reads_see_acked_writes;
use crate::check::rejected_writes_absent;
use crate::check::replicas_agree;
use crate::client::SimClient;
use crate::client::now;
use crate::cluster::ClusterOptions;
use crate::cluster::replica_host;
use crate::cluster::status_url;
use crate::fault::Faults;
use crate::fault::HostFault;
use crate::net::post;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::scenario::ScenarioFailure;
use crate::scenario::fault_script::Isolation;
use crate::scenario::members::Members;
use crate::scenario::phases::agreed_leader;
use crate::scenario::phases::final_view;
use crate::scenario::runner::run_with_client;
use crate::scenario::workload::HostPool;
use crate::scenario::workload::StopSignal;
use crate::scenario::workload::WriterOptions;
use crate::scenario::workload::write_until;
use crate::status_api::REMOVE_PATH;
use crate::status_api::RemoveReply;
use crate::status_api::RemoveRequest;

/// The scenario's name, as its test is named.
pub const MEMBERSHIP_CHANGES: &str = "membership_changes";

/// How long the first election, and the agreement on a leader, may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long the final reads may take.
const CONVERGE_BOUND: Duration = Duration::from_secs(15);
/// How long one membership change may take, retries included.
const CHANGE_BOUND: Duration = Duration::from_secs(30);
/// A client call's deadline.
const CALL_DEADLINE: Duration = Duration::from_secs(2);
/// A removal call's deadline: the replica retries for up to its request timeout (5 s).
const REMOVE_DEADLINE: Duration = Duration::from_secs(8);
/// Pause between two attempts of a change's step.
const RETRY_PAUSE: Duration = Duration::from_millis(200);
/// Writes before the first change, and after each.
const CALM: Duration = Duration::from_millis(500);
/// How many changes a run has, at least and at most.
const MIN_EVENTS: u32 = 2;
const MAX_EVENTS: u32 = 4;
/// The fewest and the most voters the run may have at any moment.
const MIN_VOTERS: usize = 3;
const MAX_VOTERS: usize = 5;
const WRITERS: u64 = 2;

/// Runs the scenario with `seed`.
pub fn membership_changes(seed: u64) -> Result<Report, ScenarioFailure> {
    let options = ClusterOptions::new(seed);
    let founders = options.replicas;
    run_with_client(&options, move |_, faults| drive(seed, founders, faults)).map_err(|error| {
        ScenarioFailure {
            scenario: MEMBERSHIP_CHANGES,
            seed,
            error,
        }
    })
}

/// A generator for one actor of the run, derived from the seed.
fn rng(seed: u64, actor: u64) -> StdRng {
    StdRng::seed_from_u64(seed.wrapping_mul(1_000).wrapping_add(actor))
}

/// One membership change, drawn from the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// A new replica joins.
    Add,
    /// A member (the leader, or a random one) is removed and keeps running.
    Remove { leader: bool },
    /// A new replica joins, then a member (the leader, or a random one) is removed and
    /// powered off.
    Replace { leader: bool },
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whom = |leader: bool| if leader { "the leader" } else { "a member" };
        match self {
            Self::Add => write!(f, "add"),
            Self::Remove { leader } => write!(f, "remove {}", whom(*leader)),
            Self::Replace { leader } => write!(f, "replace {}", whom(*leader)),
        }
    }
}

impl Change {
    /// A change that keeps the voters within bounds: adding needs room for one more (a
    /// replacement too, as it adds first), removing needs one above the minimum.
    fn draw(rng: &mut StdRng, voters: usize) -> Self {
        let mut allowed = Vec::new();
        if voters < MAX_VOTERS {
            allowed.push(Self::Add);
            allowed.push(Self::Replace {
                leader: rng.random_bool(0.5),
            });
        }
        if voters > MIN_VOTERS {
            allowed.push(Self::Remove {
                leader: rng.random_bool(0.5),
            });
        }
        allowed[rng.random_range(0..allowed.len())]
    }
}

/// The ordinary fault one change may happen under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// This member, the leader when the fault began, is cut off from the other replicas.
    Partition(NodeId),
    /// This member's host is crashed.
    Crash(NodeId),
}

impl Fault {
    fn member(self) -> NodeId {
        match self {
            Self::Partition(id) | Self::Crash(id) => id,
        }
    }
}

/// The membership changes of one run and what they need.
struct Script<'a> {
    client: &'a SimClient,
    members: &'a Members,
    faults: &'a Faults,
    rng: StdRng,
    /// The id the next new replica gets: above every id used before.
    next_id: NodeId,
    /// The fault in force, if any.
    fault: Option<Fault>,
    /// When it began.
    fault_from: Duration,
    isolations: Vec<Isolation>,
    notes: Vec<String>,
}

impl Script<'_> {
    async fn run(&mut self) -> Result<(), ScenarioError> {
        let events = self.rng.random_range(MIN_EVENTS..=MAX_EVENTS);
        let faulted_event = self
            .rng
            .random_bool(0.75)
            .then(|| self.rng.random_range(0..events));
        tokio::time::sleep(CALM).await;
        for event in 0..events {
            if faulted_event == Some(event) {
                self.begin_fault().await?;
                let settle = self.rng.random_range(200..=800);
                tokio::time::sleep(Duration::from_millis(settle)).await;
            }
            let change = Change::draw(&mut self.rng, self.members.voters().len());
            self.notes.push(format!(
                "{change} at {:?} (voters {:?})",
                now(),
                self.members.voters()
            ));
            tracing::info!(%change, voters = ?self.members.voters(), "membership change");
            match change {
                Change::Add => {
                    self.add().await?;
                }
                Change::Remove { leader } => {
                    let target = self.target(leader, None).await?;
                    self.remove(target).await?;
                }
                Change::Replace { leader } => {
                    let new = self.add().await?;
                    let old = self.target(leader, Some(new)).await?;
                    self.remove(old).await?;
                    self.power_off(old).await;
                }
            }
            if faulted_event == Some(event) {
                let linger = self.rng.random_range(0..=500);
                tokio::time::sleep(Duration::from_millis(linger)).await;
                self.end_fault().await;
            }
            tokio::time::sleep(CALM).await;
        }
        self.notes.push(format!(
            "{events} membership changes, final voters {:?}",
            self.members.voters()
        ));
        Ok(())
    }

    /// The members' hosts that answer: the voters but the faulted one.
    fn responsive(&self) -> Vec<String> {
        let faulted = self.fault.map(Fault::member);
        self.members
            .voters()
            .into_iter()
            .filter(|id| Some(*id) != faulted)
            .map(replica_host)
            .collect()
    }

    async fn begin_fault(&mut self) -> Result<(), ScenarioError> {
        let fault = if self.rng.random_bool(0.5) {
            Fault::Partition(self.leader().await?)
        } else {
            let voters = self.members.voters();
            Fault::Crash(voters[self.rng.random_range(0..voters.len())])
        };
        let target = replica_host(fault.member());
        self.notes.push(format!("{fault:?} from {:?}", now()));
        tracing::info!(?fault, "fault");
        match fault {
            Fault::Partition(id) => {
                for other in self.members.running().into_iter().filter(|o| *o != id) {
                    turmoil::partition(target.as_str(), replica_host(other).as_str());
                }
            }
            Fault::Crash(_) => self.faults.inject(HostFault::Crash(target)).await,
        }
        self.fault = Some(fault);
        self.fault_from = now();
        Ok(())
    }

    /// Heals the fault: repairs the partition, or restarts the crashed host unless the change
    /// removed it (a removed replica restarted with `join_existing` would ask to join again).
    async fn end_fault(&mut self) {
        let Some(fault) = self.fault.take() else {
            return;
        };
        let target = replica_host(fault.member());
        let member = self.members.voters().contains(&fault.member());
        match fault {
            Fault::Partition(id) => {
                // Powered off meanwhile (replaced): its links stay as the crash left them.
                if self.members.running().contains(&id) {
                    for other in self.members.running().into_iter().filter(|o| *o != id) {
                        turmoil::repair(target.as_str(), replica_host(other).as_str());
                    }
                }
            }
            Fault::Crash(id) if member => {
                self.faults.inject(HostFault::Restart(target)).await;
                tracing::info!(id, "restarted");
            }
            Fault::Crash(id) => self.members.power_off(id),
        }
        self.notes.push(format!("healed at {:?}", now()));
        if let Fault::Partition(id) = fault {
            self.isolations.push(Isolation {
                replica: replica_host(id),
                from: self.fault_from,
                until: now(),
            });
        }
    }

    /// The leader the answering voters agree on, once it is a voter: right after a change
    /// removed the leader, the others still name it until they elect another.
    async fn leader(&self) -> Result<NodeId, ScenarioError> {
        let start = now();
        loop {
            let responsive = self.responsive();
            let id = agreed_leader(self.client, &responsive, None, ELECTION_BOUND).await?;
            if self.members.voters().contains(&id) {
                return Ok(id);
            }
            if now().saturating_sub(start) > ELECTION_BOUND {
                let last = format!("the voters still follow removed replica {id}");
                return Err(stuck(
                    "electing a leader among the voters",
                    ELECTION_BOUND,
                    last,
                ));
            }
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }

    /// The member to remove: the leader, or a random voter; never `spare` (just added).
    async fn target(
        &mut self,
        leader: bool,
        spare: Option<NodeId>,
    ) -> Result<NodeId, ScenarioError> {
        if leader {
            let id = self.leader().await?;
            if Some(id) != spare {
                return Ok(id);
            }
        }
        let candidates: Vec<NodeId> = self
            .members
            .voters()
            .into_iter()
            .filter(|id| Some(*id) != spare)
            .collect();
        Ok(candidates[self.rng.random_range(0..candidates.len())])
    }

    /// Starts a new replica that joins through the current voters and waits until every
    /// answering voter and the new one count it among the voters. Returns its id.
    async fn add(&mut self) -> Result<NodeId, ScenarioError> {
        let id = self.next_id;
        self.next_id += 1;
        let join = HostFault::Join {
            id,
            members: self.members.voters(),
        };
        self.faults.inject(join).await;
        let start = now();
        let mut watched = self.responsive();
        watched.push(replica_host(id));
        let mut last = String::from("no status yet");
        loop {
            let mut seen = 0;
            for host in &watched {
                match self.client.status(host).await {
                    Ok(status) if status.voters.contains(&id) => seen += 1,
                    Ok(status) => last = format!("{host} knows voters {:?}", status.voters),
                    Err(e) => last = error_chain(&e),
                }
            }
            if seen == watched.len() {
                break;
            }
            if now().saturating_sub(start) > CHANGE_BOUND {
                return Err(stuck(&format!("adding replica {id}"), CHANGE_BOUND, last));
            }
            tokio::time::sleep(RETRY_PAUSE).await;
        }
        self.members.add(id);
        self.notes
            .push(format!("replica-{id} a voter at {:?}", now()));
        Ok(id)
    }

    /// Removes `id` through a random voter's removal endpoint (the replica forwards it to the
    /// leader), retrying until it is done; `id` keeps running.
    async fn remove(&mut self, id: NodeId) -> Result<(), ScenarioError> {
        let start = now();
        loop {
            let voters = self.members.voters();
            let asked = replica_host(voters[self.rng.random_range(0..voters.len())]);
            let last = match remove_through(&asked, id).await {
                Ok(index) => {
                    self.notes.push(format!(
                        "replica-{id} removed through {asked} at {:?} (index {index})",
                        now()
                    ));
                    break;
                }
                Err(e) => format!("through {asked}: {e}"),
            };
            if now().saturating_sub(start) > CHANGE_BOUND {
                return Err(stuck(&format!("removing replica {id}"), CHANGE_BOUND, last));
            }
            tokio::time::sleep(RETRY_PAUSE).await;
        }
        self.members.remove(id);
        Ok(())
    }

    /// Powers off removed replica `id` (unless a crash did already).
    async fn power_off(&mut self, id: NodeId) {
        if self.fault != Some(Fault::Crash(id)) {
            self.faults.inject(HostFault::Crash(replica_host(id))).await;
        }
        self.members.power_off(id);
    }
}

fn stuck(phase: &str, bound: Duration, last: String) -> ScenarioError {
    ScenarioError::Stuck {
        phase: phase.to_owned(),
        bound,
        last,
    }
}

/// Asks `host` to remove `id` (the sim-only endpoint calls the replica's `remove_member`).
async fn remove_through(host: &str, id: NodeId) -> Result<u64, String> {
    let request = Bytes::from(RemoveRequest { node_id: id }.encode_to_vec());
    let answer = post(&status_url(host), REMOVE_PATH, request, REMOVE_DEADLINE)
        .await
        .map_err(|e| error_chain(&e))?;
    RemoveReply::decode(answer)
        .map(|reply| reply.index)
        .map_err(|e| e.to_string())
}

async fn drive(seed: u64, founders: u64, faults: Faults) -> Result<Report, ScenarioError> {
    let client = &SimClient::new(CALL_DEADLINE);
    let members = &Members::new(1..=founders);

    tracing::info!(seed, "phase: elect, start writers and a reader");
    agreed_leader(client, &members.hosts(), None, ELECTION_BOUND).await?;
    let stop = StopSignal::default();
    let writers = (0..WRITERS).map(|i| {
        let name = format!("writer-{i}");
        let stop = stop.clone();
        let options = WriterOptions {
            min_pause: Duration::from_millis(50),
            max_pause: Duration::from_millis(250),
            deletes: false,
        };
        async move { write_until(client, &name, members, options, stop, rng(seed, 100 + i)).await }
    });
    let reader = read_until(client, members, stop.clone(), rng(seed, 200));
    let mut script = Script {
        client,
        members,
        faults: &faults,
        rng: rng(seed, 300),
        next_id: founders + 1,
        fault: None,
        fault_from: Duration::ZERO,
        isolations: Vec::new(),
        notes: Vec::new(),
    };
    let changes = async {
        let result = script.run().await;
        stop.stop();
        result
    };
    let (changed, (), ()) = tokio::join!(
        changes,
        async {
            futures::future::join_all(writers).await;
        },
        reader
    );
    changed?;

    tracing::info!(seed, "phase: read every final member");
    let hosts = members.hosts();
    agreed_leader(client, &hosts, None, CONVERGE_BOUND).await?;
    let keys = client.written_keys();
    let mut views = BTreeMap::new();
    for host in &hosts {
        views.insert(
            host.clone(),
            final_view(client, host, &keys, CONVERGE_BOUND).await?,
        );
    }
    let mut history = client.take_history();
    history.final_views = views;

    let mut violations = acked_writes_durable(&history);
    for isolation in &script.isolations {
        violations.extend(isolated_writes_not_acked(
            &history,
            &isolation.replica,
            isolation.from,
            isolation.until,
        ));
    }
    violations.extend(replicas_agree(&history));
    violations.extend(rejected_writes_absent(&history));
    violations.extend(reads_see_acked_writes(&history));
    let linearizability = linearizable(&history);
    violations.extend(linearizability.violations.iter().cloned());
    if !violations.is_empty() {
        return Err(ScenarioError::Violations(violations));
    }
    let mut notes = std::mem::take(&mut script.notes);
    notes.push(linearizability.note());
    notes.push(format!(
        "{} of {} writes acknowledged, {} quorum reads; every acknowledged write durable and \
         identical on the {} final members",
        history.acked().count(),
        history.writes.len(),
        history.reads.len(),
        hosts.len()
    ));
    Ok(Report {
        scenario: MEMBERSHIP_CHANGES,
        seed,
        notes,
        elapsed: now(),
        history_hash: history.fingerprint(),
        relists: 0,
    })
}

/// Makes quorum reads of keys already written, through random running replicas, until `stop`.
async fn read_until(client: &SimClient, members: &Members, stop: StopSignal, mut rng: StdRng) {
    while !stop.stopped() {
        let keys = client.written_keys();
        if !keys.is_empty() {
            let key = &keys[rng.random_range(0..keys.len())];
            let host = members.pick(&mut rng);
            // The history records the outcome; a failed read promises nothing.
            let _ = client.read(&host, key).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(50..=250))).await;
    }
}

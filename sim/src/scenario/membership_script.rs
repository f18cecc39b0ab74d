//! The membership changes of scenario `membership_changes`: the seed draws 2–4 changes, one at
//! a time (add a replica; remove one, sometimes the leader; replace one, sometimes the leader),
//! keeping three to five voters, and perhaps one ordinary fault (the leader cut off, or a
//! member's host crashed) that one change happens under. Changes go through the real join and
//! removal paths; [`Members`] tells the clients who is there. The partition cuts the leader off
//! from every other replica, those that join meanwhile included: a new replica that could reach
//! it might become the leader (a removed leader hands over to the most caught-up voter) and
//! make it a working follower again, which is no isolation.

use std::fmt;
use std::time::Duration;

use apiary_node::error::error_chain;
use apiary_raft::typ::NodeId;
use bytes::Bytes;
use prost::Message;
use rand::Rng;
use rand::rngs::StdRng;

use crate::client::SimClient;
use crate::client::now;
use crate::cluster::replica_host;
use crate::cluster::status_url;
use crate::fault::Faults;
use crate::fault::HostFault;
use crate::net::post;
use crate::scenario::ScenarioError;
use crate::scenario::members::Members;
use crate::scenario::phases::agreed_leader;
use crate::scenario::verdict::Isolation;
use crate::status_api::REMOVE_PATH;
use crate::status_api::RemoveReply;
use crate::status_api::RemoveRequest;

/// How long the agreement on a leader may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long one membership change may take, retries included.
const CHANGE_BOUND: Duration = Duration::from_secs(30);
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
pub(crate) struct Script<'a> {
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
    /// When the leader was cut off, for `isolated_writes_not_acked`.
    pub isolations: Vec<Isolation>,
    /// What happened, for the report.
    pub notes: Vec<String>,
}

impl<'a> Script<'a> {
    /// A script for a run founded by `founders` replicas, drawing from `rng`.
    pub fn new(
        client: &'a SimClient,
        members: &'a Members,
        faults: &'a Faults,
        founders: u64,
        rng: StdRng,
    ) -> Self {
        Self {
            client,
            members,
            faults,
            rng,
            next_id: founders + 1,
            fault: None,
            fault_from: Duration::ZERO,
            isolations: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Draws and applies 2–4 changes, one of them perhaps under a fault.
    pub async fn run(&mut self) -> Result<(), ScenarioError> {
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
        if let Some(Fault::Partition(isolated)) = self.fault {
            turmoil::partition(replica_host(isolated).as_str(), replica_host(id).as_str());
        }
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

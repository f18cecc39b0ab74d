//! [`Members`]: which replicas a run whose membership changes currently has, as the scenario
//! knows them, shared with its clients so that writes and reads reach new members, and still
//! reach replicas that were removed but keep running (they must fail rather than serve stale
//! data or lose acknowledged writes).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use apiary_raft::typ::NodeId;
use rand::Rng;
use rand::rngs::StdRng;

use crate::cluster::replica_host;
use crate::scenario::workload::HostPool;

#[derive(Debug, Default)]
struct State {
    /// The voters.
    voters: BTreeSet<NodeId>,
    /// Removed from the membership, still running.
    removed: BTreeSet<NodeId>,
}

/// The run's replicas. Clones share them.
#[derive(Debug, Clone, Default)]
pub struct Members(Rc<RefCell<State>>);

impl Members {
    /// A run founded by `voters`.
    pub fn new(voters: impl IntoIterator<Item = NodeId>) -> Self {
        let state = State {
            voters: voters.into_iter().collect(),
            removed: BTreeSet::new(),
        };
        Self(Rc::new(RefCell::new(state)))
    }

    /// The voters, ascending.
    pub fn voters(&self) -> Vec<NodeId> {
        self.0.borrow().voters.iter().copied().collect()
    }

    /// The voters' host names, ascending by id.
    pub fn hosts(&self) -> Vec<String> {
        self.voters().into_iter().map(replica_host).collect()
    }

    /// Every replica still running a member's software (voters and removed ones).
    pub fn running(&self) -> Vec<NodeId> {
        let state = self.0.borrow();
        state.voters.union(&state.removed).copied().collect()
    }

    /// `id` became a voter.
    pub fn add(&self, id: NodeId) {
        self.0.borrow_mut().voters.insert(id);
    }

    /// `id` was removed from the membership; it keeps running.
    pub fn remove(&self, id: NodeId) {
        let mut state = self.0.borrow_mut();
        state.voters.remove(&id);
        state.removed.insert(id);
    }

    /// `id`, removed, was powered off: nobody calls it any more.
    pub fn power_off(&self, id: NodeId) {
        self.0.borrow_mut().removed.remove(&id);
    }
}

impl HostPool for Members {
    fn pick(&self, rng: &mut StdRng) -> String {
        let running = self.running();
        replica_host(running[rng.random_range(0..running.len())])
    }
}

//! The driver loop every scenario shares: build the cluster for a seed, run the scenario's
//! client in it, apply the host faults the client queues between two steps, and hand back what
//! the client concluded.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::cluster::ClusterOptions;
use crate::cluster::SimCluster;
use crate::fault::Faults;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::trace;

/// The host the scenario's client runs on.
pub(crate) const CLIENT_HOST: &str = "client";

/// A generator for one actor of a run (a writer, a reader, a watcher, a fault script), derived
/// from the run's seed so that every actor draws its own stream and the run replays exactly.
pub(crate) fn actor_rng(seed: u64, actor: u64) -> StdRng {
    StdRng::seed_from_u64(seed.wrapping_mul(1_000).wrapping_add(actor))
}

/// Runs `client` (given the replica host names and the fault queue) in a cluster built from
/// `options` until it finishes, then returns its result.
pub(crate) fn run_with_client<C, Fut>(
    options: &ClusterOptions,
    client: C,
) -> Result<Report, ScenarioError>
where
    C: FnOnce(Vec<String>, Faults) -> Fut,
    Fut: Future<Output = Result<Report, ScenarioError>> + 'static,
{
    // Every host runs on this thread: seeding it makes openraft's election timeouts and the
    // replicas' blocking file work part of the seed's replay (see `apiary_raft::runtime`).
    let _deterministic = apiary_raft::runtime::enter_deterministic(options.seed);
    let mut cluster = SimCluster::build(options)?;
    let faults = Faults::default();
    let outcome: Rc<RefCell<Option<Result<Report, ScenarioError>>>> = Rc::default();
    let slot = Rc::clone(&outcome);
    let work = client(cluster.hosts().to_vec(), faults.clone());
    cluster.client(CLIENT_HOST, async move {
        let result = work.await;
        *slot.borrow_mut() = Some(result);
        Ok(())
    });
    loop {
        let finished = cluster
            .sim()
            .step()
            .map_err(|error| ScenarioError::Simulation(error.to_string()))?;
        let at = cluster.sim().elapsed();
        trace::between_steps(at, || {
            for fault in faults.drain() {
                cluster.apply(&fault);
            }
        });
        if finished {
            break;
        }
    }
    outcome.take().unwrap_or(Err(ScenarioError::NoOutcome))
}

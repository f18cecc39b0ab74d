//! A writer that keeps creating, updating and deleting ConfigMaps of its own through random
//! replicas until told to stop, every write recorded in the client's history.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;

use crate::client::SimClient;
use crate::history::WriteOp;
use crate::history::WriteOutcome;

/// Tells writers to stop after their current write. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct StopSignal(Rc<Cell<bool>>);

impl StopSignal {
    /// Stops every writer holding a clone.
    pub fn stop(&self) {
        self.0.set(true);
    }

    /// Whether [`StopSignal::stop`] was called.
    pub fn stopped(&self) -> bool {
        self.0.get()
    }
}

/// The chance that a conditional update expects the revision of the writer's second-to-last
/// write of the key instead of its last.
const STALE_COPY: f64 = 0.2;

/// The replica hosts a client may send to: a fixed list, or one that changes while the run
/// goes on (replicas added and removed, [`crate::scenario::members::Members`]).
pub trait HostPool {
    /// A host drawn with `rng` from those available now.
    fn pick(&self, rng: &mut StdRng) -> String;
}

impl HostPool for [String] {
    fn pick(&self, rng: &mut StdRng) -> String {
        self[rng.random_range(0..self.len())].clone()
    }
}

impl HostPool for Vec<String> {
    fn pick(&self, rng: &mut StdRng) -> String {
        self.as_slice().pick(rng)
    }
}

/// How a writer paces itself.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// The shortest pause between two writes.
    pub min_pause: Duration,
    /// The longest pause between two writes.
    pub max_pause: Duration,
    /// Whether the writer also deletes; without, it only creates and updates.
    pub deletes: bool,
}

/// Writes through `hosts` under keys `{name}-{n}` until `stop`: a create when it holds fewer
/// than two live keys or by chance, otherwise an update or (if `options.deletes`) a delete of
/// one of its keys (the seeded `rng` decides). Half the updates of a key whose revision the
/// writer knows (from its last acknowledged write of it) are conditional on that revision; a
/// 409 refuses one whose revision moved on (by a write of unknown outcome that took effect, or
/// because it was sent from an outdated copy: one in five expects the revision before the last). A key whose create had an unknown outcome counts as
/// live: an update or delete of it may be refused, which the history records too. Keys are
/// never recreated.
pub async fn write_until(
    client: &SimClient,
    name: &str,
    hosts: &(impl HostPool + ?Sized),
    options: WriterOptions,
    stop: StopSignal,
    mut rng: StdRng,
) {
    let mut live: Vec<String> = Vec::new();
    // The revisions of the writer's last two acknowledged writes of each key (newest first).
    let mut seen: BTreeMap<String, (u64, Option<u64>)> = BTreeMap::new();
    let mut created = 0u32;
    // Numbers every value, so that each write's value is its own.
    let mut writes = 0u32;
    while !stop.stopped() {
        writes += 1;
        let host = &hosts.pick(&mut rng);
        let roll: f64 = rng.random();
        let op = if live.len() < 2 || roll < 0.4 {
            WriteOp::Create
        } else if roll < 0.8 || !options.deletes {
            WriteOp::Update
        } else {
            WriteOp::Delete
        };
        let record = match op {
            WriteOp::Create => {
                let key = format!("{name}-{created}");
                created += 1;
                live.push(key.clone());
                client.create(host, &key, &format!("{key} #{writes}")).await
            }
            WriteOp::Update | WriteOp::UpdateIf { .. } => {
                let key = &live[rng.random_range(0..live.len())];
                let value = format!("{key} #{writes}");
                match seen.get(key) {
                    Some(&(last, previous)) if rng.random_bool(0.5) => {
                        // Now and then from an outdated copy, as a client that read before
                        // its own last write would: the API must refuse it (409).
                        let expected = match previous {
                            Some(previous) if rng.random_bool(STALE_COPY) => previous,
                            _ => last,
                        };
                        client.update_if(host, key, &value, expected).await
                    }
                    _ => client.update(host, key, &value).await,
                }
            }
            WriteOp::Delete => {
                let key = live.swap_remove(rng.random_range(0..live.len()));
                client.delete(host, &key).await
            }
        };
        if op == WriteOp::Create && matches!(record.outcome, WriteOutcome::Rejected { .. }) {
            live.retain(|key| *key != record.key);
        }
        // A write of unknown outcome may have moved the key on: the next conditional update
        // then still expects the revision last seen, and a 409 says it moved.
        if let Some(revision) = record.acked_revision() {
            let previous = seen.get(&record.key).map(|&(last, _)| last);
            seen.insert(record.key.clone(), (revision, previous));
        }
        let pause = rng.random_range(options.min_pause..=options.max_pause);
        tokio::time::sleep(pause).await;
    }
}

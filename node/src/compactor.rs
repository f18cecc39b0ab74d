//! The compactor: keeps `--watch-history` of MVCC history and no more (DESIGN.md §3
//! "Compaction"). Every replica samples its applied revision about once a second; only the
//! current leader proposes `Compact` for the revision that was current `--watch-history` ago,
//! so the compaction point travels through the log and is the same on every replica (R-HA-009).
//!
//! Time is tokio's, never the wall clock, so the simulation runs the compactor on virtual time.
//!
//! A `Compact` entry is itself a log entry: on an idle cluster the revision still moves by one
//! per `--watch-history`, as each compaction becomes the sample the next one compacts to.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use apiary_raft::mvcc::Revision;
use apiary_raft::replica::Replica;
use tokio::time::Instant;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

/// How often the applied revision is sampled (and the leader considers compacting): the
/// compaction point lags the ideal one by at most this much.
pub const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);

/// Which revision was current when: the samples one history length needs, oldest first.
#[derive(Debug, Clone)]
pub struct CompactionPlan {
    /// `--watch-history`.
    keep: Duration,
    /// (sample time, applied revision), times and revisions increasing; a revision is recorded
    /// once, at the first time it was seen.
    samples: VecDeque<(Instant, Revision)>,
}

impl CompactionPlan {
    /// A plan that keeps `keep` of history.
    pub fn new(keep: Duration) -> Self {
        Self {
            keep,
            samples: VecDeque::new(),
        }
    }

    /// Records that `revision` was the applied revision at `now`, and forgets samples no
    /// longer needed: of those at least `keep` old only the newest matters.
    pub fn record(&mut self, now: Instant, revision: Revision) {
        if self.samples.back().is_none_or(|&(_, last)| revision > last) {
            self.samples.push_back((now, revision));
        }
        if let Some(cutoff) = now.checked_sub(self.keep) {
            while self.samples.get(1).is_some_and(|&(at, _)| at <= cutoff) {
                self.samples.pop_front();
            }
        }
    }

    /// The revision to compact to at `now`: the newest sample at least `keep` old, if it is
    /// above the current compaction point `compacted`.
    pub fn choose(&self, now: Instant, compacted: Revision) -> Option<Revision> {
        let cutoff = now.checked_sub(self.keep)?;
        self.samples
            .iter()
            .rev()
            .find(|&&(at, _)| at <= cutoff)
            .map(|&(_, revision)| revision)
            .filter(|&revision| revision > compacted)
    }
}

/// Samples `replica` every [`SAMPLE_INTERVAL`] and, while it leads, proposes the compactions
/// `keep` calls for, until `stop` is cancelled. A failed proposal is logged and retried on the
/// next tick.
pub async fn run_compactor(replica: Arc<Replica>, keep: Duration, stop: CancellationToken) {
    let mut plan = CompactionPlan::new(keep);
    let mut ticks = tokio::time::interval(SAMPLE_INTERVAL);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticks.tick() => {}
        }
        let now = Instant::now();
        let (applied, compacted) =
            replica.with_store(|store| (store.revision(), store.compacted()));
        plan.record(now, applied);
        if !replica.status().is_leader {
            continue;
        }
        let Some(revision) = plan.choose(now, compacted) else {
            continue;
        };
        let outcome = tokio::select! {
            () = stop.cancelled() => return,
            outcome = replica.compact(revision) => outcome,
        };
        match outcome {
            Ok(response) => match response.error {
                None => tracing::info!(revision, "compacted the history"),
                Some(error) => tracing::warn!(revision, %error, "compaction refused"),
            },
            Err(error) => tracing::warn!(revision, %error, "compaction not committed; retrying"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEEP: Duration = Duration::from_secs(5);

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    // R-RES-233: the history kept reaches back `--watch-history`, no less.
    #[test]
    fn nothing_is_compacted_before_a_sample_is_old_enough() {
        let start = Instant::now();
        let mut plan = CompactionPlan::new(KEEP);
        plan.record(start, 10);
        plan.record(start + secs(1), 12);
        assert_eq!(plan.choose(start + secs(4), 0), None);
        assert_eq!(plan.choose(start + secs(5), 0), Some(10));
    }

    // R-RES-233
    #[test]
    fn the_newest_sample_at_least_keep_old_is_chosen() {
        let start = Instant::now();
        let mut plan = CompactionPlan::new(KEEP);
        for (t, revision) in [(0, 3), (1, 7), (2, 9), (3, 20)] {
            plan.record(start + secs(t), revision);
        }
        assert_eq!(plan.choose(start + secs(6), 0), Some(7));
        assert_eq!(plan.choose(start + secs(7), 0), Some(9));
        assert_eq!(plan.choose(start + secs(100), 0), Some(20));
    }

    // R-HA-009: never propose what is already compacted (e.g. by an earlier leader).
    #[test]
    fn a_revision_at_or_below_the_compaction_point_is_not_proposed() {
        let start = Instant::now();
        let mut plan = CompactionPlan::new(KEEP);
        plan.record(start, 7);
        assert_eq!(plan.choose(start + secs(5), 7), None);
        assert_eq!(plan.choose(start + secs(5), 8), None);
        assert_eq!(plan.choose(start + secs(5), 6), Some(7));
    }

    // R-RES-233: an unchanged revision keeps the time it was first seen, so an idle store is
    // compacted to it once it has been current for `keep`.
    #[test]
    fn an_unchanged_revision_keeps_its_first_time() {
        let start = Instant::now();
        let mut plan = CompactionPlan::new(KEEP);
        plan.record(start, 4);
        for t in 1..5 {
            plan.record(start + secs(t), 4);
        }
        plan.record(start + secs(5), 9);
        assert_eq!(plan.choose(start + secs(5), 0), Some(4));
        assert_eq!(plan.samples.len(), 2);
    }

    #[test]
    fn samples_older_than_needed_are_forgotten() {
        let start = Instant::now();
        let mut plan = CompactionPlan::new(KEEP);
        for t in 0..100 {
            plan.record(start + secs(t), t + 1);
        }
        // The one sample at least `keep` old, and the `keep` seconds of newer ones.
        assert_eq!(plan.samples.len(), 6);
        assert_eq!(plan.choose(start + secs(99), 0), Some(95));
    }
}

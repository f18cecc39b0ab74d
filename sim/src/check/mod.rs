//! History checkers: each file checks one named guarantee against a [`History`] and returns the
//! [`Violation`]s it found (none: the guarantee held in this run). The watch checkers share
//! `watch_reference`: what the history knows happened, and each watcher's log cut into
//! segments and streams.
//!
//! Checkers are pure functions of the history, so each is unit-tested on hand-made histories
//! that break it.

mod acked_writes_durable;
mod continue_consistent;
mod isolated_writes_not_acked;
mod linearizable;
mod local_reads_real;
mod read_your_writes;
mod reads_see_acked_writes;
mod rejected_writes_absent;
mod replicas_agree;
mod revisions_monotonic;
mod violation;
mod watch_atomic;
mod watch_bookmarkable;
mod watch_ordered;
mod watch_reference;
mod watch_reliable;
mod watch_resumable;
mod watch_unique;

pub use acked_writes_durable::acked_writes_durable;
pub use continue_consistent::continue_consistent;
pub use isolated_writes_not_acked::isolated_writes_not_acked;
pub use linearizable::Linearizability;
pub use linearizable::linearizable;
pub use local_reads_real::local_reads_real;
pub use read_your_writes::read_your_writes;
pub use reads_see_acked_writes::reads_see_acked_writes;
pub use rejected_writes_absent::rejected_writes_absent;
pub use replicas_agree::replicas_agree;
pub use revisions_monotonic::revisions_monotonic;
pub use violation::Violation;
pub use watch_atomic::watch_atomic;
pub use watch_bookmarkable::watch_bookmarkable;
pub use watch_ordered::watch_ordered;
pub use watch_reliable::watch_reliable;
pub use watch_resumable::watch_resumable;
pub use watch_unique::watch_unique;

use crate::history::History;

/// Every watch guarantee (etcd robustness: ordered, unique, atomic, reliable, resumable,
/// bookmarkable), over every watcher of `history`.
pub fn watch_guarantees(history: &History) -> Vec<Violation> {
    let mut violations = watch_ordered(history);
    violations.extend(watch_unique(history));
    violations.extend(watch_atomic(history));
    violations.extend(watch_reliable(history));
    violations.extend(watch_resumable(history));
    violations.extend(watch_bookmarkable(history));
    violations
}

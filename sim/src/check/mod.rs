//! History checkers: each file checks one named guarantee against a [`History`] and returns the
//! [`Violation`]s it found (none: the guarantee held in this run).
//!
//! Checkers are pure functions of the history, so each is unit-tested on hand-made histories
//! that break it.
//!
//! [`History`]: crate::history::History

mod acked_writes_durable;
mod isolated_writes_not_acked;
mod reads_see_acked_writes;
mod rejected_writes_absent;
mod replicas_agree;
mod violation;

pub use acked_writes_durable::acked_writes_durable;
pub use isolated_writes_not_acked::isolated_writes_not_acked;
pub use reads_see_acked_writes::reads_see_acked_writes;
pub use rejected_writes_absent::rejected_writes_absent;
pub use replicas_agree::replicas_agree;
pub use violation::Violation;

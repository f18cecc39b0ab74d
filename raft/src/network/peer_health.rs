//! Whether a peer answers the raft calls sent to it, and the log lines about that: one when it
//! stops answering, one when it answers again, and a summary every [`SUMMARY_INTERVAL`] in
//! between. openraft itself warns about every failed call (a leader heartbeats each peer ten
//! times a second and retries replication besides: hundreds of lines a second for one dead peer);
//! the binary drops those warnings and relies on these lines.
//!
//! One [`PeerHealth`] per peer is shared by all of openraft's clients of that peer (heartbeats,
//! replication, votes), so its state is the peer's, not one stream's.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::error_chain;
use crate::typ::NodeId;

/// A peer whose calls have all failed for this long is reported unreachable: the longest default
/// election timeout, so a slow answer in a busy moment is not reported, a peer that is down is.
pub const UNREACHABLE_AFTER: Duration = Duration::from_secs(1);

/// While a peer stays unreachable, a summary line this often (the failures since the last one).
pub const SUMMARY_INTERVAL: Duration = Duration::from_secs(60);

/// A change worth a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// Every call has failed for [`UNREACHABLE_AFTER`]: `failures` of them.
    Unreachable {
        /// Calls failed since the last answer.
        failures: u64,
    },
    /// Still unreachable, [`SUMMARY_INTERVAL`] after the last report.
    StillUnreachable {
        /// Calls failed since the last report.
        failures: u64,
        /// How long the peer has not answered.
        silent: Duration,
    },
    /// The peer answered again after it was reported unreachable.
    Reachable {
        /// Calls failed while it did not answer.
        failures: u64,
        /// How long it did not answer.
        silent: Duration,
    },
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// The last call was answered.
    Answering,
    /// Calls fail since `since`, not yet for [`UNREACHABLE_AFTER`].
    Failing { since: Instant, failures: u64 },
    /// Reported unreachable; `failures` in all, `unreported` since the report at `reported`.
    Unreachable {
        since: Instant,
        failures: u64,
        reported: Instant,
        unreported: u64,
    },
}

/// The reachability of one peer.
#[derive(Debug)]
pub struct PeerHealth {
    peer: NodeId,
    state: Mutex<State>,
    /// When the latest call failed.
    last_failure: Mutex<Option<Instant>>,
}

impl PeerHealth {
    /// A peer taken to answer until a call fails.
    pub fn new(peer: NodeId) -> Self {
        Self {
            peer,
            state: Mutex::new(State::Answering),
            last_failure: Mutex::new(None),
        }
    }

    /// Whether a call to the peer failed at or after `at` and none was answered since.
    pub fn failing_since(&self, at: Instant) -> bool {
        let answering = matches!(
            *self.state.lock().unwrap_or_else(|e| e.into_inner()),
            State::Answering
        );
        let last = *self.last_failure.lock().unwrap_or_else(|e| e.into_inner());
        !answering && last.is_some_and(|last| last >= at)
    }

    /// Records an answered call at `now` (any answer: the peer is there, whatever it said).
    pub fn answered(&self, now: Instant) -> Option<Report> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let report = match *state {
            State::Unreachable {
                since, failures, ..
            } => Some(Report::Reachable {
                failures,
                silent: now.saturating_duration_since(since),
            }),
            State::Answering | State::Failing { .. } => None,
        };
        *state = State::Answering;
        report
    }

    /// Records a failed call at `now`.
    pub fn failed(&self, now: Instant) -> Option<Report> {
        *self.last_failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (next, report) = match *state {
            State::Answering => (
                State::Failing {
                    since: now,
                    failures: 1,
                },
                None,
            ),
            State::Failing { since, failures } => {
                let failures = failures.saturating_add(1);
                if now.saturating_duration_since(since) >= UNREACHABLE_AFTER {
                    let next = State::Unreachable {
                        since,
                        failures,
                        reported: now,
                        unreported: 0,
                    };
                    (next, Some(Report::Unreachable { failures }))
                } else {
                    (State::Failing { since, failures }, None)
                }
            }
            State::Unreachable {
                since,
                failures,
                reported,
                unreported,
            } => {
                let failures = failures.saturating_add(1);
                let unreported = unreported.saturating_add(1);
                if now.saturating_duration_since(reported) >= SUMMARY_INTERVAL {
                    let next = State::Unreachable {
                        since,
                        failures,
                        reported: now,
                        unreported: 0,
                    };
                    let report = Report::StillUnreachable {
                        failures: unreported,
                        silent: now.saturating_duration_since(since),
                    };
                    (next, Some(report))
                } else {
                    let next = State::Unreachable {
                        since,
                        failures,
                        reported,
                        unreported,
                    };
                    (next, None)
                }
            }
        };
        *state = next;
        report
    }

    /// Records an answer of the peer at `url`, now, and logs its return if it was reported
    /// unreachable.
    pub fn record_answer(&self, url: &str) {
        if let Some(Report::Reachable { failures, silent }) = self.answered(Instant::now()) {
            let peer = self.peer;
            tracing::info!(peer, url, failures, ?silent, "peer answers again");
        }
    }

    /// Records a call to the peer at `url` that failed now with `error` (at debug level), and
    /// logs the peer as unreachable when that is news or a summary is due.
    pub fn record_failure(&self, url: &str, error: &dyn std::error::Error) {
        let peer = self.peer;
        let error = error_chain(error);
        tracing::debug!(peer, url, %error, "raft call to peer failed");
        match self.failed(Instant::now()) {
            Some(Report::Unreachable { failures }) => tracing::warn!(
                peer,
                url,
                failures,
                %error,
                "peer is unreachable: raft calls to it fail (a summary follows every {:?} \
                 until it answers)",
                SUMMARY_INTERVAL
            ),
            Some(Report::StillUnreachable { failures, silent }) => tracing::warn!(
                peer,
                url,
                failures,
                ?silent,
                %error,
                "peer is still unreachable"
            ),
            Some(Report::Reachable { .. }) | None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEARTBEAT: Duration = Duration::from_millis(100);

    /// Fails a call every heartbeat from `start` for `span`; returns the reports and the time
    /// after the last call.
    fn fail_for(health: &PeerHealth, start: Instant, span: Duration) -> (Vec<Report>, Instant) {
        let mut now = start;
        let mut reports = Vec::new();
        while now < start + span {
            reports.extend(health.failed(now));
            now += HEARTBEAT;
        }
        (reports, now)
    }

    #[test]
    fn a_dead_peer_makes_one_line_then_one_a_minute_then_one_when_back() {
        let health = PeerHealth::new(2);
        let start = Instant::now();
        let (reports, now) = fail_for(&health, start, Duration::from_secs(150));
        // 1,500 failed calls in 150 s: reported after a second, then at 61 s and 121 s.
        assert_eq!(
            reports,
            vec![
                Report::Unreachable { failures: 11 },
                Report::StillUnreachable {
                    failures: 600,
                    silent: Duration::from_secs(61),
                },
                Report::StillUnreachable {
                    failures: 600,
                    silent: Duration::from_secs(121),
                },
            ]
        );
        assert_eq!(
            health.answered(now),
            Some(Report::Reachable {
                failures: 1500,
                silent: Duration::from_secs(150),
            })
        );
        assert_eq!(health.answered(now + HEARTBEAT), None, "reported once");
    }

    #[test]
    fn failures_shorter_than_the_grace_are_not_reported() {
        let health = PeerHealth::new(2);
        let start = Instant::now();
        let mut now = start;
        // Two of every three calls fail, for a minute: never a second without an answer.
        for round in 0..600u32 {
            let report = if round % 3 == 2 {
                health.answered(now)
            } else {
                health.failed(now)
            };
            assert_eq!(report, None, "at call {round}");
            now += HEARTBEAT;
        }
        let (reports, _) = fail_for(&health, now, UNREACHABLE_AFTER);
        assert_eq!(reports, vec![], "a failing second that is not over yet");
    }

    #[test]
    fn a_peer_is_reported_again_after_it_came_back_and_left() {
        let health = PeerHealth::new(3);
        let start = Instant::now();
        let (first, now) = fail_for(&health, start, Duration::from_secs(2));
        assert_eq!(first.len(), 1);
        assert!(matches!(
            health.answered(now),
            Some(Report::Reachable { .. })
        ));
        let (second, _) = fail_for(&health, now + HEARTBEAT, Duration::from_secs(2));
        assert_eq!(second, vec![Report::Unreachable { failures: 11 }]);
    }

    // A leader's hand-over gives up on a successor only for a failure after it began, with no
    // answer since.
    #[test]
    fn failing_since_counts_only_later_failures_without_an_answer() {
        let health = PeerHealth::new(2);
        let start = Instant::now();
        assert!(
            !health.failing_since(start),
            "a peer not called yet answers"
        );
        health.failed(start);
        let later = start + HEARTBEAT;
        assert!(!health.failing_since(later), "the failure came before");
        health.failed(later);
        assert!(health.failing_since(later));
        health.answered(later + HEARTBEAT);
        assert!(!health.failing_since(later), "it answered since");
    }
}

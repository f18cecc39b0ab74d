//! Guarantee `isolated_writes_not_acked`: a replica cut off from the majority cannot commit, so
//! no write sent to it while it was isolated is acknowledged before the partition heals (Raft
//! §5.2/§5.3: an entry is committed only once a majority stores it).
//!
//! Such a write may still take effect later, without the client ever learning of it: the
//! replica's write path keeps retrying (forwarding to the new leader) after the client gave up.
//! So its presence after the heal is not a violation; whether replicas agree on it is
//! `replicas_agree`'s business.

use std::time::Duration;

use crate::check::Violation;
use crate::history::History;

const GUARANTEE: &str = "isolated_writes_not_acked";

/// The violations of `isolated_writes_not_acked`: writes sent to `replica` at or after `from`
/// and answered before `until`, the virtual-time window in which it was cut off from every
/// other replica.
pub fn isolated_writes_not_acked(
    history: &History,
    replica: &str,
    from: Duration,
    until: Duration,
) -> Vec<Violation> {
    history
        .writes
        .iter()
        .filter(|w| w.replica == replica && w.sent_at >= from && w.done_at < until)
        .filter(|w| w.is_acked())
        .map(|write| Violation {
            guarantee: GUARANTEE,
            detail: format!("{write} was acknowledged by {replica} while it was isolated"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::history::WriteOp;
    use crate::history::WriteOutcome;
    use crate::history::WriteRecord;

    fn isolated_write(outcome: WriteOutcome) -> WriteRecord {
        WriteRecord {
            op: WriteOp::Create,
            key: "lost".to_owned(),
            value: Bytes::from_static(b"x"),
            replica: "replica-1".to_owned(),
            sent_at: Duration::from_secs(5),
            done_at: Duration::from_secs(7),
            outcome,
        }
    }

    fn check(history: &History) -> Vec<Violation> {
        isolated_writes_not_acked(
            history,
            "replica-1",
            Duration::from_secs(4),
            Duration::from_secs(10),
        )
    }

    // R-HA-014 (partial): unacknowledged writes to an isolated leader pass.
    #[test]
    fn holds_for_unacked_writes() {
        let mut h = History::default();
        h.record_write(isolated_write(WriteOutcome::Unknown {
            reason: "deadline".to_owned(),
        }));
        assert_eq!(check(&h), vec![]);
    }

    // R-HA-014 (partial): an acknowledgement from the isolated replica is reported.
    #[test]
    fn reports_an_ack_from_the_isolated_replica() {
        let mut h = History::default();
        h.record_write(isolated_write(WriteOutcome::Acked { revision: Some(9) }));
        let violations = check(&h);
        assert_eq!(violations.len(), 1, "{violations:?}");
    }

    #[test]
    fn ignores_writes_outside_the_isolation_window() {
        let mut h = History::default();
        let mut early = isolated_write(WriteOutcome::Acked { revision: Some(2) });
        early.sent_at = Duration::from_secs(1);
        h.record_write(early);
        let mut after_heal = isolated_write(WriteOutcome::Acked { revision: Some(12) });
        after_heal.done_at = Duration::from_secs(11);
        h.record_write(after_heal);
        let mut elsewhere = isolated_write(WriteOutcome::Acked { revision: Some(7) });
        elsewhere.replica = "replica-2".to_owned();
        h.record_write(elsewhere);
        assert_eq!(check(&h), vec![]);
    }
}

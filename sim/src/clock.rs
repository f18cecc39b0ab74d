//! [`VirtualClock`]: a replica host's wall clock — the simulation's virtual time, plus an offset
//! a clock-skew fault sets — which the resource API stamps into objects.
//!
//! turmoil gives every host one shared monotonic clock, so only the wall clock can be skewed:
//! timers (raft's election and heartbeat timeouts, watch deadlines, the compactor) tick alike on
//! every host. Skewing the wall clock shows that no replicated decision reads it: the
//! checkers must pass whatever the offsets.

use std::sync::Arc;
use std::sync::atomic::AtomicI64;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::SystemTime;

use apiary_api::Clock;
use chrono::DateTime;
use chrono::TimeDelta;
use chrono::Utc;

/// A host's wall clock: virtual time shifted by the host's current skew. Clones share the
/// skew, so the cluster keeps one to set it while the host's API reads another.
#[derive(Debug, Clone, Default)]
pub struct VirtualClock {
    /// The skew in milliseconds (negative: behind).
    offset_ms: Arc<AtomicI64>,
}

impl VirtualClock {
    /// Sets how far this clock is ahead of virtual time (negative: behind).
    pub fn skew(&self, offset: TimeDelta) {
        self.offset_ms
            .store(offset.num_milliseconds(), Ordering::Relaxed);
    }

    /// The clock's reading at `since_epoch` of virtual time.
    fn at(&self, since_epoch: Duration) -> DateTime<Utc> {
        let virtual_now = DateTime::<Utc>::from(SystemTime::UNIX_EPOCH + since_epoch);
        let offset = TimeDelta::milliseconds(self.offset_ms.load(Ordering::Relaxed));
        virtual_now
            .checked_add_signed(offset)
            .unwrap_or(virtual_now)
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> DateTime<Utc> {
        self.at(turmoil::since_epoch().unwrap_or(Duration::ZERO))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skew_moves_the_reading_and_every_clone_sees_it() {
        let clock = VirtualClock::default();
        let api_side = clock.clone();
        let at = Duration::from_secs(1_767_225_600);
        let unskewed = api_side.at(at);
        clock.skew(TimeDelta::minutes(-7));
        assert_eq!(api_side.at(at), unskewed - TimeDelta::minutes(7));
        clock.skew(TimeDelta::seconds(90));
        assert_eq!(api_side.at(at), unskewed + TimeDelta::seconds(90));
        clock.skew(TimeDelta::zero());
        assert_eq!(api_side.at(at), unskewed);
    }
}

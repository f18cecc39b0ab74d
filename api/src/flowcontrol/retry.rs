//! The `Retry-After` of a refused request, per level, as Kubernetes' dropped-requests
//! tracker computes it: 1 s while refusals are rare, doubled (up to 60 s) while a level keeps
//! refusing within the last advised wait, and back down once it stops.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use tokio::time::Instant;

/// The shortest advised wait, in seconds.
const MIN_SECONDS: u64 = 1;
/// The longest advised wait, in seconds.
const MAX_SECONDS: u64 = 60;

/// Per level: the current advice and when the last refusal was.
#[derive(Default)]
pub struct RetryAfter {
    levels: Mutex<HashMap<String, (u64, Instant)>>,
}

impl RetryAfter {
    /// Records a refusal at `level` and answers the seconds the client should wait.
    pub fn rejected(&self, level: &str) -> u64 {
        self.rejected_at(level, Instant::now())
    }

    fn rejected_at(&self, level: &str, now: Instant) -> u64 {
        let mut levels = self.levels.lock().unwrap_or_else(PoisonError::into_inner);
        let Some((seconds, last)) = levels.get_mut(level) else {
            levels.insert(level.to_owned(), (MIN_SECONDS, now));
            return MIN_SECONDS;
        };
        let since = now.duration_since(*last);
        let window = Duration::from_secs(*seconds);
        *seconds = if since < window {
            (*seconds * 2).min(MAX_SECONDS)
        } else if since >= window * 2 {
            (*seconds / 2).max(MIN_SECONDS)
        } else {
            *seconds
        };
        *last = now;
        *seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // R-RES-239
    #[test]
    fn advice_grows_while_refusals_continue_and_shrinks_after() {
        let tracker = RetryAfter::default();
        let start = Instant::now();
        let at = |s: u64| start + Duration::from_millis(s);
        assert_eq!(tracker.rejected_at("l", at(0)), 1);
        assert_eq!(tracker.rejected_at("l", at(100)), 2);
        assert_eq!(tracker.rejected_at("l", at(200)), 4);
        assert_eq!(tracker.rejected_at("other", at(200)), 1);
        assert_eq!(tracker.rejected_at("l", at(10_000)), 2);
        assert_eq!(tracker.rejected_at("l", at(20_000)), 1);
    }
}

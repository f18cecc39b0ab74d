//! The server's concurrency (`--max-requests-inflight` + `--max-mutating-requests-inflight`)
//! split among the limited levels by `nominalConcurrencyShares`, and the borrowing between
//! them: a level may lend `lendablePercent` of its nominal seats and borrow up to
//! `borrowingLimitPercent` (no limit when unset); the seats are reassigned from the levels'
//! recent demand, the guaranteed (unlendable) seats first.

use super::config::Level;

/// One level's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Its share of the server's seats.
    pub nominal: usize,
    /// Seats it keeps whatever others want.
    pub min: usize,
    /// Seats it may hold at most, borrowing included.
    pub max: usize,
}

/// The nominal seats of `level` when the levels' shares sum to `total_shares`: Kubernetes'
/// `ceil(server_limit * shares / total_shares)`.
pub fn nominal_seats(server_limit: usize, level: &Level, total_shares: u64) -> usize {
    if total_shares == 0 {
        return 0;
    }
    let seats = server_limit as u64 * level.nominal_shares;
    seats.div_ceil(total_shares) as usize
}

/// The bounds of every level (exempt ones included, whose bounds are not enforced), in
/// the order given.
pub fn bounds(server_limit: usize, levels: &[&Level]) -> Vec<Bounds> {
    let total_shares: u64 = levels.iter().map(|l| l.nominal_shares).sum();
    levels
        .iter()
        .map(|level| {
            let nominal = nominal_seats(server_limit, level, total_shares);
            // Kubernetes rounds both to the nearest seat.
            let percent = |p: u64| ((nominal as u64 * p + 50) / 100) as usize;
            let lendable = percent(level.lendable_percent).min(nominal);
            let borrowing = level
                .borrowing_limit_percent
                .map_or(server_limit, |p| percent(p).min(server_limit));
            Bounds {
                nominal,
                min: nominal - lendable,
                max: nominal + borrowing,
            }
        })
        .collect()
}

/// The seats each level gets from `capacity` (the limited levels' nominal seats together),
/// given each one's recent `demand`: first everyone's guaranteed seats, then seats one at a
/// time to the levels that want more, in turn, up to their maximum; what is left returns to
/// the levels below their nominal seats.
pub fn rebalance(bounds: &[Bounds], demand: &[usize], capacity: usize) -> Vec<usize> {
    let mut seats: Vec<usize> = bounds.iter().map(|b| b.min).collect();
    let mut left = capacity.saturating_sub(seats.iter().sum());
    let wants = |i: usize, seats: &[usize]| {
        let want = demand[i].clamp(bounds[i].min, bounds[i].max);
        seats[i] < want
    };
    let below_nominal = |i: usize, seats: &[usize]| seats[i] < bounds[i].nominal;
    for wanted in [&wants as &dyn Fn(usize, &[usize]) -> bool, &below_nominal] {
        let mut granted = true;
        while left > 0 && granted {
            granted = false;
            for i in 0..bounds.len() {
                if left > 0 && wanted(i, &seats) {
                    seats[i] += 1;
                    left -= 1;
                    granted = true;
                }
            }
        }
    }
    seats
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::flavor::Flavor;
    use crate::flowcontrol::objects;

    fn level(shares: u64, lendable: u64, borrowing: Option<u64>) -> Level {
        let mut limited = json!({"nominalConcurrencyShares": shares,
            "lendablePercent": lendable, "limitResponse": {"type": "Reject"}});
        if let Some(b) = borrowing {
            limited["borrowingLimitPercent"] = json!(b);
        }
        Level::from_object(&json!({"spec": {"type": "Limited", "limited": limited}}))
    }

    // R-RES-239
    #[test]
    fn bootstrap_levels_split_the_default_600_seats() {
        let (_, levels) = objects::all(Flavor::Kubernetes);
        let levels: Vec<Level> = levels.iter().map(Level::from_object).collect();
        let refs: Vec<&Level> = levels.iter().collect();
        let bounds = bounds(600, &refs);
        let by_name = |name: &str| {
            let at = levels.iter().position(|l| l.name == name).unwrap();
            bounds[at]
        };
        // Shares 0 + 5 + 30 + 40 + 10 + 40 + 100 + 20 = 245.
        assert_eq!(by_name("exempt").nominal, 0);
        assert_eq!(by_name("catch-all").nominal, 13);
        assert_eq!(by_name("global-default").nominal, 49);
        assert_eq!(by_name("workload-low").nominal, 245);
        let low = by_name("workload-low");
        assert_eq!((low.min, low.max), (24, 245 + 600));
        assert_eq!(by_name("leader-election").min, 25);
    }

    #[test]
    fn busy_levels_borrow_what_idle_levels_lend_within_limits() {
        let levels = [
            level(1, 50, Some(0)),
            level(1, 50, None),
            level(2, 100, None),
        ];
        let refs: Vec<&Level> = levels.iter().collect();
        let bounds = bounds(8, &refs);
        assert_eq!(
            bounds[0],
            Bounds {
                nominal: 2,
                min: 1,
                max: 2
            }
        );
        assert_eq!(
            bounds[1],
            Bounds {
                nominal: 2,
                min: 1,
                max: 10
            }
        );
        assert_eq!(
            bounds[2],
            Bounds {
                nominal: 4,
                min: 0,
                max: 12
            }
        );
        // All idle: everyone back at nominal.
        assert_eq!(rebalance(&bounds, &[0, 0, 0], 8), vec![2, 2, 4]);
        // The second level is busy: it borrows the third's seats and the first's lendable one,
        // but the first may not borrow at all.
        assert_eq!(rebalance(&bounds, &[0, 20, 0], 8), vec![1, 7, 0]);
        assert_eq!(rebalance(&bounds, &[5, 20, 0], 8), vec![2, 6, 0]);
        // Everyone busy: the seats are shared in turn above the guaranteed ones.
        assert_eq!(rebalance(&bounds, &[9, 9, 9], 8), vec![2, 4, 2]);
    }
}

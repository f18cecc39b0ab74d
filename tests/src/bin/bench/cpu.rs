//! CPU time of the replicas over a load level, which the machine's load changes far less than
//! throughput: each process's `utime + stime` from `/proc/<pid>/stat`, before and after.

use std::fs;

/// Clock ticks per second of `/proc/<pid>/stat`'s times (`USER_HZ`, 100 on Linux's ABI).
const TICKS_PER_SECOND: f64 = 100.0;

/// The user plus system CPU seconds `pid` has used so far, or `None` when it cannot be read.
pub fn seconds(pid: u32) -> Option<f64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse(&stat)
}

/// `utime + stime` in seconds from the text of a `/proc/<pid>/stat` file: fields 14 and 15,
/// counted after the parenthesised command name (which may hold spaces).
fn parse(stat: &str) -> Option<f64> {
    let (_, rest) = stat.rsplit_once(')')?;
    // `rest` starts at field 3 (the state).
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / TICKS_PER_SECOND)
}

/// The CPU seconds of each of `pids` now (0 for one that cannot be read).
pub fn snapshot(pids: &[u32]) -> Vec<f64> {
    pids.iter()
        .map(|&pid| seconds(pid).unwrap_or(0.0))
        .collect()
}

/// CPU milliseconds per operation for each process between two snapshots, times 1,000: the
/// CPU seconds each replica spent per 1,000 operations.
pub fn per_thousand(before: &[f64], after: &[f64], operations: u64) -> Vec<f64> {
    before
        .iter()
        .zip(after)
        .map(|(b, a)| (a - b) * 1000.0 / operations.max(1) as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_user_and_system_ticks_after_a_command_name_with_spaces() {
        let stat = "42 (a b) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 1 2 3";
        assert_eq!(parse(stat), Some(3.0));
    }

    #[test]
    fn per_thousand_divides_each_process_by_the_operations() {
        let spent = per_thousand(&[1.0, 2.0], &[3.0, 2.5], 500);
        assert_eq!(spent, vec![4.0, 1.0]);
    }
}

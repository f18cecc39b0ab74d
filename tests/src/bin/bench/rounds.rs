//! What the interleaved benchmarks (`--apply`, `--custom`) report of one way at one level
//! over their rounds.

use std::time::Duration;

use apiary_tests::load;
use apiary_tests::load::LevelResult;

/// Mean ops/s over the rounds and its range.
pub fn rate(runs: &[LevelResult]) -> (f64, f64, f64) {
    let rates: Vec<f64> = runs.iter().map(LevelResult::per_second).collect();
    let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
    let low = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let high = rates.iter().copied().fold(0.0, f64::max);
    (mean, low, high)
}

/// The median of the rounds' p50 latencies.
pub fn p50(runs: &[LevelResult]) -> Option<Duration> {
    let mut all: Vec<Duration> = runs.iter().filter_map(|r| r.percentile(50.0)).collect();
    all.sort_unstable();
    load::percentile(&all, 50.0)
}

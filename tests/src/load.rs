//! Drives a fixed number of requests at a fixed concurrency, bounded in time, and measures
//! throughput and latency percentiles. Used by the benchmark for Apiary and etcd alike, so both
//! are measured by the same code.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

/// The outcome of one load level.
#[derive(Debug, Clone)]
pub struct LevelResult {
    /// Number of concurrent clients.
    pub concurrency: usize,
    /// Requests that succeeded.
    pub ok: u64,
    /// Requests that failed.
    pub errors: u64,
    /// The first failure, for the report.
    pub first_error: Option<String>,
    /// Wall time from the first request to the last answer.
    pub elapsed: Duration,
    /// Latency of every successful request, sorted ascending.
    pub latencies: Vec<Duration>,
    /// Whether the time budget ran out before every request was sent.
    pub truncated: bool,
}

impl LevelResult {
    /// Successful requests per second.
    pub fn per_second(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.ok as f64 / secs
        } else {
            0.0
        }
    }

    /// The `p`th percentile latency (nearest rank, `p` in 0..=100), if any request succeeded.
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        percentile(&self.latencies, p)
    }
}

/// The `p`th percentile (nearest rank) of `sorted`, which must be sorted ascending.
pub fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p.clamp(0.0, 100.0) / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.saturating_sub(1)).copied()
}

/// Runs `op(0) .. op(requests - 1)` from `concurrency` concurrent tasks, each taking the next
/// index when its previous request is answered (closed loop), until all are done or `budget` has
/// passed. Each request's own deadline is the caller's business (the clients have one).
pub async fn run<F, Fut>(concurrency: usize, requests: u64, budget: Duration, op: F) -> LevelResult
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let op = Arc::new(op);
    let next = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..concurrency.max(1))
        .map(|_| {
            let op = op.clone();
            let next = next.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut errors = 0u64;
                let mut first_error = None;
                let mut truncated = false;
                loop {
                    if start.elapsed() > budget {
                        truncated = true;
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= requests {
                        break;
                    }
                    let sent = Instant::now();
                    match op(i).await {
                        Ok(()) => latencies.push(sent.elapsed()),
                        Err(e) => {
                            errors += 1;
                            first_error.get_or_insert(e);
                        }
                    }
                }
                (latencies, errors, first_error, truncated)
            })
        })
        .collect();
    let mut result = LevelResult {
        concurrency,
        ok: 0,
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
        latencies: Vec::new(),
        truncated: false,
    };
    for worker in futures::future::join_all(workers).await {
        match worker {
            Ok((latencies, errors, first_error, truncated)) => {
                result.latencies.extend(latencies);
                result.errors += errors;
                result.truncated |= truncated;
                if result.first_error.is_none() {
                    result.first_error = first_error;
                }
            }
            Err(join) => {
                result.errors += 1;
                result
                    .first_error
                    .get_or_insert(format!("worker failed: {join}"));
            }
        }
    }
    result.elapsed = start.elapsed();
    result.ok = result.latencies.len() as u64;
    result.latencies.sort_unstable();
    result
}

/// [`run`] after `concurrency` unmeasured requests of the same kind from as many tasks, so that
/// the measured ones find the client's connections open: a pooled HTTP/1.1 client opens one per
/// concurrent request, and at hundreds of clients the TLS handshakes would otherwise cost more
/// than the requests they carry. The write levels get the same from their warm-up.
pub async fn run_warmed<F, Fut>(
    concurrency: usize,
    requests: u64,
    budget: Duration,
    op: F,
) -> LevelResult
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let op = Arc::new(op);
    let warm = op.clone();
    run(concurrency, concurrency as u64, budget, move |i| warm(i)).await;
    run(concurrency, requests, budget, move |i| op(i)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let ms: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&ms, 50.0), Some(Duration::from_millis(50)));
        assert_eq!(percentile(&ms, 99.0), Some(Duration::from_millis(99)));
        assert_eq!(percentile(&ms, 100.0), Some(Duration::from_millis(100)));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[tokio::test]
    async fn every_request_runs_once_and_failures_are_counted() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = seen.clone();
        let result = run(8, 100, Duration::from_secs(10), move |i| {
            let record = record.clone();
            async move {
                record.lock().unwrap().push(i);
                if i % 10 == 0 {
                    Err(format!("boom {i}"))
                } else {
                    Ok(())
                }
            }
        })
        .await;
        assert_eq!(result.ok, 90);
        assert_eq!(result.errors, 10);
        assert!(!result.truncated);
        assert!(result.first_error.unwrap().starts_with("boom"));
        let mut seen = seen.lock().unwrap().clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn the_time_budget_stops_a_level() {
        let result = run(2, 1_000_000, Duration::from_millis(100), |_| async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            Ok(())
        })
        .await;
        assert!(result.truncated);
        assert!(result.ok < 1_000);
        assert!(result.elapsed < Duration::from_secs(2));
    }
}

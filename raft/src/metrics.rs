//! What the store measures as it works, recorded with atomics only (no lock, no allocation on
//! the write, apply and read paths): fsync and apply latencies, snapshots, read-index latency
//! and peer round trips (the log counts the leader changes it persists, crate::log). The node exposes them under etcd's metric names
//! (`etcd_disk_wal_fsync_duration_seconds`, ...); the raft state itself (term, indexes, leader)
//! is read from openraft's metrics at scrape time instead of being counted again.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::EncodeMetric;
use prometheus_client::encoding::MetricEncoder;
use prometheus_client::encoding::NoLabelSet;
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::TypedMetric;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;

/// etcd's buckets for disk latencies (`etcd_disk_wal_fsync_duration_seconds`,
/// `etcd_disk_backend_commit_duration_seconds`): 1 ms doubling 14 times.
pub const DISK_BUCKETS: [f64; 14] = exponential::<14>(0.001, 2.0);
/// etcd's buckets for snapshot durations: 10 ms doubling 17 times.
pub const SNAPSHOT_BUCKETS: [f64; 17] = exponential::<17>(0.01, 2.0);
/// etcd's buckets for peer round trips (`etcd_network_peer_round_trip_time_seconds`): 0.1 ms
/// doubling 16 times.
pub const ROUND_TRIP_BUCKETS: [f64; 16] = exponential::<16>(0.0001, 2.0);
/// Read-index latency buckets, kube-apiserver's request buckets up to 10 s.
pub const READ_INDEX_BUCKETS: [f64; 18] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.5, 2.0, 3.0,
    5.0, 10.0,
];

const fn exponential<const N: usize>(start: f64, factor: f64) -> [f64; N] {
    let mut buckets = [0.0; N];
    let mut value = start;
    let mut i = 0;
    while i < N {
        buckets[i] = value;
        value *= factor;
        i += 1;
    }
    buckets
}

/// A latency histogram of fixed buckets over atomics: observing is a few relaxed atomic adds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    inner: Arc<HistogramInner>,
}

#[derive(Debug)]
struct HistogramInner {
    bounds: &'static [f64],
    /// One count per bound, then the count above the last bound.
    counts: Box<[AtomicU64]>,
    sum_nanos: AtomicU64,
}

impl LatencyHistogram {
    /// An empty histogram over `bounds` (seconds, ascending).
    pub fn new(bounds: &'static [f64]) -> Self {
        Self {
            inner: Arc::new(HistogramInner {
                bounds,
                counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
                sum_nanos: AtomicU64::new(0),
            }),
        }
    }

    /// Records one observation.
    pub fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let bucket = self
            .inner
            .bounds
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(self.inner.bounds.len());
        self.inner.counts[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.inner.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// How many observations were recorded.
    pub fn count(&self) -> u64 {
        self.inner
            .counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum()
    }
}

impl TypedMetric for LatencyHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for LatencyHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let inner = &self.inner;
        let buckets: Vec<(f64, u64)> = inner
            .bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::MAX))
            .zip(inner.counts.iter().map(|c| c.load(Ordering::Relaxed)))
            .collect();
        let count = buckets.iter().map(|(_, n)| n).sum();
        let sum = Duration::from_nanos(inner.sum_nanos.load(Ordering::Relaxed)).as_secs_f64();
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

/// The peer a round trip went to (etcd's label, `To`, is the peer's id).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
#[allow(non_snake_case)]
pub struct PeerLabels {
    /// The peer's raft id.
    pub To: String,
}

fn round_trip_histogram() -> LatencyHistogram {
    LatencyHistogram::new(&ROUND_TRIP_BUCKETS)
}

/// What the raft log measures ([`crate::log::LogStore::metrics`]).
#[derive(Debug, Clone)]
pub struct LogMetrics {
    /// The latency of each `fdatasync` of a log segment.
    pub fsync: LatencyHistogram,
    /// How many leaders the log saved a committed vote for: the leader changes this replica
    /// saw since it started.
    pub leader_changes: Counter,
}

/// The store's own measurements, shared by the parts that record them and the scrape.
#[derive(Debug, Clone)]
pub struct StoreMetrics {
    /// Applying one committed entry to the store (etcd's backend commit analogue).
    pub apply: LatencyHistogram,
    /// Building and saving one snapshot.
    pub snapshot_duration: LatencyHistogram,
    /// The size of the newest snapshot built here, in bytes.
    pub snapshot_bytes: Gauge,
    /// When the newest snapshot was built or installed here since the replica started.
    pub snapshot_taken: Arc<Mutex<Option<Instant>>>,
    /// Getting a quorum-confirmed read index (linearizable reads).
    pub read_index: LatencyHistogram,
    /// Round trips of append-entries calls, per peer.
    pub peer_round_trip: Family<PeerLabels, LatencyHistogram, fn() -> LatencyHistogram>,
}

impl Default for StoreMetrics {
    fn default() -> Self {
        Self {
            apply: LatencyHistogram::new(&DISK_BUCKETS),
            snapshot_duration: LatencyHistogram::new(&SNAPSHOT_BUCKETS),
            snapshot_bytes: Gauge::default(),
            snapshot_taken: Arc::default(),
            read_index: LatencyHistogram::new(&READ_INDEX_BUCKETS),
            peer_round_trip: Family::new_with_constructor(round_trip_histogram),
        }
    }
}

impl StoreMetrics {
    /// Notes that a snapshot was built or installed now.
    pub fn snapshot_taken_now(&self) {
        *self
            .snapshot_taken
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }

    /// How long ago the newest snapshot was built or installed (`None`: not since start).
    pub fn snapshot_age(&self) -> Option<Duration> {
        let taken = *self
            .snapshot_taken
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        taken.map(|t| t.elapsed())
    }

    /// The round-trip histogram of `peer`, to keep and record into without a lookup.
    pub fn round_trips_to(&self, peer: u64) -> LatencyHistogram {
        self.peer_round_trip
            .get_or_create(&PeerLabels {
                To: peer.to_string(),
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_the_first_bucket_that_holds_them() {
        let h = LatencyHistogram::new(&[0.001, 0.01]);
        h.observe(Duration::from_micros(500));
        h.observe(Duration::from_millis(1));
        h.observe(Duration::from_millis(5));
        h.observe(Duration::from_secs(1));
        let counts: Vec<u64> = h
            .inner
            .counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        assert_eq!(counts, vec![2, 1, 1]);
        assert_eq!(h.count(), 4);
        assert_eq!(h.inner.sum_nanos.load(Ordering::Relaxed), 1_006_500_000);
    }

    #[test]
    fn etcd_buckets_double_from_their_start() {
        assert_eq!(DISK_BUCKETS[0], 0.001);
        assert_eq!(DISK_BUCKETS[13], 8.192);
        assert_eq!(ROUND_TRIP_BUCKETS[15], 3.2768);
    }
}

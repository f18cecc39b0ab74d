//! The `apiserver_flowcontrol_*` metrics, named and labelled as kube-apiserver names them
//! (registered with their stability as component-base marks it, crate::metrics).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

use crate::metrics::Descriptor;
use crate::metrics::Metrics;
use crate::metrics::Stability;

/// Kubernetes' buckets of `apiserver_flowcontrol_request_wait_duration_seconds`.
const WAIT_BUCKETS: [f64; 13] = [
    0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
];

/// A schema and its level.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FlowLabels {
    /// The FlowSchema's name.
    pub flow_schema: String,
    /// The PriorityLevelConfiguration's name.
    pub priority_level: String,
}

/// A schema, its level, and why a request was refused.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RejectedLabels {
    /// The FlowSchema's name.
    pub flow_schema: String,
    /// The PriorityLevelConfiguration's name.
    pub priority_level: String,
    /// `queue-full`, `concurrency-limit`, `time-out`.
    pub reason: String,
}

/// A waited request: whether it then executed, its schema and level.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WaitLabels {
    /// `true` when the request executed, `false` when it was refused.
    pub execute: String,
    /// The FlowSchema's name.
    pub flow_schema: String,
    /// The PriorityLevelConfiguration's name.
    pub priority_level: String,
}

/// A level.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LevelLabels {
    /// The PriorityLevelConfiguration's name.
    pub priority_level: String,
}

type WaitHistogram = Family<WaitLabels, Histogram, fn() -> Histogram>;

fn wait_histogram() -> Histogram {
    Histogram::new(WAIT_BUCKETS)
}

/// The flow-control metrics. Clones share the values.
#[derive(Clone)]
pub struct FlowControlMetrics {
    /// Requests refused, by reason.
    pub rejected: Family<RejectedLabels, Counter>,
    /// Requests that got their seats.
    pub dispatched: Family<FlowLabels, Counter>,
    /// Requests waiting in a queue.
    pub in_queue: Family<FlowLabels, Gauge>,
    /// Requests executing.
    pub executing: Family<FlowLabels, Gauge>,
    /// Seats in use.
    pub executing_seats: Family<FlowLabels, Gauge>,
    /// Time spent waiting for seats.
    pub wait: WaitHistogram,
    /// Each level's nominal seats.
    pub nominal_limit: Family<LevelLabels, Gauge>,
    /// Each level's seats now, borrowing included.
    pub current_limit: Family<LevelLabels, Gauge>,
}

impl Default for FlowControlMetrics {
    fn default() -> Self {
        Self {
            rejected: Family::default(),
            dispatched: Family::default(),
            in_queue: Family::default(),
            executing: Family::default(),
            executing_seats: Family::default(),
            wait: Family::new_with_constructor(wait_histogram as fn() -> Histogram),
            nominal_limit: Family::default(),
            current_limit: Family::default(),
        }
    }
}

impl FlowControlMetrics {
    /// Registers every metric with the API's `/metrics`.
    pub fn register(&self, metrics: &Metrics) {
        metrics.register(
            &Descriptor {
                name: "apiserver_flowcontrol_rejected_requests",
                help: "Number of requests rejected by API Priority and Fairness subsystem",
                stability: Stability::Beta,
                deprecated_since: None,
            },
            self.rejected.clone(),
        );
        metrics.register(
            &Descriptor {
                name: "apiserver_flowcontrol_dispatched_requests",
                help: "Number of requests executed by API Priority and Fairness subsystem",
                stability: Stability::Beta,
                deprecated_since: None,
            },
            self.dispatched.clone(),
        );
        metrics.register(
            &Descriptor {
                name: "apiserver_flowcontrol_current_inqueue_requests",
                help: "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
                stability: Stability::Beta,
                deprecated_since: None,
            },
            self.in_queue.clone(),
        );
        metrics.register(
            &Descriptor {
                name: "apiserver_flowcontrol_current_executing_requests",
                help: "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
                stability: Stability::Beta,
                deprecated_since: None,
            },
            self.executing.clone(),
        );
        metrics.register(
            &Descriptor {
                name: "apiserver_flowcontrol_current_executing_seats",
                help: "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
                stability: Stability::Beta,
                deprecated_since: None,
            },
            self.executing_seats.clone(),
        );
        metrics.register(
            &Descriptor {
                name: "apiserver_flowcontrol_request_wait_duration_seconds",
                help: "Length of time a request spent waiting in its queue",
                stability: Stability::Beta,
                deprecated_since: None,
            },
            self.wait.clone(),
        );
        metrics.register(
            &Descriptor {
                name: "apiserver_flowcontrol_nominal_limit_seats",
                help: "Nominal number of execution seats configured for each priority level",
                stability: Stability::Beta,
                deprecated_since: None,
            },
            self.nominal_limit.clone(),
        );
        metrics.register(
            &Descriptor {
                name: "apiserver_flowcontrol_current_limit_seats",
                help: "current derived number of execution seats available to each priority level",
                stability: Stability::Alpha,
                deprecated_since: None,
            },
            self.current_limit.clone(),
        );
    }
}

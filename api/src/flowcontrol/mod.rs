//! API Priority and Fairness (`flowcontrol.apiserver/v1`): every request, once authenticated
//! and before it is authorized, is classified by the FlowSchemas into a priority level and a
//! flow, and waits for seats of that level (exempt levels never wait); a request that finds
//! its queue full, a level that rejects, or a wait too long answers 429 with `Retry-After`.
//! Responses name the schema and level by uid (`X-Kubernetes-PF-FlowSchema-UID`,
//! `X-Kubernetes-PF-PriorityLevel-UID`, flavored).
//!
//! # Layout
//! - `config`: the parsed configuration and the classification.
//! - `objects` and [`bootstrap`]: the objects every cluster starts with, and their upkeep.
//! - `limits`: the server's seats split among the levels, and borrowing.
//! - `queueset`, `shuffle`: a level's seats and queues, and shuffle sharding.
//! - `width`: how many seats a request takes.
//! - `watcher`: keeps the configuration current from the store.
//! - `dump`: the `/debug/api_priority_and_fairness/` dumps; [`metrics`]: the metrics.

pub mod bootstrap;
mod config;
mod dump;
mod limits;
pub mod metrics;
mod objects;
mod queueset;
mod retry;
mod shuffle;
mod watcher;
mod width;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Once;
use std::sync::PoisonError;
use std::sync::RwLock;
use std::time::Duration;

use http::HeaderName;
use http::HeaderValue;
use prometheus_client::metrics::gauge::Gauge;

use self::config::Classification;
use self::config::Config;
use self::limits::Bounds;
use self::metrics::FlowControlMetrics;
use self::metrics::FlowLabels;
use self::metrics::LevelLabels;
use self::metrics::RejectedLabels;
use self::metrics::WaitLabels;
use self::queueset::QueueSet;
use self::queueset::RequestDigest;
use self::queueset::Seats;
use self::retry::RetryAfter;
use self::width::ObjectCounts;
use crate::auth::UserInfo;
use crate::config::Clock;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::metrics::Metrics;
use crate::registry::Registry;
use crate::request::QueryParams;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::storage::Storage;

pub use self::objects::autoupdate_annotation;

/// Flow control's settings (`--enable-priority-and-fairness`, `--max-requests-inflight`,
/// `--max-mutating-requests-inflight`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowControlSettings {
    /// Whether requests are classified and limited at all.
    pub enabled: bool,
    /// The server's seats for reads (Kubernetes' default 400).
    pub max_requests_inflight: usize,
    /// The server's seats for writes (Kubernetes' default 200); flow control adds both.
    pub max_mutating_requests_inflight: usize,
    /// How long a request may wait in a queue (Kubernetes: a quarter of the 60 s request
    /// timeout).
    pub queue_wait: Duration,
}

impl Default for FlowControlSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            queue_wait: Duration::from_secs(15),
        }
    }
}

impl FlowControlSettings {
    fn server_limit(&self) -> usize {
        self.max_requests_inflight + self.max_mutating_requests_inflight
    }
}

/// The levels in force.
struct Levels {
    config: Config,
    sets: BTreeMap<String, Arc<QueueSet>>,
    bounds: BTreeMap<String, Bounds>,
}

/// The filter: configuration, levels, and what it needs to read the configuration.
pub struct FlowControl {
    flavor: Flavor,
    settings: FlowControlSettings,
    storage: Arc<dyn Storage>,
    registry: Arc<Registry>,
    clock: Arc<dyn Clock>,
    mandatory: Config,
    levels: RwLock<Arc<Levels>>,
    counts: ObjectCounts,
    retry_after: RetryAfter,
    metrics: FlowControlMetrics,
    watching: Once,
}

impl FlowControl {
    /// Flow control over the objects in `storage` (served by `registry`), recording its
    /// `apiserver_flowcontrol_*` metrics into `metrics`, starting with the mandatory objects
    /// until the stored ones are read.
    pub fn new(
        flavor: Flavor,
        settings: FlowControlSettings,
        metrics: &Metrics,
        storage: Arc<dyn Storage>,
        registry: Arc<Registry>,
        clock: Arc<dyn Clock>,
    ) -> Arc<Self> {
        let mandatory = objects::mandatory_config(flavor);
        let own_metrics = FlowControlMetrics::default();
        own_metrics.register(metrics);
        let control = Arc::new(Self {
            flavor,
            settings,
            storage,
            registry,
            clock,
            levels: RwLock::new(Arc::new(Levels {
                config: Config::default(),
                sets: BTreeMap::new(),
                bounds: BTreeMap::new(),
            })),
            mandatory: mandatory.clone(),
            counts: ObjectCounts::default(),
            retry_after: RetryAfter::default(),
            metrics: own_metrics,
            watching: Once::new(),
        });
        control.apply(mandatory);
        control
    }

    fn current(&self) -> Arc<Levels> {
        self.levels
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The key prefixes of FlowSchemas and PriorityLevelConfigurations.
    fn prefixes(&self) -> (String, String) {
        let group = format!("flowcontrol.apiserver.{}", self.flavor.group_domain());
        let prefix = |plural| {
            self.registry
                .builtin_store(&group, "v1", plural)
                .map(|s| s.resource().key_prefix())
                .unwrap_or_default()
        };
        (prefix("flowschemas"), prefix("prioritylevelconfigurations"))
    }

    /// Installs the configuration of these stored objects.
    fn install(&self, schemas: &[serde_json::Value], levels: &[serde_json::Value]) {
        self.apply(Config::new(schemas, levels, &self.mandatory));
    }

    fn apply(&self, config: Config) {
        let old = self.current();
        let server_limit = self.settings.server_limit();
        let levels: Vec<_> = config.levels.values().collect();
        let bounds = limits::bounds(server_limit, &levels);
        let mut sets = BTreeMap::new();
        let mut all_bounds = BTreeMap::new();
        for (level, bounds) in levels.iter().zip(bounds) {
            let set = match old.sets.get(&level.name) {
                Some(set) if set.queues_like(level.queuing) && set.exempt() == level.exempt => {
                    set.set_limit(bounds.nominal);
                    set.clone()
                }
                _ => QueueSet::new(bounds.nominal, level.queuing, level.exempt),
            };
            let labels = LevelLabels {
                priority_level: level.name.clone(),
            };
            self.metrics
                .nominal_limit
                .get_or_create(&labels)
                .set(bounds.nominal as i64);
            self.metrics
                .current_limit
                .get_or_create(&labels)
                .set(bounds.nominal as i64);
            sets.insert(level.name.clone(), set);
            all_bounds.insert(level.name.clone(), bounds);
        }
        let mut current = self.levels.write().unwrap_or_else(PoisonError::into_inner);
        *current = Arc::new(Levels {
            config,
            sets,
            bounds: all_bounds,
        });
    }

    /// Reassigns the seats limited levels lend and borrow from their recent demand.
    fn rebalance(&self) {
        let levels = self.current();
        let limited: Vec<_> = levels
            .config
            .levels
            .values()
            .filter(|l| !l.exempt)
            .filter_map(|l| Some((l, levels.sets.get(&l.name)?, *levels.bounds.get(&l.name)?)))
            .collect();
        let bounds: Vec<Bounds> = limited.iter().map(|(_, _, b)| *b).collect();
        let demand: Vec<usize> = limited
            .iter()
            .map(|(_, s, _)| s.take_peak_demand())
            .collect();
        let capacity = bounds.iter().map(|b| b.nominal).sum();
        let seats = limits::rebalance(&bounds, &demand, capacity);
        for ((level, set, _), seats) in limited.iter().zip(seats) {
            set.set_limit(seats);
            let labels = LevelLabels {
                priority_level: level.name.clone(),
            };
            self.metrics
                .current_limit
                .get_or_create(&labels)
                .set(seats as i64);
        }
    }

    /// Starts following the stored configuration (once; on the first request, so inside
    /// the server's runtime).
    fn watch(self: &Arc<Self>) {
        self.watching.call_once(|| {
            let weak = Arc::downgrade(self);
            tokio::spawn(watcher::run(weak, self.storage.clone()));
        });
    }

    /// Classifies the request and waits for its seats. Runs `serve` with them held (for a
    /// watch, only until its response starts), and names the schema and level in the
    /// response; a request that gets no seat answers 429.
    pub async fn serve<F>(
        self: &Arc<Self>,
        user: &UserInfo,
        info: &RequestInfo,
        query: &QueryParams,
        serve: F,
    ) -> axum::response::Response
    where
        F: Future<Output = axum::response::Response>,
    {
        use axum::response::IntoResponse;
        if !self.settings.enabled || long_running(info) {
            return serve.await;
        }
        self.watch();
        let levels = self.current();
        let Some(classification) = levels.config.classify(user, info) else {
            return serve.await;
        };
        let mut response = match self.acquire(&levels, &classification, info, query).await {
            Ok(seats) => {
                let response = serve.await;
                drop(seats);
                response
            }
            Err(error) => error.into_response(),
        };
        self.name_in_response(&classification, &mut response);
        response
    }

    async fn acquire(
        &self,
        levels: &Levels,
        classification: &Classification,
        info: &RequestInfo,
        query: &QueryParams,
    ) -> Result<Option<(Seats, Executing)>, ApiError> {
        let Some(set) = levels.sets.get(&classification.level) else {
            return Ok(None);
        };
        let labels = FlowLabels {
            flow_schema: classification.schema.clone(),
            priority_level: classification.level.clone(),
        };
        let prefix = info.is_resource_request.then(|| {
            let store = self
                .registry
                .lookup(&info.api_group, &info.api_version, &info.resource);
            store.map(|s| s.resource().collection_key(None))
        });
        let width = self
            .counts
            .seats(info, query, prefix.flatten(), &self.storage);
        let request = RequestDigest {
            schema: classification.schema.clone(),
            flow: classification.flow.clone(),
            width,
            arrived: self.clock.now(),
            started: None,
        };
        let hash = shuffle::flow_hash(&classification.schema, &classification.flow);
        let clock = self.clock.clone();
        let in_queue = self.metrics.in_queue.get_or_create(&labels).clone();
        in_queue.inc();
        let started = tokio::time::Instant::now();
        let acquired = set
            .acquire(request, hash, self.settings.queue_wait, move || clock.now())
            .await;
        in_queue.dec();
        let wait_labels = |execute: bool| WaitLabels {
            execute: execute.to_string(),
            flow_schema: labels.flow_schema.clone(),
            priority_level: labels.priority_level.clone(),
        };
        match acquired {
            Ok((seats, waited)) => {
                let wait = self.metrics.wait.get_or_create(&wait_labels(true));
                wait.observe(waited.as_secs_f64());
                self.metrics.dispatched.get_or_create(&labels).inc();
                let executing = self.metrics.executing.get_or_create(&labels).clone();
                let executing_seats = self.metrics.executing_seats.get_or_create(&labels).clone();
                let executing = Executing::start(executing, executing_seats, width);
                Ok(Some((seats, executing)))
            }
            Err(rejection) => {
                let wait = self.metrics.wait.get_or_create(&wait_labels(false));
                wait.observe(started.elapsed().as_secs_f64());
                let rejected = RejectedLabels {
                    flow_schema: labels.flow_schema.clone(),
                    priority_level: labels.priority_level.clone(),
                    reason: rejection.reason().to_owned(),
                };
                self.metrics.rejected.get_or_create(&rejected).inc();
                Err(ApiError::Throttled {
                    retry_after: self.retry_after.rejected(&classification.level),
                })
            }
        }
    }

    /// Sets the `X-<product>-PF-FlowSchema-UID` and `-PriorityLevel-UID` headers; not while
    /// the request was classified by the built-in mandatory objects, which have no uid until
    /// the stored ones are read.
    fn name_in_response(&self, c: &Classification, response: &mut axum::response::Response) {
        let product = self.flavor.header_product();
        let headers = response.headers_mut();
        for (suffix, uid) in [
            ("PF-FlowSchema-UID", &c.schema_uid),
            ("PF-PriorityLevel-UID", &c.level_uid),
        ] {
            if uid.is_empty() {
                continue;
            }
            let name = HeaderName::try_from(format!("X-{product}-{suffix}"));
            if let (Ok(name), Ok(value)) = (name, HeaderValue::from_str(uid)) {
                headers.insert(name, value);
            }
        }
    }

    /// The `/debug/api_priority_and_fairness/` dump at `path`, or `None` when `path` is no
    /// dump.
    pub fn dump(&self, path: &str) -> Option<String> {
        dump::dump(path, &self.current().sets)
    }
}

/// The gauges of an executing request, decremented when its seats are freed.
struct Executing {
    requests: Gauge,
    seats: Gauge,
    width: i64,
}

impl Executing {
    fn start(requests: Gauge, seats: Gauge, width: usize) -> Self {
        let width = width as i64;
        requests.inc();
        seats.inc_by(width);
        Self {
            requests,
            seats,
            width,
        }
    }
}

impl Drop for Executing {
    fn drop(&mut self) {
        self.requests.dec();
        self.seats.dec_by(self.width);
    }
}

/// Requests Kubernetes does not hold in a seat at all: connections that stay open
/// (`exec`, `attach`, `portforward`, proxying). Watches are held only until they start.
fn long_running(info: &RequestInfo) -> bool {
    info.verb == Verb::Proxy
        || ["exec", "attach", "portforward", "proxy"].contains(&info.subresource.as_str())
}

//! The API server's metrics and `/metrics` (issue 13 item 2): one registry per API, with
//! kube-apiserver's names, labels, help texts and buckets, stability levels and deprecation
//! marks as component-base writes them ([`Descriptor`]), hidden metrics left out unless
//! `--show-hidden-metrics-for-version` asks for them ([`Exposure`]).
//!
//! - [`Metrics`]: the handle everything records through; other modules (flow control, the
//!   store's metrics the node adds) register their own families with [`Metrics::register`]
//!   and refresh gauges read from elsewhere with [`Metrics::on_scrape`].
//! - `request`: the request metrics, recorded around the whole request pipeline.
//! - `exposition`: the 0.0.4 text format kube-apiserver serves.
//! - [`MonitoringAuthorizer`]: `system:monitoring` may read `/metrics` and health (R-ACC-191).

mod descriptor;
mod exposition;
mod monitoring;
mod request;

use std::fmt;
use std::sync::Arc;
use std::sync::Mutex;

use axum::response::IntoResponse;
use axum::response::Response;
use http::HeaderValue;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode_registry;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Metric;
use prometheus_client::registry::Registry;

pub use self::descriptor::Descriptor;
pub use self::descriptor::Exposure;
pub use self::descriptor::ShowHiddenVersionError;
pub use self::descriptor::Stability;
pub use self::exposition::CONTENT_TYPE;
pub use self::monitoring::MonitoringAuthorizer;
pub use self::monitoring::SYSTEM_MONITORING;
use self::request::RequestMetrics;
pub(crate) use self::request::RequestRecord;
use crate::deprecation::DeprecatedApi;

const REQUEST_TOTAL: Descriptor = Descriptor {
    name: "apiserver_request",
    help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
    stability: Stability::Stable,
    deprecated_since: None,
};
const REQUEST_DURATION: Descriptor = Descriptor {
    name: "apiserver_request_duration_seconds",
    help: "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
    stability: Stability::Stable,
    deprecated_since: None,
};
const CURRENT_INFLIGHT: Descriptor = Descriptor {
    name: "apiserver_current_inflight_requests",
    help: "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
    stability: Stability::Stable,
    deprecated_since: None,
};
const LONGRUNNING: Descriptor = Descriptor {
    name: "apiserver_longrunning_requests",
    help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
    stability: Stability::Stable,
    deprecated_since: None,
};
const REQUESTED_DEPRECATED_APIS: Descriptor = Descriptor {
    name: "apiserver_requested_deprecated_apis",
    help: "Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.",
    stability: Stability::Stable,
    deprecated_since: None,
};
const WATCH_EVENTS: Descriptor = Descriptor {
    name: "apiserver_watch_events",
    help: "Number of events sent in watch clients",
    stability: Stability::Alpha,
    deprecated_since: None,
};
const RESOURCE_OBJECTS: Descriptor = Descriptor {
    name: "apiserver_resource_objects",
    help: "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
    stability: Stability::Alpha,
    deprecated_since: None,
};
const STORAGE_OBJECTS: Descriptor = Descriptor {
    name: "apiserver_storage_objects",
    help: "[DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
    stability: Stability::Stable,
    deprecated_since: Some("1.34.0"),
};

/// The labels of `apiserver_requested_deprecated_apis`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeprecatedApiLabels {
    group: String,
    version: String,
    resource: String,
    subresource: String,
    /// The release that removes the version (`1.40`), or empty when none is planned.
    removed_release: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GroupVersionResource {
    group: String,
    version: String,
    resource: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GroupResourceLabels {
    group: String,
    resource: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabel {
    resource: String,
}

/// Refreshes gauges from their source just before a scrape is encoded.
type ScrapeHook = Box<dyn Fn() + Send + Sync>;

/// The metrics of one API server: a cheap handle, shared by every request.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    exposure: Exposure,
    registry: Mutex<Registry>,
    hooks: Mutex<Vec<ScrapeHook>>,
    requests: RequestMetrics,
    deprecated_apis: Family<DeprecatedApiLabels, Gauge>,
    watch_events: Family<GroupVersionResource, Counter>,
    resource_objects: Family<GroupResourceLabels, Gauge>,
    storage_objects: Family<ResourceLabel, Gauge>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics")
            .field("exposure", &self.inner.exposure)
            .finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new(Exposure::default())
    }
}

impl Metrics {
    /// A registry with the API server's own metrics, exposing what `exposure` shows.
    pub fn new(exposure: Exposure) -> Self {
        let metrics = Self {
            inner: Arc::new(Inner {
                exposure,
                registry: Mutex::new(Registry::default()),
                hooks: Mutex::new(Vec::new()),
                requests: RequestMetrics::new(),
                deprecated_apis: Family::default(),
                watch_events: Family::default(),
                resource_objects: Family::default(),
                storage_objects: Family::default(),
            }),
        };
        let inner = &metrics.inner;
        metrics.register(&REQUEST_TOTAL, inner.requests.total.clone());
        metrics.register(&REQUEST_DURATION, inner.requests.duration.clone());
        metrics.register(&CURRENT_INFLIGHT, inner.requests.inflight.clone());
        metrics.register(&LONGRUNNING, inner.requests.longrunning.clone());
        metrics.register(&REQUESTED_DEPRECATED_APIS, inner.deprecated_apis.clone());
        metrics.register(&WATCH_EVENTS, inner.watch_events.clone());
        metrics.register(&RESOURCE_OBJECTS, inner.resource_objects.clone());
        metrics.register(&STORAGE_OBJECTS, inner.storage_objects.clone());
        metrics
    }

    /// Registers `metric` as `descriptor` describes it; a hidden one is left out of scrapes
    /// (it may still be recorded into). A counter's name is given without `_total`.
    pub fn register(&self, descriptor: &Descriptor, metric: impl Metric) {
        if descriptor.is_hidden(self.inner.exposure) {
            return;
        }
        lock(&self.inner.registry).register_collector(Box::new(Described {
            name: descriptor.name,
            help: descriptor.exposed_help(),
            metric,
        }));
    }

    /// Runs `hook` before every scrape (to set gauges read from another component's state).
    pub fn on_scrape(&self, hook: impl Fn() + Send + Sync + 'static) {
        lock(&self.inner.hooks).push(Box::new(hook));
    }

    /// Which metrics are exposed.
    pub fn exposure(&self) -> Exposure {
        self.inner.exposure
    }

    /// Sets `apiserver_requested_deprecated_apis` for `api` (it stays 1: requested since
    /// this server started).
    pub fn deprecated_api_requested(&self, api: &DeprecatedApi) {
        let labels = DeprecatedApiLabels {
            group: api.group.clone(),
            version: api.version.clone(),
            resource: api.resource.clone(),
            subresource: api.subresource.clone(),
            removed_release: api.removed_release_label(),
        };
        self.inner.deprecated_apis.get_or_create(&labels).set(1);
    }

    /// The count of events sent to watches of `group`/`version`/`resource`, to keep and add
    /// to while a watch streams.
    fn watch_events(&self, group: &str, version: &str, resource: &str) -> Counter {
        self.inner
            .watch_events
            .get_or_create(&GroupVersionResource {
                group: group.to_owned(),
                version: version.to_owned(),
                resource: resource.to_owned(),
            })
            .clone()
    }

    /// Sets the stored object count of `group`/`resource` (`apiserver_resource_objects`, and
    /// the deprecated `apiserver_storage_objects` labelled `<resource>.<group>`).
    pub fn set_object_count(&self, group: &str, resource: &str, count: i64) {
        self.inner
            .resource_objects
            .get_or_create(&GroupResourceLabels {
                group: group.to_owned(),
                resource: resource.to_owned(),
            })
            .set(count);
        let qualified = if group.is_empty() {
            resource.to_owned()
        } else {
            format!("{resource}.{group}")
        };
        self.inner
            .storage_objects
            .get_or_create(&ResourceLabel {
                resource: qualified,
            })
            .set(count);
    }

    /// The scrape: every shown metric in the 0.0.4 text format.
    pub fn render(&self) -> String {
        self.inner.requests.publish_inflight();
        for hook in lock(&self.inner.hooks).iter() {
            hook();
        }
        let mut openmetrics = String::new();
        // Writing into a String cannot fail.
        let _ = encode_registry(&mut openmetrics, &lock(&self.inner.registry));
        exposition::text_format(&openmetrics)
    }

    /// The `/metrics` response.
    pub(crate) fn response(&self) -> Response {
        let mut response = self.render().into_response();
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(CONTENT_TYPE),
        );
        response
    }
}

/// A metric with its exposed help text, written as it is (`Registry::register` would append a
/// period to help texts that kube-apiserver writes without one).
#[derive(Debug)]
struct Described<M> {
    name: &'static str,
    help: String,
    metric: M,
}

impl<M: Metric> Collector for Described<M> {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        if self.metric.is_empty() {
            return Ok(());
        }
        let metric =
            encoder.encode_descriptor(self.name, &self.help, None, self.metric.metric_type())?;
        self.metric.encode(metric)
    }
}

/// Locks `mutex`, also after a panic elsewhere (the registry stays consistent: registering
/// and encoding do not leave it half-changed).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

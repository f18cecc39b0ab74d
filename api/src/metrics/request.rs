//! The request metrics kube-apiserver reports, with its names, labels and buckets: every
//! resource request counted and timed when it ends (`apiserver_request_total`,
//! `apiserver_request_duration_seconds`), the requests executing now by kind
//! (`apiserver_current_inflight_requests`), and the long-running ones (watches, proxies)
//! open now (`apiserver_longrunning_requests`). Recording adds one map lookup under a read
//! lock per family; nothing scans or waits.

use std::sync::atomic::AtomicI64;
use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::body::Body;
use axum::response::Response;
use futures::StreamExt;
use http::HeaderMap;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

use super::Metrics;
use crate::request::QueryParams;
use crate::request::RequestInfo;
use crate::request::Verb;

/// The `component` label of every request metric.
const COMPONENT: &str = "apiserver";

/// `apiserver_request_duration_seconds`' buckets, kube-apiserver's.
const DURATION_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// The labels of one request: what it addressed and how.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    verb: &'static str,
    dry_run: &'static str,
    group: String,
    version: String,
    resource: String,
    subresource: String,
    scope: &'static str,
    component: &'static str,
}

/// [`RequestLabels`] and the response code.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct CodeLabels {
    #[prometheus(flatten)]
    request: RequestLabels,
    code: u16,
}

/// A long-running request's labels (no dry run: watches and proxies do not write).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct LongRunningLabels {
    verb: &'static str,
    group: String,
    version: String,
    resource: String,
    subresource: String,
    scope: &'static str,
    component: &'static str,
}

/// `readOnly` or `mutating`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct KindLabels {
    request_kind: &'static str,
}

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

/// The request metric families.
#[derive(Debug)]
pub(crate) struct RequestMetrics {
    pub(crate) total: Family<CodeLabels, Counter>,
    pub(crate) duration: Family<RequestLabels, Histogram, fn() -> Histogram>,
    pub(crate) longrunning: Family<LongRunningLabels, Gauge>,
    pub(crate) inflight: Family<KindLabels, Gauge>,
    /// Executing now and the most at once since the last scrape, per kind.
    read_only: Inflight,
    mutating: Inflight,
}

/// Requests of one kind executing now, and the high-water mark since it was last read.
#[derive(Debug, Default)]
struct Inflight {
    now: AtomicI64,
    peak: AtomicI64,
}

impl Inflight {
    fn enter(&self) {
        let now = self.now.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::Relaxed);
    }

    /// The most executing at once since the previous call (kube-apiserver reports the
    /// maximum over its sampling window, not the instant value).
    fn take_peak(&self) -> i64 {
        let now = self.now.load(Ordering::Relaxed);
        self.peak.swap(now, Ordering::Relaxed).max(now)
    }
}

impl RequestMetrics {
    pub(crate) fn new() -> Self {
        Self {
            total: Family::default(),
            duration: Family::new_with_constructor(duration_histogram),
            longrunning: Family::default(),
            inflight: Family::default(),
            read_only: Inflight::default(),
            mutating: Inflight::default(),
        }
    }

    /// Sets `apiserver_current_inflight_requests` from the high-water marks (at scrape).
    pub(crate) fn publish_inflight(&self) {
        for (kind, inflight) in [("readOnly", &self.read_only), ("mutating", &self.mutating)] {
            self.inflight
                .get_or_create(&KindLabels { request_kind: kind })
                .set(inflight.take_peak());
        }
    }
}

/// One request being measured, from [`RequestRecord::start`] until it is dropped: right after
/// [`RequestRecord::finish`], or for a long-running request when its response body ends (sent
/// or abandoned). A request whose handler never finished (the client went away) leaves the
/// gauges without being counted: it has no response code.
pub(crate) struct RequestRecord {
    metrics: Metrics,
    labels: RequestLabels,
    started: Instant,
    kind: Kind,
    code: Option<u16>,
}

/// How the request counts while it runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Not a resource request: not measured.
    Unmeasured,
    ReadOnly,
    Mutating,
    LongRunning,
}

impl RequestRecord {
    /// Starts measuring a request (only resource requests are measured).
    pub(crate) fn start(
        metrics: &Metrics,
        info: &RequestInfo,
        query: &QueryParams,
        headers: &HeaderMap,
    ) -> Self {
        let labels = request_labels(info, query, headers);
        let requests = &metrics.inner.requests;
        let kind = if !info.is_resource_request {
            Kind::Unmeasured
        } else if is_long_running(info) {
            requests
                .longrunning
                .get_or_create(&long_running_labels(&labels))
                .inc();
            Kind::LongRunning
        } else if matches!(info.verb, Verb::Get | Verb::List) {
            requests.read_only.enter();
            Kind::ReadOnly
        } else {
            requests.mutating.enter();
            Kind::Mutating
        };
        Self {
            metrics: metrics.clone(),
            labels,
            started: Instant::now(),
            kind,
            code: None,
        }
    }

    /// Takes `response`'s code; a long-running request is recorded when its body ends, so
    /// its body carries the record until then.
    pub(crate) fn finish(mut self, response: Response) -> Response {
        self.code = Some(response.status().as_u16());
        if self.kind != Kind::LongRunning {
            return response;
        }
        // A watch's body is newline-delimited JSON events (crate::watch), so the events it
        // sends are the newlines in its chunks.
        let events = (self.labels.verb == "WATCH" && response.status().is_success()).then(|| {
            self.metrics.watch_events(
                &self.labels.group,
                &self.labels.version,
                &self.labels.resource,
            )
        });
        let (parts, body) = response.into_parts();
        let body = body.into_data_stream().map(move |chunk| {
            let _ = &self;
            if let (Some(events), Ok(bytes)) = (&events, &chunk) {
                let sent = memchr::memchr_iter(b'\n', bytes).count();
                events.inc_by(u64::try_from(sent).unwrap_or(u64::MAX));
            }
            chunk
        });
        Response::from_parts(parts, Body::from_stream(body))
    }
}

impl Drop for RequestRecord {
    fn drop(&mut self) {
        let requests = &self.metrics.inner.requests;
        match self.kind {
            Kind::ReadOnly => requests.read_only.leave(),
            Kind::Mutating => requests.mutating.leave(),
            Kind::LongRunning => {
                requests
                    .longrunning
                    .get_or_create(&long_running_labels(&self.labels))
                    .dec();
            }
            Kind::Unmeasured => return,
        }
        let Some(code) = self.code else {
            return;
        };
        requests
            .duration
            .get_or_create(&self.labels)
            .observe(self.started.elapsed().as_secs_f64());
        requests
            .total
            .get_or_create(&CodeLabels {
                request: self.labels.clone(),
                code,
            })
            .inc();
    }
}

/// Long-running as kube-apiserver's default check has it: watches and proxies, and the
/// streaming subresources.
fn is_long_running(info: &RequestInfo) -> bool {
    matches!(info.verb, Verb::Watch | Verb::Proxy)
        || matches!(
            info.subresource.as_str(),
            "attach" | "exec" | "proxy" | "log" | "portforward"
        )
}

fn request_labels(info: &RequestInfo, query: &QueryParams, headers: &HeaderMap) -> RequestLabels {
    RequestLabels {
        verb: reported_verb(info, headers),
        dry_run: dry_run(query),
        group: info.api_group.clone(),
        version: info.api_version.clone(),
        resource: info.resource.clone(),
        subresource: info.subresource.clone(),
        scope: scope(info),
        component: COMPONENT,
    }
}

fn long_running_labels(labels: &RequestLabels) -> LongRunningLabels {
    LongRunningLabels {
        verb: labels.verb,
        group: labels.group.clone(),
        version: labels.version.clone(),
        resource: labels.resource.clone(),
        subresource: labels.subresource.clone(),
        scope: labels.scope,
        component: labels.component,
    }
}

/// The verb as kube-apiserver's instrumented routes report it: the route's action (`GET` on
/// an item, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `DELETE`, `DELETECOLLECTION`), `APPLY`
/// for a server-side apply patch.
fn reported_verb(info: &RequestInfo, headers: &HeaderMap) -> &'static str {
    match &info.verb {
        Verb::Get => "GET",
        Verb::List => "LIST",
        Verb::Watch => "WATCH",
        Verb::Create => "POST",
        Verb::Update => "PUT",
        Verb::Patch if is_apply(headers) => "APPLY",
        Verb::Patch => "PATCH",
        Verb::Delete => "DELETE",
        Verb::DeleteCollection => "DELETECOLLECTION",
        Verb::Proxy => "PROXY",
        Verb::Other(_) => "",
    }
}

fn is_apply(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| {
            let media = media.trim();
            media.eq_ignore_ascii_case("application/apply-patch+yaml")
                || media.eq_ignore_ascii_case("application/apply-patch+cbor")
        })
}

/// `dryRun` as kube-apiserver labels it: empty without, `All` with `dryRun=All`, `invalid`
/// for a value the API refuses.
fn dry_run(query: &QueryParams) -> &'static str {
    let mut values = query.get_all("dryRun").peekable();
    if values.peek().is_none() {
        ""
    } else if values.all(|v| v == "All") {
        "All"
    } else {
        "invalid"
    }
}

/// The scope of the route that serves the request, as kube-apiserver's installer sets it:
/// `resource` for an item or a create, `namespace` for a collection in a namespace,
/// `cluster` otherwise.
fn scope(info: &RequestInfo) -> &'static str {
    if !info.name.is_empty() || info.verb == Verb::Create {
        "resource"
    } else if !info.namespace.is_empty() {
        "namespace"
    } else {
        "cluster"
    }
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::*;

    fn labels(method: Method, path_and_query: &str, headers: &HeaderMap) -> RequestLabels {
        let (path, query) = path_and_query
            .split_once('?')
            .map_or((path_and_query, None), |(p, q)| (p, Some(q)));
        let query = QueryParams::parse(query);
        let info = RequestInfo::parse(&method, path, &query);
        request_labels(&info, &query, headers)
    }

    #[test]
    fn verbs_and_scopes_are_reported_as_kube_apiserver_reports_them() {
        let none = HeaderMap::new();
        let cases = [
            (
                Method::GET,
                "/api/v1/namespaces/a/pods",
                "LIST",
                "namespace",
            ),
            (Method::GET, "/api/v1/pods", "LIST", "cluster"),
            (
                Method::GET,
                "/api/v1/namespaces/a/pods/p",
                "GET",
                "resource",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/a/pods?watch=1",
                "WATCH",
                "namespace",
            ),
            (
                Method::POST,
                "/api/v1/namespaces/a/pods",
                "POST",
                "resource",
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/a/pods/p",
                "PUT",
                "resource",
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/a/pods",
                "DELETECOLLECTION",
                "namespace",
            ),
            (Method::DELETE, "/api/v1/nodes/n", "DELETE", "resource"),
        ];
        for (method, path, verb, scope) in cases {
            let l = labels(method, path, &none);
            assert_eq!((l.verb, l.scope), (verb, scope), "{path}");
        }
        let mut apply = HeaderMap::new();
        apply.insert(
            http::header::CONTENT_TYPE,
            "application/apply-patch+yaml".parse().unwrap(),
        );
        let l = labels(
            Method::PATCH,
            "/apis/apps/v1/namespaces/a/deployments/d",
            &apply,
        );
        assert_eq!(
            (l.verb, l.group.as_str(), l.version.as_str()),
            ("APPLY", "apps", "v1")
        );
        let l = labels(Method::PATCH, "/api/v1/namespaces/a/pods/p/status", &none);
        assert_eq!((l.verb, l.subresource.as_str()), ("PATCH", "status"));
    }

    #[test]
    fn dry_run_is_all_empty_or_invalid() {
        let none = HeaderMap::new();
        let dry = |q: &str| {
            labels(
                Method::POST,
                &format!("/api/v1/namespaces/a/pods{q}"),
                &none,
            )
            .dry_run
        };
        assert_eq!(dry(""), "");
        assert_eq!(dry("?dryRun=All"), "All");
        assert_eq!(dry("?dryRun=All&dryRun=All"), "All");
        assert_eq!(dry("?dryRun=Some"), "invalid");
    }

    #[test]
    fn inflight_reports_the_peak_since_the_last_reading() {
        let inflight = Inflight::default();
        inflight.enter();
        inflight.enter();
        inflight.leave();
        assert_eq!(inflight.take_peak(), 2);
        assert_eq!(inflight.take_peak(), 1);
        inflight.leave();
        assert_eq!(
            inflight.take_peak(),
            1,
            "the peak covers the previous reading's value"
        );
        assert_eq!(inflight.take_peak(), 0);
    }
}

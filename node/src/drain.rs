//! Graceful shutdown of the API as kube-apiserver sequences it: on the shutdown signal `/readyz`
//! fails at once (the `shutdown` check), the API keeps serving for `--shutdown-delay-duration`
//! so load balancers take the replica out, answering with `Connection: close` so that clients
//! stop reusing their connections to it (a request sent on a kept-alive connection just as the
//! server closes it would fail mid-send; a new connection is refused cleanly), then it drains.
//! With `--shutdown-send-retry-after`
//! the listener stays open while the requests in flight finish and every new request is
//! refused with 429, `Retry-After` and `Connection: close` ([`DrainGate`]); health probes are
//! still answered. Open watches then end with a clean end of stream after their last whole
//! event (clients resume elsewhere from the last resource version they saw), given up to
//! `--shutdown-watch-termination-grace-period` to finish sending.
//!
//! At start-up the same gate holds requests other than health probes (503 with `Retry-After`)
//! until it is opened: the replica admits requests only once its cluster-wide feature gates
//! agree with the cluster's ([`crate::cluster_gates`]).

use std::sync::Arc;
use std::time::Duration;

use apiary_api::error::ApiError;
use apiary_api::request::QueryParams;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::extract::State;
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::response::Response;
use futures::StreamExt;
use http::HeaderValue;
use http::header;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Paths served while draining (kube-apiserver exempts the same): probes and scrapes.
const EXEMPT_PREFIXES: [&str; 4] = ["/readyz", "/livez", "/healthz", "/metrics"];

/// The shutdown flags of `apiary serve`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShutdownSettings {
    /// How long the API keeps serving after `/readyz` started failing
    /// (`--shutdown-delay-duration`).
    pub delay: Duration,
    /// Whether to keep listening while requests drain, refusing new ones with 429
    /// (`--shutdown-send-retry-after`).
    pub send_retry_after: bool,
    /// How long closed watches get to finish sending (`--shutdown-watch-termination-grace-period`).
    pub watch_termination_grace: Duration,
}

/// Counts the API's requests in flight (watches excepted: they run until closed) and, once
/// draining with `send_retry_after`, refuses new requests. Clones share the state.
#[derive(Debug, Clone)]
pub struct DrainGate {
    opened: CancellationToken,
    closing: CancellationToken,
    draining: CancellationToken,
    refuse: bool,
    in_flight: Arc<watch::Sender<usize>>,
    close_watches: CancellationToken,
    watches: Arc<watch::Sender<usize>>,
}

impl DrainGate {
    /// A gate that, once [`DrainGate::start_draining`] was called, refuses new requests when
    /// `refuse` (`--shutdown-send-retry-after`) and lets them through otherwise.
    pub fn new(refuse: bool) -> Self {
        let gate = Self::held(refuse);
        gate.open();
        gate
    }

    /// A gate like [`DrainGate::new`]'s that answers every request but health probes with 503
    /// until [`DrainGate::open`] is called.
    pub fn held(refuse: bool) -> Self {
        Self {
            opened: CancellationToken::new(),
            closing: CancellationToken::new(),
            draining: CancellationToken::new(),
            refuse,
            in_flight: Arc::new(watch::Sender::new(0)),
            close_watches: CancellationToken::new(),
            watches: Arc::new(watch::Sender::new(0)),
        }
    }

    /// `app` behind this gate.
    pub fn wrap(&self, app: Router) -> Router {
        app.layer(axum::middleware::from_fn_with_state(self.clone(), gate))
    }

    /// From now on requests are admitted (until draining).
    pub fn open(&self) {
        self.opened.cancel();
    }

    /// From now on every response asks its client to close the connection (`Connection:
    /// close`), so no connection is reused when the listener closes.
    pub fn stop_keep_alive(&self) {
        self.closing.cancel();
    }

    /// From now on new requests are refused (if the gate refuses at all).
    pub fn start_draining(&self) {
        self.draining.cancel();
    }

    /// Resolves once no counted request is in flight.
    pub async fn drained(&self) {
        zero(&self.in_flight).await;
    }

    /// Ends every open watch after its current event, and every watch opened from now on at
    /// once.
    pub fn close_watches(&self) {
        self.close_watches.cancel();
    }

    /// Resolves once no watch response is being sent.
    pub async fn watches_closed(&self) {
        zero(&self.watches).await;
    }
}

async fn zero(count: &watch::Sender<usize>) {
    let mut count = count.subscribe();
    // The sender outlives this borrow, so waiting cannot fail.
    let _ = count.wait_for(|n| *n == 0).await;
}

/// One counted request in flight; uncounted when dropped (also when the request is cancelled).
struct InFlight(Arc<watch::Sender<usize>>);

impl InFlight {
    fn enter(count: &Arc<watch::Sender<usize>>) -> Self {
        count.send_modify(|n| *n += 1);
        Self(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// Whether `request` is a watch (a long-running request, not waited for): a `watch` flag read
/// as the API reads it, or a path under `/watch/`.
fn is_watch(request: &Request) -> bool {
    let uri = request.uri();
    uri.path().contains("/watch/")
        || uri
            .query()
            .is_some_and(|query| QueryParams::parse(Some(query)).flag("watch"))
}

async fn gate(State(gate): State<DrainGate>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if EXEMPT_PREFIXES.iter().any(|p| path.starts_with(p)) {
        return next.run(request).await;
    }
    if !gate.opened.is_cancelled() {
        let starting = "the replica is starting: its feature gates are not yet checked against \
                        the cluster's";
        return ApiError::ServiceUnavailable(starting.to_owned()).into_response();
    }
    if gate.refuse && gate.draining.is_cancelled() {
        let mut response = ApiError::ShuttingDown.into_response();
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    if is_watch(&request) {
        let watch = InFlight::enter(&gate.watches);
        let (parts, body) = next.run(request).await.into_parts();
        // Each body frame holds whole events, so ending between frames is a clean end.
        let frames = body
            .into_data_stream()
            .take_until(gate.close_watches.clone().cancelled_owned())
            .inspect(move |_| {
                let _ = &watch;
            });
        return Response::from_parts(parts, Body::from_stream(frames));
    }
    let _in_flight = InFlight::enter(&gate.in_flight);
    let mut response = next.run(request).await;
    if gate.closing.is_cancelled() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

#[cfg(test)]
mod tests {
    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;

    async fn status_of(app: &Router, path: &str) -> Response {
        let request = Request::builder().uri(path).body(Body::empty()).unwrap();
        app.clone().oneshot(request).await.unwrap()
    }

    fn app(gate: &DrainGate) -> Router {
        gate.wrap(
            Router::new()
                .route("/readyz", get(|| async { "ok" }))
                .route("/api/v1/namespaces", get(|| async { "list" })),
        )
    }

    // R-VER-038: while draining with --shutdown-send-retry-after, a new request gets 429 with
    // Retry-After and Connection: close; health probes are still answered.
    #[tokio::test]
    async fn draining_refuses_new_requests_with_retry_after() {
        let gate = DrainGate::new(true);
        let app = app(&gate);
        assert_eq!(status_of(&app, "/api/v1/namespaces").await.status(), 200);
        gate.start_draining();
        let refused = status_of(&app, "/api/v1/namespaces?watch=true").await;
        assert_eq!(refused.status(), 429);
        assert_eq!(refused.headers()[header::RETRY_AFTER], "5");
        assert_eq!(refused.headers()[header::CONNECTION], "close");
        let body = axum::body::to_bytes(refused.into_body(), usize::MAX)
            .await
            .unwrap();
        let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(status["reason"], "TooManyRequests");
        assert_eq!(status["details"]["retryAfterSeconds"], 5);
        assert_eq!(status_of(&app, "/readyz").await.status(), 200);
        gate.drained().await;
    }

    // A held gate answers 503 with Retry-After to everything but health probes until opened.
    #[tokio::test]
    async fn a_held_gate_admits_only_probes_until_opened() {
        let gate = DrainGate::held(false);
        let app = app(&gate);
        let held = status_of(&app, "/api/v1/namespaces").await;
        assert_eq!(held.status(), 503);
        assert!(held.headers().contains_key(header::RETRY_AFTER));
        assert_eq!(status_of(&app, "/readyz").await.status(), 200);
        gate.open();
        assert_eq!(status_of(&app, "/api/v1/namespaces").await.status(), 200);
    }

    // Once shutting down, API responses ask their clients to close the connection, so none is
    // reused when the listener closes.
    #[tokio::test]
    async fn responses_close_connections_once_shutting_down() {
        let gate = DrainGate::new(false);
        let app = app(&gate);
        let before = status_of(&app, "/api/v1/namespaces").await;
        assert!(before.headers().get(header::CONNECTION).is_none());
        gate.stop_keep_alive();
        let after = status_of(&app, "/api/v1/namespaces").await;
        assert_eq!(after.status(), 200);
        assert_eq!(after.headers()[header::CONNECTION], "close");
    }

    // Without --shutdown-send-retry-after, draining refuses nothing (the listener closes).
    #[tokio::test]
    async fn draining_without_retry_after_serves() {
        let gate = DrainGate::new(false);
        let app = app(&gate);
        gate.start_draining();
        assert_eq!(status_of(&app, "/api/v1/namespaces").await.status(), 200);
    }

    // Closing the watches ends an open watch's body cleanly after the events already sent, and
    // the gate then sees no watch open.
    #[tokio::test]
    async fn closing_watches_ends_them_cleanly() {
        use http_body_util::BodyExt;

        let gate = DrainGate::new(false);
        let events = || async {
            let first = futures::stream::iter([Ok::<_, std::convert::Infallible>("event-1\n")]);
            Body::from_stream(first.chain(futures::stream::pending()))
        };
        let app = gate.wrap(Router::new().route("/api/v1/pods", get(events)));
        let mut body = status_of(&app, "/api/v1/pods?watch=true").await.into_body();
        let frame = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(frame, "event-1\n");
        assert_eq!(*gate.watches.borrow(), 1);
        gate.close_watches();
        assert!(body.frame().await.is_none(), "the body ends");
        drop(body);
        gate.watches_closed().await;
    }

    // The drain waits for the requests in flight.
    #[tokio::test]
    async fn drained_waits_for_requests_in_flight() {
        let gate = DrainGate::new(true);
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let released = Arc::new(tokio::sync::Mutex::new(Some(released)));
        let app = gate.wrap(Router::new().route(
            "/slow",
            get(move || async move {
                let waiter = released.lock().await.take();
                if let Some(waiter) = waiter {
                    let _ = waiter.await;
                }
                "done"
            }),
        ));
        let slow = tokio::spawn({
            let app = app.clone();
            async move { status_of(&app, "/slow").await.status() }
        });
        while *gate.in_flight.borrow() == 0 {
            tokio::task::yield_now().await;
        }
        gate.start_draining();
        let mut drained = std::pin::pin!(gate.drained());
        assert!(
            futures::poll!(drained.as_mut()).is_pending(),
            "a request is in flight"
        );
        release.send(()).unwrap();
        assert_eq!(slow.await.unwrap(), 200);
        drained.await;
    }
}

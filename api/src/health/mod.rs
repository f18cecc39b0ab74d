//! Health endpoints (spec 002 "Health", R-VER-036..047): `/livez`, `/readyz` and the
//! deprecated `/healthz`, each with `?verbose`, `?exclude=<check>` and `/<endpoint>/<check>`.
//! They need no credentials: load balancers and supervisors probe them.

use std::fmt::Write;
use std::sync::Arc;

use axum::Router;
use axum::extract::Path;
use axum::extract::RawQuery;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use http::HeaderValue;
use http::StatusCode;
use http::header;

use crate::error::ApiError;
use crate::request::QueryParams;

/// Whether this replica can serve (the node answers from its raft and apply state).
///
/// ### Correctness requirements
/// - Cheap and non-blocking: it is called on every `/readyz` probe.
/// - `Err` while the replica cannot serve reads and writes (no leader known, applying far
///   behind, shutting down), with a reason for the logs (never sent to the client).
pub trait Readiness: Send + Sync + 'static {
    /// `Ok` when ready; `Err(reason)` otherwise.
    fn check(&self) -> Result<(), String>;
}

/// The three endpoints and the checks each runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Livez,
    Readyz,
    Healthz,
}

impl Endpoint {
    fn name(self) -> &'static str {
        match self {
            Self::Livez => "livez",
            Self::Readyz => "readyz",
            Self::Healthz => "healthz",
        }
    }

    /// Liveness does not depend on the store: a replica cut off from its peers is alive and
    /// must not be restarted for it, but it is not ready.
    fn checks(self) -> &'static [&'static str] {
        match self {
            Self::Livez => &["ping", "log"],
            Self::Readyz | Self::Healthz => &["ping", "log", "storage"],
        }
    }
}

#[derive(Clone)]
struct HealthState {
    readiness: Arc<dyn Readiness>,
}

impl HealthState {
    fn run(&self, check: &str) -> Result<(), String> {
        match check {
            "storage" => self.readiness.check(),
            _ => Ok(()),
        }
    }
}

fn text(code: StatusCode, body: String) -> Response {
    let mut res = (code, body).into_response();
    let headers = res.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    res
}

fn endpoint(state: &HealthState, endpoint: Endpoint, query: Option<&str>) -> Response {
    let query = QueryParams::parse(query);
    let excluded: Vec<&str> = query.get_all("exclude").collect();
    let mut out = String::new();
    let mut failed = false;
    for check in endpoint.checks() {
        // Writing to a String cannot fail.
        if excluded.contains(check) {
            let _ = writeln!(out, "[+]{check} excluded: ok");
            continue;
        }
        match state.run(check) {
            Ok(()) => {
                let _ = writeln!(out, "[+]{check} ok");
            }
            Err(reason) => {
                tracing::warn!(check, %reason, endpoint = endpoint.name(), "health check failed");
                failed = true;
                let _ = writeln!(out, "[-]{check} failed: reason withheld");
            }
        }
    }
    if failed {
        let _ = writeln!(out, "{} check failed", endpoint.name());
        return text(StatusCode::INTERNAL_SERVER_ERROR, out);
    }
    if query.has("verbose") {
        let _ = writeln!(out, "{} check passed", endpoint.name());
        return text(StatusCode::OK, out);
    }
    text(StatusCode::OK, "ok".to_owned())
}

fn single(state: &HealthState, endpoint: Endpoint, check: &str) -> Response {
    if !endpoint.checks().contains(&check) {
        return ApiError::UnknownResource.into_response();
    }
    match state.run(check) {
        Ok(()) => text(StatusCode::OK, "ok".to_owned()),
        Err(reason) => {
            tracing::warn!(check, %reason, "health check failed");
            text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal server error: reason withheld\n".to_owned(),
            )
        }
    }
}

async fn not_allowed() -> Response {
    ApiError::MethodNotAllowed {
        resource: Default::default(),
        name: String::new(),
    }
    .into_response()
}

/// The health routes, served without authentication.
pub(crate) fn routes<S>(readiness: Arc<dyn Readiness>) -> Router<S> {
    let state = HealthState { readiness };
    let mut router = Router::new();
    for ep in [Endpoint::Livez, Endpoint::Readyz, Endpoint::Healthz] {
        router = router
            .route(
                &format!("/{}", ep.name()),
                get(
                    move |State(s): State<HealthState>, RawQuery(q): RawQuery| async move {
                        endpoint(&s, ep, q.as_deref())
                    },
                )
                .fallback(not_allowed),
            )
            .route(
                &format!("/{}/{{check}}", ep.name()),
                get(
                    move |State(s): State<HealthState>, Path(check): Path<String>| async move {
                        single(&s, ep, &check)
                    },
                )
                .fallback(not_allowed),
            );
    }
    router.with_state(state)
}

//! Health endpoints (spec 002 "Health", R-VER-036..047): `/livez`, `/readyz` and the
//! deprecated `/healthz`, each with `?verbose`, `?exclude=<check>` and `/<endpoint>/<check>`.
//! They need no credentials: load balancers and supervisors probe them. Every endpoint runs
//! `ping` and `log`, then the replica's named checks ([`Readiness::checks`]) of its scope.

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

/// Which endpoints run a named check, as kube-apiserver adds them: a health check runs in
/// `/livez`, `/readyz` and `/healthz`, a readiness check in `/readyz` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckScope {
    /// `/livez`, `/readyz` and `/healthz` (e.g. `etcd`, `poststarthook/<name>`).
    Health,
    /// `/readyz` only (e.g. `etcd-readiness`, `shutdown`).
    Readiness,
}

/// One named check of a replica: its name as verbose output and `/<endpoint>/<name>` show it,
/// and where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthCheck {
    /// The check's name (`etcd`, `poststarthook/bootstrap-controller`, ...).
    pub name: &'static str,
    /// Which endpoints run it.
    pub scope: CheckScope,
}

/// Whether this replica can serve (the node answers from its raft and apply state).
///
/// ### Correctness requirements
/// - Cheap and non-blocking: it is called on every `/readyz` probe.
/// - `Err` while the replica cannot serve reads and writes (no leader known, applying far
///   behind, shutting down), with a reason for the logs (never sent to the client).
pub trait Readiness: Send + Sync + 'static {
    /// `Ok` when ready; `Err(reason)` otherwise.
    fn check(&self) -> Result<(), String>;

    /// The named checks run besides `ping` and `log`, in the order verbose output lists them.
    /// By default one readiness check, `etcd-readiness`, which runs [`Readiness::check`].
    fn checks(&self) -> Vec<HealthCheck> {
        vec![HealthCheck {
            name: "etcd-readiness",
            scope: CheckScope::Readiness,
        }]
    }

    /// Runs the named check `name`, one of [`Readiness::checks`]: `Ok` when it passes,
    /// `Err(reason)` otherwise. By default [`Readiness::check`].
    fn run(&self, name: &str) -> Result<(), String> {
        let _ = name;
        self.check()
    }

    /// Runs the named check `name` for `/livez`. By default [`Readiness::run`]; a replica
    /// within its `--livez-grace-period` passes its unfinished start-up steps here.
    fn run_live(&self, name: &str) -> Result<(), String> {
        self.run(name)
    }
}

/// The checks every endpoint runs first, whatever the replica: the server answers, and its
/// log is writable (both pass whenever a request is answered at all).
const BUILTIN: [&str; 2] = ["ping", "log"];

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

    /// Whether this endpoint runs checks of `scope`.
    fn runs(self, scope: CheckScope) -> bool {
        scope == CheckScope::Health || self == Self::Readyz
    }
}

#[derive(Clone)]
struct HealthState {
    readiness: Arc<dyn Readiness>,
}

impl HealthState {
    /// The names of the checks `endpoint` runs, in order.
    fn checks(&self, endpoint: Endpoint) -> Vec<&'static str> {
        let named = self.readiness.checks().into_iter();
        BUILTIN
            .into_iter()
            .chain(named.filter(|c| endpoint.runs(c.scope)).map(|c| c.name))
            .collect()
    }

    fn run(&self, endpoint: Endpoint, check: &str) -> Result<(), String> {
        if BUILTIN.contains(&check) {
            return Ok(());
        }
        match endpoint {
            Endpoint::Livez => self.readiness.run_live(check),
            Endpoint::Readyz | Endpoint::Healthz => self.readiness.run(check),
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
    let mut excluded: Vec<&str> = query.get_all("exclude").collect();
    let mut out = String::new();
    let mut failed = false;
    for check in state.checks(endpoint) {
        // Writing to a String cannot fail.
        if excluded.contains(&check) {
            excluded.retain(|e| *e != check);
            let _ = writeln!(out, "[+]{check} excluded: ok");
            continue;
        }
        match state.run(endpoint, check) {
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
    if !excluded.is_empty() {
        let quoted: Vec<String> = excluded.iter().map(|e| format!("{e:?}")).collect();
        let _ = writeln!(
            out,
            "warn: some health checks cannot be excluded: no matches for {}",
            quoted.join(",")
        );
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
    if !state.checks(endpoint).contains(&check) {
        return ApiError::UnknownResource.into_response();
    }
    match state.run(endpoint, check) {
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
                &format!("/{}/{{*check}}", ep.name()),
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

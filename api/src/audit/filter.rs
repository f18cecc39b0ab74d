//! The audit middleware around the whole API: every response gets an `Audit-Id` (the
//! client's `Audit-ID` if it sent one, else a fresh UUID); with auditing on, the pipeline runs
//! as the current request ([`super::record`]) and the response stages are written here:
//! ResponseComplete, or for a watch ResponseStarted when its stream starts and
//! ResponseComplete when it ends, or Panic when the handler panicked.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::extract::State;
use axum::middleware::Next;
use axum::response::Response;
use futures::FutureExt;
use futures::StreamExt;
use http::HeaderValue;
use serde_json::Value;
use tokio::runtime::Handle;

use super::AuditConfig;
use super::Stage;
use super::event::ResponseStatus;
use super::record::Arrival;
use super::record::Current;
use super::record::Record;
use super::record::Recorder;
use super::source;
use crate::config::Clock;
use crate::flavor::Flavor;
use crate::random::RandomSource;

/// The response header (and request header honoured) carrying a request's audit id.
const AUDIT_ID: &str = "audit-id";

/// The middleware's state: where ids come from and, when auditing is on, the recorder.
#[derive(Clone)]
pub(crate) struct Auditor {
    random: RandomSource,
    recorder: Option<Arc<Recorder>>,
}

impl Auditor {
    pub(crate) fn new(
        config: AuditConfig,
        flavor: Flavor,
        clock: Arc<dyn Clock>,
        random: RandomSource,
    ) -> Self {
        let recorder = match config.policy {
            Some(policy) if !config.backends.is_empty() => Some(Arc::new(Recorder {
                policy,
                backends: config.backends,
                flavor,
                clock,
            })),
            _ => None,
        };
        Self { random, recorder }
    }
}

/// The middleware (`axum::middleware::from_fn_with_state`).
pub(crate) async fn audit(
    State(auditor): State<Auditor>,
    request: Request,
    next: Next,
) -> Response {
    let id = request
        .headers()
        .get(AUDIT_ID)
        .filter(|v| !v.is_empty())
        .cloned()
        .unwrap_or_else(|| {
            HeaderValue::from_str(&auditor.random.uuid())
                .unwrap_or_else(|_| HeaderValue::from_static(""))
        });
    let mut response = match &auditor.recorder {
        Some(recorder) => observe(recorder, &id, request, next).await,
        None => next.run(request).await,
    };
    response.headers_mut().insert(AUDIT_ID, id);
    response
}

async fn observe(
    recorder: &Arc<Recorder>,
    id: &HeaderValue,
    request: Request,
    next: Next,
) -> Response {
    let arrival = Arrival {
        audit_id: String::from_utf8_lossy(id.as_bytes()).into_owned(),
        received: recorder.clock.now(),
        request_uri: request
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_default(),
        source_ips: source::source_ips(request.headers(), request.extensions().get()),
        user_agent: source::user_agent(request.headers()),
    };
    let current = Current::new(recorder.clone(), arrival);
    let run = AssertUnwindSafe(current.scope(next.run(request)))
        .catch_unwind()
        .await;
    let response = match run {
        Ok(response) => response,
        Err(panic) => {
            if let Some(record) = current.take() {
                let message = format!("APIServer panic'd: {}", panic_text(&*panic));
                record
                    .emit(Stage::Panic, Some(failure(500, message, "")), None)
                    .await;
            }
            return crate::router::panic_response(panic);
        }
    };
    match current.take() {
        None => response,
        Some(record) if record.unauthenticated => {
            complete(record, response, Stage::ResponseStarted).await
        }
        Some(record) if record.long_running => stream_stages(record, response).await,
        Some(record) => complete(record, response, Stage::ResponseComplete).await,
    }
}

/// A watch: ResponseStarted now, ResponseComplete when the stream is done (ended, or dropped
/// because the client went away).
async fn stream_stages(record: Record, response: Response) -> Response {
    let code = response.status().as_u16();
    record
        .emit(Stage::ResponseStarted, Some(status_of(code)), None)
        .await;
    let (parts, body) = response.into_parts();
    let finished = Finish {
        record: Some(record),
        code,
    };
    let stream = body.into_data_stream().map(move |chunk| {
        let _ = &finished;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

/// Writes ResponseComplete when dropped (on the runtime the stream ran on).
struct Finish {
    record: Option<Record>,
    code: u16,
}

impl Drop for Finish {
    fn drop(&mut self) {
        let (Some(record), Ok(runtime)) = (self.record.take(), Handle::try_current()) else {
            return;
        };
        let status = status_of(self.code);
        runtime.spawn(async move {
            record
                .emit(Stage::ResponseComplete, Some(status), None)
                .await
        });
    }
}

/// A complete response, recorded at `stage`: the body is read when the event needs it (a
/// failure's Status, or the response object at RequestResponse), then passed on unchanged.
async fn complete(record: Record, response: Response, stage: Stage) -> Response {
    let code = response.status().as_u16();
    let failed = code >= 400;
    if !failed && record.level() < super::Level::RequestResponse {
        record.emit(stage, Some(status_of(code)), None).await;
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(error) => {
            tracing::warn!(%error, "reading a response body for the audit log failed");
            record.emit(stage, Some(status_of(code)), None).await;
            return Response::from_parts(parts, Body::empty());
        }
    };
    let object = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object);
    let status = match (&object, failed) {
        (Some(status), true) => failure(code, text(status, "message"), &text(status, "reason")),
        _ => status_of(code),
    };
    record.emit(stage, Some(status), object).await;
    Response::from_parts(parts, Body::from(bytes))
}

fn text(object: &Value, field: &str) -> String {
    object
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The responseStatus of a success: only the code.
fn status_of(code: u16) -> ResponseStatus {
    if code >= 400 {
        return failure(code, String::new(), "");
    }
    ResponseStatus {
        code,
        ..ResponseStatus::default()
    }
}

fn failure(code: u16, message: String, reason: &str) -> ResponseStatus {
    ResponseStatus {
        status: "Failure".into(),
        message,
        reason: reason.to_owned(),
        code,
        ..ResponseStatus::default()
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

//! The API's typed errors and their ONE translation to a `metav1.Status` response
//! (spec 000 "Errors", R-RES-236). Every 4xx/5xx body the server sends is built here.
//!
//! Storage failures are interpreted in [`ApiError::from_storage`] (as Kubernetes'
//! `storage/errors` does), so handlers never build a status of their own.

use std::borrow::Cow;

use axum::response::IntoResponse;
use axum::response::Response;
use http::HeaderValue;
use http::StatusCode;
use http::header;
use serde::Serialize;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::group::GroupKind;
use crate::group::GroupResource;
use crate::registry::CorruptObjects;
use crate::storage::Revision;
use crate::storage::StorageError;
use crate::validation::FieldError;

/// Kubernetes' wording of an optimistic-lock conflict (`OptimisticLockErrorMsg`).
pub const OPTIMISTIC_LOCK_MESSAGE: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// Kubernetes' wording of a 410 for a continue token whose revision was compacted, when the
/// Status offers a token that continues at the newest revision (`inconsistentContinue`).
const INCONSISTENT_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// The most bytes of one request-supplied value (a name, a query value, a field's value or
/// path) that an error message repeats. Kubernetes' field errors repeat values whole; its
/// request handling cuts the request-supplied text it repeats (the user agent) at 1,024 bytes,
/// and so does every message here, so no answer grows with the request that caused it.
pub const MAX_ECHO_BYTES: usize = 1024;

/// What marks a cut value (Kubernetes' mark for a cut user agent).
pub const TRUNCATED_MARK: &str = "...TRUNCATED";

/// `text` as an error message repeats it: whole when it has at most [`MAX_ECHO_BYTES`] bytes,
/// otherwise its first [`MAX_ECHO_BYTES`] (cut on a character boundary) and [`TRUNCATED_MARK`].
pub fn excerpt(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_ECHO_BYTES {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(truncated(text))
    }
}

/// `value` rendered as JSON, as an error message repeats it: the rendering is stopped once it
/// passes [`MAX_ECHO_BYTES`], so a huge value costs no more than its excerpt, and cut as
/// [`excerpt`] cuts text.
pub fn excerpt_json(value: &impl Serialize) -> String {
    let mut out = Capped(Vec::new());
    let complete = serde_json::to_writer(&mut out, value).is_ok();
    let bytes = out.0;
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text,
        // Stopped inside a character: keep the characters before it.
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    };
    if complete {
        text.to_owned()
    } else {
        truncated(text)
    }
}

/// The first [`MAX_ECHO_BYTES`] of `text` (fewer to end on a character boundary) and
/// [`TRUNCATED_MARK`].
fn truncated(text: &str) -> String {
    let cut = (0..=MAX_ECHO_BYTES.min(text.len()))
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}{TRUNCATED_MARK}", &text[..cut])
}

/// A writer that takes one byte more than [`MAX_ECHO_BYTES`] and then refuses, which stops
/// the serializer writing to it.
struct Capped(Vec<u8>);

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = (MAX_ECHO_BYTES + 1).saturating_sub(self.0.len());
        if room == 0 {
            return Err(std::io::Error::other("rendering is longer than an excerpt"));
        }
        let taken = buf.len().min(room);
        self.0.extend_from_slice(&buf[..taken]);
        Ok(taken)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Why an API request failed. Each variant maps to one HTTP status and `Status.reason`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    /// 404 NotFound: the object does not exist.
    #[error("{resource} {:?} not found", excerpt(.name))]
    NotFound {
        /// The resource.
        resource: GroupResource,
        /// The object's name.
        name: String,
    },
    /// 404 NotFound: no resource (or path) of that name is served.
    #[error("the server could not find the requested resource")]
    UnknownResource,
    /// 409 AlreadyExists: a create found an object of that name.
    #[error("{resource} {:?} already exists", excerpt(.name))]
    AlreadyExists {
        /// The resource.
        resource: GroupResource,
        /// The object's name.
        name: String,
    },
    /// 409 Conflict: a precondition or an optimistic lock failed.
    #[error("Operation cannot be fulfilled on {resource} {:?}: {reason}", excerpt(.name))]
    Conflict {
        /// The resource.
        resource: GroupResource,
        /// The object's name.
        name: String,
        /// What conflicted.
        reason: String,
    },
    /// 409 Conflict: a server-side apply would change fields other managers own (Kubernetes'
    /// `NewApplyConflict`): one `FieldManagerConflict` cause per field, no object named.
    #[error("{message}")]
    ApplyConflict {
        /// The conflicts, grouped by manager.
        message: String,
        /// `(field path, "conflict with <manager>")` of each conflicting field.
        causes: Vec<(String, String)>,
    },
    /// 422 Invalid: the object failed validation; one cause per field error.
    #[error("{kind} {:?} is invalid: {}", excerpt(.name), aggregate(.causes))]
    Invalid {
        /// The object's kind.
        kind: GroupKind,
        /// The object's name.
        name: String,
        /// The failures, in the order found.
        causes: Vec<FieldError>,
    },
    /// 400 BadRequest: the request cannot be understood (malformed body, mismatched names).
    #[error("{0}")]
    BadRequest(String),
    /// 406 NotAcceptable: no media type the request's `Accept` lists is served (R-RES-137).
    #[error("only the following media types are accepted: {accepted}")]
    NotAcceptable {
        /// The media types served, comma-separated.
        accepted: String,
    },
    /// 415 UnsupportedMediaType: the body's `Content-Type` is not one the server decodes.
    #[error(
        "the body of the request was in an unknown format - accepted media types include: {accepted}"
    )]
    UnsupportedMediaType {
        /// The media types accepted, comma-separated.
        accepted: String,
    },
    /// 405 MethodNotAllowed: the resource does not serve this verb.
    #[error("the server does not allow this method on the requested resource")]
    MethodNotAllowed {
        /// The resource.
        resource: GroupResource,
        /// The object's name, if the request named one.
        name: String,
    },
    /// 405 MethodNotAllowed: the custom resource's definition is being deleted, so `verb`
    /// (a create) is refused, as kube-apiserver words it.
    #[error("{verb} not allowed while custom resource definition is terminating")]
    DefinitionTerminating {
        /// The custom resource.
        resource: GroupResource,
        /// The refused verb.
        verb: String,
    },
    /// 413 RequestEntityTooLarge: the body is larger than `limit` bytes.
    #[error("Request entity too large: limit is {limit}")]
    RequestEntityTooLarge {
        /// The body limit in bytes.
        limit: usize,
    },
    /// 413 RequestEntityTooLarge: the object a write would store is larger than a stored
    /// object may be (etcd's `request is too large`); nothing was stored.
    #[error(
        "request is too large: the object is {size} bytes, more than the {limit} bytes a stored object may have"
    )]
    ObjectTooLarge {
        /// The size of the object's stored form, in bytes.
        size: usize,
        /// The most bytes a stored object may have (`--max-object-bytes`).
        limit: usize,
    },
    /// 410 Gone (reason `Expired`): the requested revision has been compacted.
    #[error("too old resource version: {requested} ({compacted})")]
    Gone {
        /// The revision asked for.
        requested: Revision,
        /// The oldest revision still held.
        compacted: Revision,
    },
    /// 410 Gone (reason `Expired`): a list asked for a revision that has been compacted.
    #[error("The resourceVersion for the provided list is too old.")]
    ListExpired,
    /// 410 Gone (reason `Expired`): a continue token's revision has been compacted. As
    /// Kubernetes does, the Status's `metadata.continue` offers `fresh_continue`, which
    /// continues after the same key at the newest revision.
    #[error("{INCONSISTENT_CONTINUE}")]
    ContinueExpired {
        /// The token continuing at the newest revision.
        fresh_continue: String,
    },
    /// 403 Forbidden: authorization denied the request, or an admission rule refused it.
    #[error("{}", forbidden_message(.resource, .name, .reason))]
    Forbidden {
        /// The resource (`None`: a non-resource path).
        resource: Option<GroupResource>,
        /// The object's name, if any.
        name: String,
        /// Why.
        reason: String,
    },
    /// 403 Forbidden: a create in a namespace that is being deleted (Kubernetes'
    /// NamespaceLifecycle admission), with the `NamespaceTerminating` cause.
    #[error("{}", terminating_message(.resource, .name, .namespace))]
    NamespaceTerminating {
        /// The resource being created.
        resource: GroupResource,
        /// The object's name (its `generateName` when it has none).
        name: String,
        /// The terminating namespace.
        namespace: String,
    },
    /// 401 Unauthorized: no credentials, or credentials no authenticator accepted.
    #[error("Unauthorized")]
    Unauthorized,
    /// 504 Timeout: the replica did not reach the requested revision in time (Kubernetes'
    /// `NewTooLargeResourceVersionError`, a `NewTimeoutError`).
    #[error("Timeout: Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion {
        /// The revision asked for.
        requested: Revision,
        /// The replica's newest revision.
        current: Revision,
    },
    /// 503 ServiceUnavailable: the store cannot answer now and did nothing; retrying may
    /// succeed.
    #[error("{0}")]
    ServiceUnavailable(String),
    /// 504 Timeout: a write was proposed but did not complete in time; it may still take effect,
    /// so no retry is offered (kube-apiserver's `NewTimeoutError` for a request past its
    /// deadline).
    #[error(
        "Timeout: request did not complete within requested timeout - context deadline exceeded"
    )]
    Timeout {
        /// Why the outcome is unknown (logged, not sent).
        reason: String,
    },
    /// 500 InternalError: a failure retrying will not fix.
    #[error("Internal error occurred: {0}")]
    Internal(String),
    /// 500 InternalError: stored objects cannot be decoded; the message names the first key
    /// (what a read that stops at the first reports). The forced delete recognises it.
    #[error("Internal error occurred: {0}")]
    Corrupt(CorruptObjects),
    /// 500 StorageReadError: a list met corrupt objects and names them all (up to the limit),
    /// as kube-apiserver reports them with `AllowUnsafeMalformedObjectDeletion` on.
    #[error("failed to read one or more {resource} from the storage")]
    StoreReadError {
        /// The resource listed.
        resource: GroupResource,
        /// The corrupt objects met.
        corrupt: CorruptObjects,
    },
    /// 422 Invalid: a well-formed patch does not apply to the object (a failed JSON Patch
    /// `test`, R-RES-115), or applying it would break a budget; the message says why (where
    /// Kubernetes answers only its generic 422 text).
    #[error("{0}")]
    PatchNotApplicable(String),
    /// 413 RequestEntityTooLarge: a JSON Patch holds more operations than are allowed
    /// (Kubernetes' `NewRequestEntityTooLargeError` with the patch's message).
    #[error("Request entity too large: {0}")]
    PatchTooLarge(String),
    /// 429 TooManyRequests with `Retry-After`: the server is shutting down and takes no new
    /// request (`--shutdown-send-retry-after`); another replica will answer the retry.
    #[error("The apiserver is shutting down, please try again later.")]
    ShuttingDown,
    /// 429 TooManyRequests with `Retry-After`: flow control found no seat for the request
    /// (its queue full, its level rejecting, or its wait too long).
    #[error("Too many requests, please try again later.")]
    Throttled {
        /// The seconds the client should wait.
        retry_after: u64,
    },
    /// 429 TooManyRequests: the request would break a limit that may lift later (an
    /// eviction a disruption budget does not allow now); `causes` say which.
    #[error("{message}")]
    TooManyRequests {
        /// What was refused.
        message: String,
        /// `(reason, message)` of each cause (`DisruptionBudget`, ...).
        causes: Vec<(String, String)>,
    },
    /// An admission policy's refusal (Kubernetes' `admission.NewForbidden` with the policy's
    /// reason and its code): `<resource> "<name>" is forbidden: <message>`, the message
    /// repeated as the one cause.
    #[error("{}", forbidden_message(&Some(.resource.clone()), .name, .message))]
    PolicyDenied {
        /// The resource written.
        resource: GroupResource,
        /// The object's name, if known.
        name: String,
        /// The `Status.reason` (`Invalid`, `Forbidden`, `Unauthorized`,
        /// `RequestEntityTooLarge`).
        reason: &'static str,
        /// The HTTP status code of `reason`.
        code: u16,
        /// The policy's message.
        message: String,
    },
    /// The refusal of a write by admission policies' errors (Kubernetes' generic policy
    /// dispatcher, MutatingAdmissionPolicy's): 403 with the first error's reason, the first
    /// error as the whole message, every error a cause.
    #[error("{}", .messages.first().map(String::as_str).unwrap_or_default())]
    PolicyErrors {
        /// The resource written.
        resource: GroupResource,
        /// The object's name, if known.
        name: String,
        /// The `Status.reason` (`Invalid`, `Forbidden`).
        reason: &'static str,
        /// Each error's message, in order.
        messages: Vec<String>,
    },
    /// A failure answered with an explicit Kubernetes status code and message (upstream
    /// handlers that return a `Status` of their own, like the eviction of a pod with more
    /// than one disruption budget: 500 without a reason).
    #[error("{message}")]
    StatusFailure {
        /// The HTTP status code.
        code: u16,
        /// The message.
        message: String,
    },
    /// An admission webhook's refusal (Kubernetes' `ToStatusErr`): the webhook's own
    /// `status` with the message prefixed by who denied, its reason, details and code kept.
    #[error("{message}")]
    WebhookDenied {
        /// The code the webhook gave (403 when it gave none below 400).
        code: u16,
        /// `admission webhook "<name>" denied the request[: <message or reason>]`.
        message: String,
        /// The webhook's `status.reason` (may be empty).
        reason: String,
        /// The webhook's `status.details`, when it gave an object.
        details: Option<Box<Value>>,
    },
}

impl From<crate::patch::PatchError> for ApiError {
    fn from(e: crate::patch::PatchError) -> Self {
        match e {
            crate::patch::PatchError::Malformed(text) => Self::BadRequest(text),
            crate::patch::PatchError::NotApplicable(text) => Self::PatchNotApplicable(text),
            e @ crate::patch::PatchError::TooManyOperations(_) => {
                Self::PatchTooLarge(e.to_string())
            }
        }
    }
}

impl From<crate::codec::cbor::CborError> for ApiError {
    /// A CBOR body that does not decode is the client's fault, named as the decoder names it.
    fn from(e: crate::codec::cbor::CborError) -> Self {
        Self::BadRequest(e.to_string())
    }
}

fn aggregate(causes: &[FieldError]) -> String {
    match causes {
        [one] => one.to_string(),
        many => {
            let parts: Vec<String> = many.iter().map(ToString::to_string).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

fn forbidden_message(resource: &Option<GroupResource>, name: &str, reason: &str) -> String {
    match resource {
        None => format!("forbidden: {reason}"),
        Some(r) if name.is_empty() => format!("{r} is forbidden: {reason}"),
        Some(r) => format!("{r} {:?} is forbidden: {reason}", excerpt(name)),
    }
}

fn terminating_message(resource: &GroupResource, name: &str, namespace: &str) -> String {
    let reason = format!(
        "unable to create new content in namespace {} because it is being terminated",
        excerpt(namespace)
    );
    forbidden_message(&Some(resource.clone()), name, &reason)
}

/// Seconds a client should wait before retrying a retryable failure.
const RETRY_AFTER_SECONDS: u64 = 1;

/// `Retry-After` of a request refused while the server shuts down (kube-apiserver's 5 s: long
/// enough for the load balancer to have taken this replica out).
const SHUTDOWN_RETRY_AFTER_SECONDS: u64 = 5;

impl ApiError {
    /// Interprets a storage failure for an operation on `name` of `resource` (the single
    /// translation point, as Kubernetes' `InterpretCreateError`/`InterpretUpdateError`).
    pub fn from_storage(err: StorageError, resource: &GroupResource, name: &str) -> Self {
        match err {
            StorageError::NotFound { .. } => Self::NotFound {
                resource: resource.clone(),
                name: name.to_owned(),
            },
            StorageError::AlreadyExists { .. } => Self::AlreadyExists {
                resource: resource.clone(),
                name: name.to_owned(),
            },
            StorageError::Conflict { .. } | StorageError::GuardFailed { .. } => Self::Conflict {
                resource: resource.clone(),
                name: name.to_owned(),
                reason: OPTIMISTIC_LOCK_MESSAGE.to_owned(),
            },
            StorageError::Compacted {
                requested,
                compacted,
            } => Self::Gone {
                requested,
                compacted,
            },
            StorageError::TooLargeRevision { requested, current } => {
                Self::TooLargeResourceVersion { requested, current }
            }
            StorageError::Unavailable { reason } => Self::ServiceUnavailable(reason),
            StorageError::OutcomeUnknown { reason } => Self::Timeout { reason },
            StorageError::Internal { reason } => Self::Internal(reason),
            StorageError::TooLarge { size, limit, .. } => Self::ObjectTooLarge { size, limit },
        }
    }

    /// The HTTP status code.
    pub fn code(&self) -> StatusCode {
        match self {
            Self::NotFound { .. } | Self::UnknownResource => StatusCode::NOT_FOUND,
            Self::AlreadyExists { .. } | Self::Conflict { .. } | Self::ApplyConflict { .. } => {
                StatusCode::CONFLICT
            }
            Self::Invalid { .. } | Self::PatchNotApplicable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::PatchTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::MethodNotAllowed { .. } | Self::DefinitionTerminating { .. } => {
                StatusCode::METHOD_NOT_ALLOWED
            }
            Self::NotAcceptable { .. } => StatusCode::NOT_ACCEPTABLE,
            Self::UnsupportedMediaType { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::RequestEntityTooLarge { .. } | Self::ObjectTooLarge { .. } => {
                StatusCode::PAYLOAD_TOO_LARGE
            }
            Self::Gone { .. } | Self::ListExpired | Self::ContinueExpired { .. } => {
                StatusCode::GONE
            }
            Self::Forbidden { .. }
            | Self::NamespaceTerminating { .. }
            | Self::PolicyErrors { .. } => StatusCode::FORBIDDEN,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::TooLargeResourceVersion { .. } | Self::Timeout { .. } => {
                StatusCode::GATEWAY_TIMEOUT
            }
            Self::ServiceUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) | Self::Corrupt(_) | Self::StoreReadError { .. } => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            Self::TooManyRequests { .. } | Self::ShuttingDown | Self::Throttled { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            Self::StatusFailure { code, .. }
            | Self::PolicyDenied { code, .. }
            | Self::WebhookDenied { code, .. } => {
                StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
            }
        }
    }

    /// The `Status.reason`.
    pub fn reason(&self) -> &str {
        match self {
            Self::NotFound { .. } | Self::UnknownResource => "NotFound",
            Self::AlreadyExists { .. } => "AlreadyExists",
            Self::Conflict { .. } | Self::ApplyConflict { .. } => "Conflict",
            Self::Invalid { .. } | Self::PatchNotApplicable(_) => "Invalid",
            Self::PatchTooLarge(_) => "RequestEntityTooLarge",
            Self::BadRequest(_) => "BadRequest",
            Self::MethodNotAllowed { .. } | Self::DefinitionTerminating { .. } => {
                "MethodNotAllowed"
            }
            Self::NotAcceptable { .. } => "NotAcceptable",
            Self::UnsupportedMediaType { .. } => "UnsupportedMediaType",
            Self::RequestEntityTooLarge { .. } | Self::ObjectTooLarge { .. } => {
                "RequestEntityTooLarge"
            }
            Self::Gone { .. } | Self::ListExpired | Self::ContinueExpired { .. } => "Expired",
            Self::Forbidden { .. } | Self::NamespaceTerminating { .. } => "Forbidden",
            Self::Unauthorized => "Unauthorized",
            Self::TooLargeResourceVersion { .. } | Self::Timeout { .. } => "Timeout",
            Self::ServiceUnavailable(_) => "ServiceUnavailable",
            Self::Internal(_) | Self::Corrupt(_) => "InternalError",
            Self::StoreReadError { .. } => "StorageReadError",
            Self::TooManyRequests { .. } | Self::ShuttingDown | Self::Throttled { .. } => {
                "TooManyRequests"
            }
            Self::StatusFailure { .. } => "",
            Self::PolicyDenied { reason, .. } | Self::PolicyErrors { reason, .. } => reason,
            Self::WebhookDenied { reason, .. } => reason,
        }
    }

    fn retry_after(&self) -> Option<u64> {
        match self {
            Self::TooLargeResourceVersion { .. } | Self::ServiceUnavailable(_) => {
                Some(RETRY_AFTER_SECONDS)
            }
            Self::ShuttingDown => Some(SHUTDOWN_RETRY_AFTER_SECONDS),
            Self::Throttled { retry_after } => Some(*retry_after),
            _ => None,
        }
    }

    fn details(&self) -> Option<Value> {
        let resource_details = |r: &GroupResource, name: &str| details(name, &r.group, &r.resource);
        match self {
            Self::NotFound { resource, name }
            | Self::AlreadyExists { resource, name }
            | Self::Conflict { resource, name, .. }
            | Self::MethodNotAllowed { resource, name } => Some(resource_details(resource, name)),
            Self::DefinitionTerminating { resource, .. } => Some(resource_details(resource, "")),
            Self::Forbidden { resource, name, .. } => {
                let r = resource.clone().unwrap_or_default();
                Some(resource_details(&r, name))
            }
            Self::PolicyDenied {
                resource,
                name,
                message,
                ..
            } => {
                let mut d = resource_details(resource, name);
                if let Value::Object(m) = &mut d {
                    m.insert("causes".to_owned(), json!([{ "message": message }]));
                }
                Some(d)
            }
            Self::PolicyErrors {
                resource,
                name,
                messages,
                ..
            } => {
                let mut d = resource_details(resource, name);
                if let Value::Object(m) = &mut d {
                    let causes = messages.iter().map(|m| json!({ "message": m })).collect();
                    m.insert("causes".to_owned(), Value::Array(causes));
                }
                Some(d)
            }
            Self::NamespaceTerminating {
                resource,
                name,
                namespace,
            } => {
                let mut d = resource_details(resource, name);
                if let Value::Object(m) = &mut d {
                    let message = format!("namespace {} is being terminated", excerpt(namespace));
                    let cause = json!({"reason": "NamespaceTerminating", "message": message, "field": "metadata.namespace"});
                    m.insert("causes".to_owned(), json!([cause]));
                }
                Some(d)
            }
            Self::Invalid { kind, name, causes } => {
                let mut d = details(name, &kind.group, &kind.kind);
                let causes: Vec<Value> = causes
                    .iter()
                    .map(|c| {
                        json!({"reason": c.reason(), "message": c.body(), "field": excerpt(&c.field)})
                    })
                    .collect();
                if let Value::Object(m) = &mut d {
                    m.insert("causes".to_owned(), Value::Array(causes));
                }
                Some(d)
            }
            Self::UnknownResource | Self::PatchNotApplicable(_) | Self::Timeout { .. } => {
                Some(json!({}))
            }
            Self::TooLargeResourceVersion { .. } => Some(json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": RETRY_AFTER_SECONDS,
            })),
            Self::ServiceUnavailable(_) => Some(json!({"retryAfterSeconds": RETRY_AFTER_SECONDS})),
            Self::ShuttingDown => Some(json!({"retryAfterSeconds": SHUTDOWN_RETRY_AFTER_SECONDS})),
            Self::Throttled { retry_after } => Some(json!({"retryAfterSeconds": retry_after})),
            Self::Internal(message) => Some(json!({"causes": [{"message": message}]})),
            Self::Corrupt(corrupt) => Some(json!({"causes": [{"message": corrupt.to_string()}]})),
            Self::StoreReadError { resource, corrupt } => Some(corrupt.list_details(resource)),
            Self::ApplyConflict { causes, .. } => {
                let causes: Vec<Value> = causes
                    .iter()
                    .map(|(field, message)| {
                        json!({"reason": "FieldManagerConflict", "message": message, "field": excerpt(field)})
                    })
                    .collect();
                Some(json!({"causes": causes}))
            }
            Self::TooManyRequests { causes, .. } => {
                let causes: Vec<Value> = causes
                    .iter()
                    .map(|(reason, message)| json!({"reason": reason, "message": message}))
                    .collect();
                Some(json!({"causes": causes}))
            }
            Self::BadRequest(_)
            | Self::NotAcceptable { .. }
            | Self::UnsupportedMediaType { .. }
            | Self::RequestEntityTooLarge { .. }
            | Self::ObjectTooLarge { .. }
            | Self::Gone { .. }
            | Self::ListExpired
            | Self::ContinueExpired { .. }
            | Self::Unauthorized
            | Self::PatchTooLarge(_)
            | Self::StatusFailure { .. } => None,
            Self::WebhookDenied { details, .. } => details.as_deref().cloned(),
        }
    }

    /// The `Status` object of this error (R-RES-236).
    pub fn status(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".to_owned(), "Status".into());
        m.insert("apiVersion".to_owned(), "v1".into());
        let metadata = match self {
            Self::ContinueExpired { fresh_continue } => json!({"continue": fresh_continue}),
            _ => json!({}),
        };
        m.insert("metadata".to_owned(), metadata);
        m.insert("status".to_owned(), "Failure".into());
        m.insert("message".to_owned(), self.to_string().into());
        if !self.reason().is_empty() {
            m.insert("reason".to_owned(), self.reason().into());
        }
        if let Some(d) = self.details() {
            m.insert("details".to_owned(), d);
        }
        m.insert("code".to_owned(), self.code().as_u16().into());
        Value::Object(m)
    }
}

/// `StatusDetails` with Kubernetes' omitempty: empty name/group/kind are left out; the name
/// is the request's, so only an excerpt of it is repeated.
fn details(name: &str, group: &str, kind: &str) -> Value {
    let mut m = Map::new();
    for (k, v) in [("name", &*excerpt(name)), ("group", group), ("kind", kind)] {
        if !v.is_empty() {
            m.insert(k.to_owned(), v.into());
        }
    }
    Value::Object(m)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = self.code();
        match &self {
            Self::Timeout { reason } => tracing::error!(error = %self, reason, "request failed"),
            _ if code.is_server_error() => tracing::error!(error = %self, "request failed"),
            _ => {}
        }
        let body = self.status().to_string();
        let mut res = (code, body).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(secs) = self.retry_after() {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm() -> GroupResource {
        GroupResource::new("", "configmaps")
    }

    // R-RES-236
    #[test]
    fn not_found_status_is_kubernetes_shaped() {
        let e = ApiError::NotFound {
            resource: cm(),
            name: "x".into(),
        };
        assert_eq!(
            e.status(),
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                "message":"configmaps \"x\" not found","reason":"NotFound",
                "details":{"name":"x","kind":"configmaps"},"code":404})
        );
    }

    // R-RES-236
    #[test]
    fn storage_errors_map_to_their_statuses() {
        let map = |e| ApiError::from_storage(e, &cm(), "x");
        let conflict = map(StorageError::Conflict {
            key: "k".into(),
            expected: 1,
            actual: 2,
        });
        assert_eq!(conflict.code(), StatusCode::CONFLICT);
        assert_eq!(
            conflict.to_string(),
            format!("Operation cannot be fulfilled on configmaps \"x\": {OPTIMISTIC_LOCK_MESSAGE}")
        );
        let exists = map(StorageError::AlreadyExists { key: "k".into() });
        assert_eq!(exists.to_string(), "configmaps \"x\" already exists");
        assert_eq!(exists.reason(), "AlreadyExists");
        let gone = map(StorageError::Compacted {
            requested: 3,
            compacted: 9,
        });
        assert_eq!((gone.code(), gone.reason()), (StatusCode::GONE, "Expired"));
        let late = map(StorageError::TooLargeRevision {
            requested: 90,
            current: 9,
        });
        assert_eq!(late.code(), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(late.reason(), "Timeout");
        assert_eq!(
            late.to_string(),
            "Timeout: Too large resource version: 90, current: 9"
        );
        let details = &late.status()["details"];
        assert_eq!(details["causes"][0]["reason"], "ResourceVersionTooLarge");
        assert_eq!(
            details["causes"][0]["message"],
            "Too large resource version"
        );
        let down = map(StorageError::Unavailable {
            reason: "no leader".into(),
        });
        assert_eq!(down.code(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(down.retry_after(), Some(1));
        let broken = map(StorageError::Internal {
            reason: "disk".into(),
        });
        assert_eq!(broken.code(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    // R-RES-236: a write whose outcome is unknown is kube-apiserver's request timeout (504
    // `Timeout`, empty details) and offers no retry; one refused before it was proposed is a 503
    // that does.
    #[test]
    fn unknown_outcome_is_a_timeout_without_retry() {
        let unknown = ApiError::from_storage(
            StorageError::OutcomeUnknown {
                reason: "leader lost".into(),
            },
            &cm(),
            "x",
        );
        assert_eq!(
            unknown.status(),
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                "message":"Timeout: request did not complete within requested timeout - context deadline exceeded",
                "reason":"Timeout","details":{},"code":504})
        );
        let res = unknown.into_response();
        assert_eq!(res.status(), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(res.headers().get(header::RETRY_AFTER), None);

        let refused = ApiError::from_storage(
            StorageError::Unavailable {
                reason: "no leader".into(),
            },
            &cm(),
            "x",
        );
        assert_eq!(refused.status()["details"]["retryAfterSeconds"], 1);
        let res = refused.into_response();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(res.headers()[header::RETRY_AFTER], "1");
    }

    // R-RES-166, R-RES-236: list 410s are Kubernetes' `NewResourceExpired`; an expired
    // continue token's Status offers a fresh token in `metadata.continue`.
    #[test]
    fn expired_lists_and_tokens() {
        let list = ApiError::ListExpired.status();
        assert_eq!(
            list,
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                "message":"The resourceVersion for the provided list is too old.",
                "reason":"Expired","code":410})
        );
        let token = ApiError::ContinueExpired {
            fresh_continue: "abc".into(),
        }
        .status();
        assert_eq!(token["code"], 410);
        assert_eq!(token["reason"], "Expired");
        assert_eq!(token["metadata"], json!({"continue": "abc"}));
        assert_eq!(token["message"], INCONSISTENT_CONTINUE);
    }

    // R-RES-236
    #[test]
    fn invalid_carries_causes_and_aggregates_messages() {
        let causes = vec![
            FieldError::invalid("metadata.name", "Bad_Name", "bad"),
            FieldError::required("data", ""),
        ];
        let e = ApiError::Invalid {
            kind: GroupKind {
                group: String::new(),
                kind: "ConfigMap".into(),
            },
            name: "Bad_Name".into(),
            causes,
        };
        assert_eq!(
            e.to_string(),
            r#"ConfigMap "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name": bad, data: Required value]"#
        );
        let s = e.status();
        assert_eq!(s["code"], 422);
        assert_eq!(s["details"]["kind"], "ConfigMap");
        assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueInvalid");
        assert_eq!(s["details"]["causes"][0]["field"], "metadata.name");
        assert_eq!(s["details"]["causes"][1]["message"], "Required value");
    }

    // R-RES-008: an eviction a disruption budget refuses is 429 with the budget as cause; a
    // handler's own failure Status keeps its code and has no reason.
    #[test]
    fn too_many_requests_and_explicit_failures() {
        let e = ApiError::TooManyRequests {
            message: "Cannot evict pod as it would violate the pod's disruption budget.".into(),
            causes: vec![(
                "DisruptionBudget".into(),
                "The disruption budget b needs 2 healthy pods and has 2 currently".into(),
            )],
        };
        assert_eq!(
            e.status(),
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                "message":"Cannot evict pod as it would violate the pod's disruption budget.",
                "reason":"TooManyRequests",
                "details":{"causes":[{"reason":"DisruptionBudget",
                    "message":"The disruption budget b needs 2 healthy pods and has 2 currently"}]},
                "code":429})
        );
        assert_eq!(e.retry_after(), None);
        let failure = ApiError::StatusFailure {
            code: 500,
            message: "more than one".into(),
        };
        assert_eq!(
            failure.status(),
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                "message":"more than one","code":500})
        );
    }

    #[test]
    fn echoes_are_cut_to_an_excerpt() {
        assert_eq!(excerpt("short"), "short");
        let exact = "a".repeat(MAX_ECHO_BYTES);
        assert_eq!(excerpt(&exact), exact);
        let long = "b".repeat(MAX_ECHO_BYTES + 1);
        assert_eq!(
            excerpt(&long),
            format!("{}{TRUNCATED_MARK}", "b".repeat(MAX_ECHO_BYTES))
        );
        // Cut on a character boundary: `é` is two bytes and would straddle the limit.
        let wide = format!("a{}", "é".repeat(MAX_ECHO_BYTES));
        let cut = excerpt(&wide);
        assert_eq!(cut.len(), MAX_ECHO_BYTES - 1 + TRUNCATED_MARK.len());
        assert!(cut.ends_with(&format!("é{TRUNCATED_MARK}")));
        assert_eq!(excerpt_json(&json!({"a": [1, 2]})), r#"{"a":[1,2]}"#);
        let big = json!({"a": "é".repeat(1 << 20)});
        let rendered = excerpt_json(&big);
        assert!(rendered.starts_with(r#"{"a":"éé"#), "{rendered:.20}");
        assert!(rendered.ends_with(TRUNCATED_MARK));
        assert!(rendered.len() <= MAX_ECHO_BYTES + TRUNCATED_MARK.len());
    }

    #[test]
    fn names_in_messages_and_details_are_excerpts() {
        let long = "n".repeat(10 * MAX_ECHO_BYTES);
        let e = ApiError::NotFound {
            resource: cm(),
            name: long.clone(),
        };
        let s = e.status();
        let message = s["message"].as_str().unwrap_or_default();
        assert!(message.len() < 2 * MAX_ECHO_BYTES, "{message}");
        assert!(message.ends_with(&format!("{TRUNCATED_MARK}\" not found")));
        assert_eq!(s["details"]["name"], excerpt(&long).as_ref());
        let invalid = ApiError::Invalid {
            kind: GroupKind::default(),
            name: long.clone(),
            causes: vec![FieldError::invalid(long.clone(), long.clone(), "bad")],
        };
        assert!(invalid.status().to_string().len() < 8 * MAX_ECHO_BYTES);
    }

    #[test]
    fn an_oversized_object_is_413_request_entity_too_large() {
        let e = ApiError::from_storage(
            StorageError::TooLarge {
                key: "k".into(),
                size: 2_000_000,
                limit: 1_572_864,
            },
            &cm(),
            "x",
        );
        assert_eq!(
            e.status(),
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                "message":"request is too large: the object is 2000000 bytes, more than the 1572864 bytes a stored object may have",
                "reason":"RequestEntityTooLarge","code":413})
        );
        // The body limit's answer is unchanged.
        assert_eq!(
            ApiError::RequestEntityTooLarge { limit: 3 }.to_string(),
            "Request entity too large: limit is 3"
        );
    }

    // R-ACC-088
    #[test]
    fn forbidden_wording() {
        let e = ApiError::Forbidden {
            resource: Some(cm()),
            name: "x".into(),
            reason: "User \"bob\" cannot get resource".into(),
        };
        assert_eq!(
            e.to_string(),
            "configmaps \"x\" is forbidden: User \"bob\" cannot get resource"
        );
        let p = ApiError::Forbidden {
            resource: None,
            name: String::new(),
            reason: "User \"bob\" cannot get path \"/api\"".into(),
        };
        assert_eq!(
            p.to_string(),
            "forbidden: User \"bob\" cannot get path \"/api\""
        );
        assert_eq!(ApiError::Unauthorized.status()["code"], 401);
        assert!(ApiError::Unauthorized.status().get("details").is_none());
    }
}

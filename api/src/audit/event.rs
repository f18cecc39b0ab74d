//! The `audit.<domain>/v1` `Event` as it is written (JSON, `omitempty` as Kubernetes writes
//! it), with its level and stage enums and the microsecond timestamps.

use std::collections::BTreeMap;

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use serde::Deserialize;
use serde::Serialize;

/// How much of a request is recorded, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// Nothing.
    None,
    /// Who did what to which object, and the outcome.
    Metadata,
    /// Metadata and the request body.
    Request,
    /// Metadata, request and response bodies.
    RequestResponse,
}

/// When in a request's life an event is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// As soon as the request is received, before it is handled.
    RequestReceived,
    /// When the response headers are sent, for long-running requests (watches) only.
    ResponseStarted,
    /// When the response is complete.
    ResponseComplete,
    /// When the handler panicked.
    Panic,
}

impl Stage {
    /// The name written in events and policies.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RequestReceived => "RequestReceived",
            Self::ResponseStarted => "ResponseStarted",
            Self::ResponseComplete => "ResponseComplete",
            Self::Panic => "Panic",
        }
    }
}

/// The user (or impersonated user) of an event.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EventUser {
    /// The user name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub username: String,
    /// The user's uid.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The user's groups.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Further attributes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

/// What the event records about how the user was authenticated.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationMetadata {
    /// The verb that allowed a constrained impersonation (`impersonate:user-info`, ...).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub impersonation_constraint: String,
}

/// The object a resource request is about.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// The resource (`pods`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource: String,
    /// The namespace.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The object's name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The object's uid, when the request body names it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The API group (empty for the core group).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// The API version.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The object's resourceVersion, when the request body names it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// The subresource (`status`, `log`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// The outcome, shaped like a `meta/v1` `Status`: the code, and for failures its status,
/// message and reason.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ResponseStatus {
    /// Always empty list metadata, as Kubernetes writes it.
    pub metadata: BTreeMap<String, String>,
    /// `Failure` for failures.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// What went wrong.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The machine-readable reason (`NotFound`, `Forbidden`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The HTTP status code.
    pub code: u16,
}

/// One audit event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// `Event`.
    pub kind: &'static str,
    /// `audit.<domain>/v1`.
    pub api_version: &'static str,
    /// The level the policy chose.
    pub level: Level,
    /// The request's id, the same for every stage (`Audit-Id`).
    #[serde(rename = "auditID")]
    pub audit_id: String,
    /// The stage this event records.
    pub stage: Stage,
    /// The request's path and query.
    #[serde(rename = "requestURI")]
    pub request_uri: String,
    /// The verb (`get`, `list`, `watch`, `create`, ... or the method of a non-resource request).
    pub verb: String,
    /// The authenticated user.
    pub user: EventUser,
    /// The user acted as, when the request impersonates one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impersonated_user: Option<EventUser>,
    /// How the authentication was allowed, when that is worth recording (a constrained
    /// impersonation's mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authentication_metadata: Option<AuthenticationMetadata>,
    /// `X-Forwarded-For`, `X-Real-Ip`, then the connection's peer address.
    #[serde(rename = "sourceIPs", skip_serializing_if = "Vec::is_empty")]
    pub source_ips: Vec<String>,
    /// The `User-Agent` header.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub user_agent: String,
    /// The object of a resource request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectReference>,
    /// The outcome (absent at RequestReceived).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_status: Option<ResponseStatus>,
    /// The request body at Request level and above, when it is JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_object: Option<serde_json::Value>,
    /// The response body at RequestResponse level, when it is JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_object: Option<serde_json::Value>,
    /// When the request arrived.
    #[serde(serialize_with = "micro_time")]
    pub request_received_timestamp: DateTime<Utc>,
    /// When this stage was reached.
    #[serde(serialize_with = "micro_time")]
    pub stage_timestamp: DateTime<Utc>,
    /// Annotations of the authorizer and later steps.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// A timestamp as `metav1.MicroTime` writes it: RFC 3339 with microseconds, in UTC.
pub fn format_micro_time(time: &DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Micros, true)
}

fn micro_time<S: serde::Serializer>(time: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_micro_time(time))
}

/// The `EventList` a webhook receives.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventList<'a> {
    /// `EventList`.
    pub kind: &'static str,
    /// `audit.<domain>/v1`.
    pub api_version: &'static str,
    /// Always empty list metadata.
    pub metadata: BTreeMap<String, String>,
    /// The events.
    pub items: &'a [Event],
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An event with id `id` whose request object holds `pad` bytes.
    pub(crate) fn sample(id: &str, pad: usize) -> Event {
        let at = DateTime::parse_from_rfc3339("2026-11-26T01:02:03.456789Z")
            .expect("time")
            .with_timezone(&Utc);
        Event {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level: Level::Request,
            audit_id: id.into(),
            stage: Stage::ResponseComplete,
            request_uri: "/api/v1/namespaces/default/configmaps".into(),
            verb: "create".into(),
            user: EventUser {
                username: "alice".into(),
                groups: vec!["system:authenticated".into()],
                ..EventUser::default()
            },
            impersonated_user: None,
            authentication_metadata: None,
            source_ips: vec!["10.0.0.1".into()],
            user_agent: String::new(),
            object_ref: Some(ObjectReference {
                resource: "configmaps".into(),
                namespace: "default".into(),
                api_version: "v1".into(),
                ..ObjectReference::default()
            }),
            response_status: Some(ResponseStatus {
                code: 201,
                ..ResponseStatus::default()
            }),
            request_object: Some(serde_json::json!({"data": "x".repeat(pad)})),
            response_object: None,
            request_received_timestamp: at,
            stage_timestamp: at,
            annotations: BTreeMap::new(),
        }
    }

    #[test]
    fn events_are_written_as_kubernetes_writes_them() {
        let written = serde_json::to_value(sample("id-1", 1)).expect("json");
        assert_eq!(
            written,
            serde_json::json!({
                "kind": "Event",
                "apiVersion": "audit.k8s.io/v1",
                "level": "Request",
                "auditID": "id-1",
                "stage": "ResponseComplete",
                "requestURI": "/api/v1/namespaces/default/configmaps",
                "verb": "create",
                "user": {"username": "alice", "groups": ["system:authenticated"]},
                "sourceIPs": ["10.0.0.1"],
                "objectRef": {"resource": "configmaps", "namespace": "default", "apiVersion": "v1"},
                "responseStatus": {"metadata": {}, "code": 201},
                "requestObject": {"data": "x"},
                "requestReceivedTimestamp": "2026-11-26T01:02:03.456789Z",
                "stageTimestamp": "2026-11-26T01:02:03.456789Z",
            })
        );
    }
}

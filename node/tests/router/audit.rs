//! The audit log through the whole API (issue 13, item 3): events at every level and stage
//! checked against the `audit.k8s.io/v1` Event schema, the `Audit-Id` header, watches,
//! failures, a panic, and the log backend keeping secrets and credentials out.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use apiary_api::ApiConfig;
use apiary_api::audit::AuditConfig;
use apiary_api::audit::Backend;
use apiary_api::audit::Event;
use apiary_api::audit::LogBackend;
use apiary_api::audit::LogFormat;
use apiary_api::audit::Policy;
use apiary_api::audit::Rotation;
use apiary_api::auth::Attributes;
use apiary_api::auth::Authorizer;
use apiary_api::auth::Decision;
use apiary_api::auth::SystemMastersAuthorizer;
use apiary_api::flavor::Flavor;
use axum::Router;
use axum::body::Body;
use http::Request;
use serde_json::Value;

use super::*;

/// Keeps every event as the JSON a log line would hold.
#[derive(Default)]
struct Captured(Mutex<Vec<Value>>);

#[async_trait::async_trait]
impl Backend for Captured {
    async fn process(&self, event: &Event) -> bool {
        let json = serde_json::to_value(event).expect("event serializes");
        self.0.lock().expect("lock").push(json);
        true
    }
}

impl Captured {
    fn take(&self) -> Vec<Value> {
        std::mem::take(&mut *self.0.lock().expect("lock"))
    }

    /// The events so far, once there are at least `n` (stages written after the response
    /// left, as a watch's ResponseComplete, come a moment later).
    async fn wait_for(&self, n: usize) -> Vec<Value> {
        for _ in 0..200 {
            if self.0.lock().expect("lock").len() >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.take()
    }
}

/// Panics when asked about the path `/api/v1/namespaces/default/configmaps/boom`.
struct Exploding;

#[async_trait::async_trait]
impl Authorizer for Exploding {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        assert_ne!(attributes.request.name, "boom", "authorizer exploded");
        Decision::NoOpinion(String::new())
    }
}

fn policy(rules: &str) -> Arc<Policy> {
    let text = format!("apiVersion: audit.k8s.io/v1\nkind: Policy\n{rules}");
    Arc::new(Policy::parse(&text, Flavor::Kubernetes).expect("policy"))
}

/// A router auditing by `rules` into the returned capture.
async fn audited(rules: &str) -> (Router, Arc<Captured>) {
    let captured = Arc::new(Captured::default());
    let audit = AuditConfig {
        policy: Some(policy(rules)),
        backends: vec![captured.clone()],
    };
    (audited_by(audit).await, captured)
}

async fn audited_by(audit: AuditConfig) -> Router {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config.authorizers = vec![Arc::new(Exploding), Arc::new(SystemMastersAuthorizer)];
    config.audit = audit;
    apiary_api::router(storage, config)
}

const ALL: &str = "rules:\n- level: {level}\n";

fn all_at(level: &str) -> String {
    ALL.replace("{level}", level)
}

/// Checks `event` against the `audit.k8s.io/v1` Event schema: required fields and their
/// types, fields only allowed at some levels and stages, the timestamp format, and no field
/// the schema does not have. Answers the stage.
fn check_event(event: &Value) -> String {
    let object = event
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {event}"));
    const FIELDS: [&str; 19] = [
        "kind",
        "apiVersion",
        "level",
        "auditID",
        "stage",
        "requestURI",
        "verb",
        "user",
        "impersonatedUser",
        "authenticationMetadata",
        "sourceIPs",
        "userAgent",
        "objectRef",
        "responseStatus",
        "requestObject",
        "responseObject",
        "requestReceivedTimestamp",
        "stageTimestamp",
        "annotations",
    ];
    for key in object.keys() {
        assert!(
            FIELDS.contains(&key.as_str()),
            "unknown field {key}: {event}"
        );
    }
    let text = |name: &str| -> &str {
        event[name]
            .as_str()
            .unwrap_or_else(|| panic!("{name} is not a string: {event}"))
    };
    assert_eq!(text("kind"), "Event");
    assert_eq!(text("apiVersion"), "audit.k8s.io/v1");
    let level = text("level");
    let rank = ["Metadata", "Request", "RequestResponse"]
        .iter()
        .position(|l| *l == level)
        .unwrap_or_else(|| panic!("bad level {level}"));
    uuid::Uuid::parse_str(text("auditID")).expect("auditID is a UUID");
    let stage = text("stage").to_owned();
    assert!(
        [
            "RequestReceived",
            "ResponseStarted",
            "ResponseComplete",
            "Panic"
        ]
        .contains(&stage.as_str()),
        "bad stage {stage}"
    );
    assert!(text("requestURI").starts_with('/'));
    assert!(!text("verb").is_empty());
    let check_user = |user: &Value| {
        assert!(user.is_object(), "user: {user}");
        if let Some(name) = user.get("username") {
            assert!(name.is_string(), "username: {user}");
        }
        for list in ["groups"] {
            if let Some(groups) = user.get(list) {
                assert!(
                    groups
                        .as_array()
                        .expect("array")
                        .iter()
                        .all(Value::is_string)
                );
            }
        }
        if let Some(extra) = user.get("extra") {
            assert!(
                extra
                    .as_object()
                    .expect("extra map")
                    .values()
                    .all(Value::is_array)
            );
        }
    };
    check_user(&event["user"]);
    if let Some(user) = event.get("impersonatedUser") {
        check_user(user);
    }
    if let Some(metadata) = event.get("authenticationMetadata") {
        assert!(
            metadata["impersonationConstraint"].is_string(),
            "authenticationMetadata: {metadata}"
        );
    }
    if let Some(ips) = event.get("sourceIPs") {
        for ip in ips.as_array().expect("sourceIPs array") {
            ip.as_str()
                .expect("ip")
                .parse::<std::net::IpAddr>()
                .expect("an IP");
        }
    }
    if event.get("userAgent").is_some() {
        text("userAgent");
    }
    if let Some(reference) = event.get("objectRef") {
        for (name, value) in reference.as_object().expect("objectRef object") {
            assert!(value.is_string(), "objectRef.{name}: {reference}");
        }
    }
    match event.get("responseStatus") {
        None => assert_eq!(stage, "RequestReceived", "responseStatus missing: {event}"),
        Some(status) => {
            assert_ne!(stage, "RequestReceived", "{event}");
            let code = status["code"].as_u64().expect("code");
            assert!((100..600).contains(&code));
            assert!(status["metadata"].is_object());
            if code >= 400 {
                assert_eq!(status["status"], "Failure", "{status}");
            }
        }
    }
    if let Some(request) = event.get("requestObject") {
        assert!(rank >= 1, "requestObject at {level}");
        assert!(request.is_object(), "requestObject is an object: {request}");
        assert_ne!(stage, "RequestReceived");
    }
    if let Some(response) = event.get("responseObject") {
        assert_eq!(rank, 2, "responseObject at {level}");
        assert!(
            response.is_object(),
            "responseObject is an object: {response}"
        );
        assert_eq!(stage, "ResponseComplete");
    }
    let time = |name: &str| {
        let value = text(name);
        let fraction = value
            .split_once('.')
            .and_then(|(_, f)| f.strip_suffix('Z'))
            .unwrap_or_else(|| panic!("{name} {value} is not UTC with a fraction"));
        assert_eq!(fraction.len(), 6, "{name} {value} has microseconds");
        chrono::DateTime::parse_from_rfc3339(value).expect("RFC 3339")
    };
    assert!(time("stageTimestamp") >= time("requestReceivedTimestamp"));
    if let Some(annotations) = event.get("annotations") {
        assert!(
            annotations
                .as_object()
                .expect("map")
                .values()
                .all(Value::is_string)
        );
    }
    stage
}

fn stages(events: &[Value]) -> Vec<String> {
    events.iter().map(check_event).collect()
}

fn request(
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Request<Body> {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json");
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let mut req = req
        .body(Body::from(body.unwrap_or_default().to_owned()))
        .expect("request");
    req.extensions_mut().insert(admin());
    req
}

fn audit_id(reply: &Reply) -> String {
    let id = reply.headers.get("audit-id").expect("Audit-Id header");
    id.to_str().expect("text").to_owned()
}

#[tokio::test]
async fn metadata_level_records_who_did_what_to_which_object() {
    let (app, captured) = audited(&all_at("Metadata")).await;
    let req = request(
        "POST",
        CM_PATH,
        Some(&cm("a")),
        &[
            ("user-agent", "kubectl/v1.37"),
            ("x-forwarded-for", "10.1.2.3"),
        ],
    );
    let reply = send(&app, req).await;
    assert_eq!(reply.status, StatusCode::CREATED);
    let events = captured.take();
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    let id = audit_id(&reply);
    for event in &events {
        assert_eq!(event["auditID"], id.as_str());
        assert_eq!(event["level"], "Metadata");
        assert_eq!(event["verb"], "create");
        assert_eq!(event["requestURI"], CM_PATH);
        assert_eq!(event["user"]["username"], "admin");
        assert_eq!(event["userAgent"], "kubectl/v1.37");
        assert_eq!(event["sourceIPs"], serde_json::json!(["10.1.2.3"]));
        assert!(event.get("requestObject").is_none());
    }
    let complete = &events[1];
    assert_eq!(complete["responseStatus"]["code"], 201);
    // The name comes from the body when the path has none.
    assert_eq!(
        complete["objectRef"],
        serde_json::json!({"resource": "configmaps", "namespace": "default", "name": "a", "apiVersion": "v1"})
    );
    assert_eq!(
        complete["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
}

// R-ACC-157: an impersonated request is audited with the impersonator as `user` and the
// impersonated user as `impersonatedUser` (from the stage after impersonation on), with the
// constraint that allowed it; it is authorized as the impersonated user.
#[tokio::test]
async fn impersonated_requests_record_both_users() {
    let (app, captured) = audited(&all_at("Metadata")).await;
    let headers = [("impersonate-user", "alice"), ("impersonate-group", "dev")];
    let reply = send(&app, request("GET", CM_PATH, None, &headers)).await;
    assert_status(&reply, 403, "Forbidden");
    let events = captured.take();
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    assert!(events[0].get("impersonatedUser").is_none());
    let complete = &events[1];
    assert_eq!(complete["user"]["username"], "admin");
    assert_eq!(
        complete["impersonatedUser"],
        serde_json::json!({"username": "alice", "groups": ["dev", "system:authenticated"]})
    );
    assert_eq!(
        complete["authenticationMetadata"],
        serde_json::json!({"impersonationConstraint": "impersonate:user-info"})
    );
    assert_eq!(complete["responseStatus"]["code"], 403);
    assert_eq!(
        complete["annotations"]["authorization.k8s.io/decision"],
        "forbid"
    );
}

#[tokio::test]
async fn request_levels_add_the_request_then_the_response_object() {
    let (app, captured) = audited(&all_at("Request")).await;
    let reply = send(&app, request("POST", CM_PATH, Some(&cm("b")), &[])).await;
    assert_eq!(reply.status, StatusCode::CREATED);
    let events = captured.take();
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    assert_eq!(events[1]["requestObject"]["metadata"]["name"], "b");
    assert!(events[1].get("responseObject").is_none());

    let (app, captured) = audited(&all_at("RequestResponse")).await;
    let reply = send(&app, request("POST", CM_PATH, Some(&cm("c")), &[])).await;
    assert_eq!(reply.status, StatusCode::CREATED);
    let events = captured.take();
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    let response = &events[1]["responseObject"];
    assert_eq!(response["kind"], "ConfigMap");
    assert_eq!(response["metadata"]["uid"], reply.json()["metadata"]["uid"]);
    // The response still reaches the client whole.
    assert_eq!(reply.json()["data"]["a"], "1");
}

#[tokio::test]
async fn a_watch_records_response_started_then_complete_when_it_ends() {
    let (app, captured) = audited(&all_at("Metadata")).await;
    let path = format!("{CM_PATH}?watch=true&timeoutSeconds=1");
    let reply = send(&app, request("GET", &path, None, &[])).await;
    assert_eq!(reply.status, StatusCode::OK);
    let events = captured.wait_for(3).await;
    assert_eq!(
        stages(&events),
        ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    );
    assert!(events.iter().all(|e| e["verb"] == "watch"));
    assert_eq!(events[1]["responseStatus"]["code"], 200);
    assert!(events[2]["stageTimestamp"].as_str() >= events[1]["stageTimestamp"].as_str());
    // A list is not long-running: no ResponseStarted.
    let reply = send(&app, request("GET", CM_PATH, None, &[])).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        stages(&captured.take()),
        ["RequestReceived", "ResponseComplete"]
    );
}

#[tokio::test]
async fn failures_record_their_status_and_the_authorization_decision() {
    let (app, captured) = audited(&all_at("RequestResponse")).await;
    let reply = call(&app, "GET", CM_PATH, None, Some(bob())).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    let events = captured.take();
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    let forbidden = &events[1];
    assert_eq!(forbidden["user"]["username"], "bob");
    assert_eq!(forbidden["responseStatus"]["code"], 403);
    assert_eq!(forbidden["responseStatus"]["reason"], "Forbidden");
    assert_eq!(
        forbidden["annotations"]["authorization.k8s.io/decision"],
        "forbid"
    );
    let reason = forbidden["annotations"]["authorization.k8s.io/reason"]
        .as_str()
        .expect("reason");
    assert!(
        reason.contains("cannot list resource \"configmaps\""),
        "{reason}"
    );

    let reply = send(
        &app,
        request("GET", &format!("{CM_PATH}/missing"), None, &[]),
    )
    .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    let events = captured.take();
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    let status = &events[1]["responseStatus"];
    assert_eq!(status["code"], 404);
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(status["message"], "configmaps \"missing\" not found");
    assert_eq!(events[1]["objectRef"]["name"], "missing");
}

#[tokio::test]
async fn a_panic_records_the_panic_stage_and_answers_500_with_the_audit_id() {
    let (app, captured) = audited(&all_at("Metadata")).await;
    let reply = send(&app, request("GET", &format!("{CM_PATH}/boom"), None, &[])).await;
    assert_eq!(reply.status, StatusCode::INTERNAL_SERVER_ERROR);
    let events = captured.take();
    assert_eq!(stages(&events), ["RequestReceived", "Panic"]);
    assert_eq!(events[1]["auditID"], audit_id(&reply).as_str());
    assert_eq!(events[1]["responseStatus"]["code"], 500);
    let message = events[1]["responseStatus"]["message"]
        .as_str()
        .expect("message");
    assert!(message.starts_with("APIServer panic'd: "), "{message}");
}

#[tokio::test]
async fn omitted_stages_users_and_non_resource_rules_shape_what_is_recorded() {
    let rules = "omitStages: [RequestReceived]\nrules:\n\
        - level: None\n  users: [bob]\n\
        - level: Request\n  nonResourceURLs: [/api, /apis*]\n\
        - level: Metadata\n  resources: [{group: \"\", resources: [configmaps]}]\n";
    let (app, captured) = audited(rules).await;
    assert_eq!(
        send(&app, request("GET", "/api", None, &[])).await.status,
        StatusCode::OK
    );
    let events = captured.take();
    assert_eq!(stages(&events), ["ResponseComplete"]);
    assert_eq!(events[0]["level"], "Request");
    assert_eq!(events[0]["verb"], "get");
    assert!(events[0].get("objectRef").is_none());
    call(&app, "GET", CM_PATH, None, Some(bob())).await;
    // Secrets match no rule; bob matches None.
    send(
        &app,
        request("GET", "/api/v1/namespaces/default/secrets", None, &[]),
    )
    .await;
    assert!(captured.take().is_empty());
}

#[tokio::test]
async fn the_audit_id_header_is_on_every_response_and_a_client_id_is_kept() {
    let (app, captured) = audited(&all_at("Metadata")).await;
    let given = "0d3f2c4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f";
    let reply = send(&app, request("GET", CM_PATH, None, &[("audit-id", given)])).await;
    assert_eq!(audit_id(&reply), given);
    assert!(captured.take().iter().all(|e| e["auditID"] == given));
    // Without auditing, every response still carries a fresh id.
    let (plain, _) = app_in(Flavor::Kubernetes).await;
    let first = audit_id(&send(&plain, request("GET", CM_PATH, None, &[])).await);
    let second = audit_id(&send(&plain, request("GET", "/healthz", None, &[])).await);
    uuid::Uuid::parse_str(&first).expect("uuid");
    uuid::Uuid::parse_str(&second).expect("uuid");
    assert_ne!(first, second);
}

#[tokio::test]
async fn the_log_backend_writes_json_lines_without_secret_data_or_credentials() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("audit.log");
    let log = LogBackend::file(&path, Rotation::default(), LogFormat::Json).expect("log");
    let rules = "rules:\n\
        - level: Metadata\n  resources: [{group: \"\", resources: [secrets]}]\n\
        - level: RequestResponse\n";
    let app = audited_by(AuditConfig {
        policy: Some(policy(rules)),
        backends: vec![Arc::new(log)],
    })
    .await;
    let secret = r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},
        "stringData":{"password":"hunter2-plain"},"data":{"token":"c2VjcmV0LWJhc2U2NA=="}}"#;
    let bearer = [("authorization", "Bearer sekret-bearer-token")];
    let path_s = "/api/v1/namespaces/default/secrets";
    let created = send(&app, request("POST", path_s, Some(secret), &bearer)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let read = send(&app, request("GET", &format!("{path_s}/s"), None, &bearer)).await;
    assert_eq!(read.status, StatusCode::OK);
    send(&app, request("POST", CM_PATH, Some(&cm("d")), &bearer)).await;
    let text = std::fs::read_to_string(&path).expect("log");
    for needle in [
        "hunter2",
        "c2VjcmV0LWJhc2U2NA",
        "sekret-bearer-token",
        "Bearer",
    ] {
        assert!(!text.contains(needle), "{needle} in the audit log:\n{text}");
    }
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        stages(&events),
        ["RequestReceived", "ResponseComplete"].repeat(3)
    );
    assert_eq!(events[1]["level"], "Metadata");
    assert_eq!(events[1]["objectRef"]["name"], "s");
    // The ConfigMap is at RequestResponse: both objects are there.
    assert_eq!(events[5]["requestObject"]["data"]["a"], "1");
    assert_eq!(events[5]["responseObject"]["data"]["a"], "1");
}

#[tokio::test]
async fn a_failed_authentication_is_recorded_once_at_response_started() {
    let (app, captured) = audited(&all_at("RequestResponse")).await;
    let junk = ClientCertificate::new(b"junk".to_vec());
    let reply = call(&app, "GET", CM_PATH, None, Some(junk)).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    let events = captured.take();
    assert_eq!(stages(&events), ["ResponseStarted"]);
    let event = &events[0];
    assert_eq!(event["user"], serde_json::json!({}));
    assert_eq!(event["responseStatus"]["code"], 401);
    assert_eq!(event["responseStatus"]["reason"], "Unauthorized");
    assert_eq!(event["auditID"], audit_id(&reply).as_str());
    assert!(event.get("annotations").is_none());
}

// R-VER-049: a request to a deprecated version (core v1 Endpoints, deprecated in 1.33 with
// no removal release) is annotated `k8s.io/deprecated: "true"` at ResponseComplete; a request
// to a version that is not deprecated is not.
#[tokio::test]
async fn a_deprecated_version_annotates_the_event() {
    let (app, captured) = audited(&all_at("Metadata")).await;
    let reply = send(
        &app,
        request("GET", "/api/v1/namespaces/default/endpoints", None, &[]),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let events = captured.take();
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    let annotations = &events[1]["annotations"];
    assert_eq!(annotations["k8s.io/deprecated"], "true", "{annotations}");
    assert!(annotations.get("k8s.io/removed-release").is_none());

    let reply = send(&app, request("GET", CM_PATH, None, &[])).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let events = captured.take();
    assert!(events[1]["annotations"].get("k8s.io/deprecated").is_none());
}

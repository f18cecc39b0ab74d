//! Router tests: the whole HTTP API through `tower::ServiceExt::oneshot`, over the node's
//! storage adapter ([`ReplicaStorage`]) on a one-replica store without raft ([`LocalReplica`]).
//! Each test names the CHECKLIST requirements it proves.

mod admission;
mod admission_certificates;
mod admission_default_ingress_class;
mod admission_default_storage_class;
mod admission_default_toleration_seconds;
mod admission_limit_ranger;
mod admission_namespace_lifecycle;
mod admission_node_restriction;
mod admission_persistent_volume_claim_resize;
mod admission_pod_security;
mod admission_priority;
mod admission_resource_quota;
mod admission_runtime_class;
mod admission_service_account;
mod admission_storage_object_in_use_protection;
mod admission_taint_nodes_by_condition;
mod admission_webhooks;
mod apply;
mod audit;
mod auth;
mod authorization_coverage;
mod bootstrap_tokens;
mod cbor;
mod compression;
mod conformance;
mod controller_client;
mod corrupt;
mod crud;
mod custom_resource_apply;
mod custom_resource_definition_lifecycle;
mod custom_resource_definitions;
mod custom_resource_versions;
mod custom_resources;
mod decode;
mod decode_fuzz;
mod decode_limits;
mod deletion;
mod deprecation;
mod discovery;
mod dry_run;
mod errors;
mod field_validation;
mod flowcontrol;
mod hardening;
mod health;
mod impersonation;
mod list;
mod list_stream;
mod local_reads;
mod metrics;
mod mutating_admission_policy;
mod namespace_lifecycle;
mod negotiation;
mod node_authorizer;
mod openapi;
mod owner_references;
mod patch;
mod protobuf;
mod rbac;
mod rbac_policy;
mod reviews;
mod service;
mod service_account_controllers;
mod serviceaccount_tokens;
mod shared_storage;
mod status_rules;
mod store;
mod subresources;
mod table;
mod tokens;
mod validating_admission_policy;
mod validating_admission_policy_equivalent;
mod validating_admission_policy_params;
mod validation;
mod watch;
mod webhook_configurations;

use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use http::Request;
use http::StatusCode;
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

use apiary_api::ApiConfig;
use apiary_api::RandomSource;
use apiary_api::SystemClock;
use apiary_api::auth::ClientCertificate;
use apiary_api::bootstrap::ensure_system_namespaces;
use apiary_api::flavor::Flavor;
use apiary_api::health::Readiness;
use apiary_api::storage::ChangeBatch;
use apiary_api::storage::ReadConsistency;
use apiary_api::storage::Revision;
use apiary_api::storage::Storage;
use apiary_api::storage::WatchStream;
use apiary_node::backend::ReplicaStorage;
use apiary_node::testing::LocalReplica;

/// The storage under test: the node's adapter over a one-replica store.
type Backend = ReplicaStorage<Arc<LocalReplica>>;

/// How long a read of a revision not applied yet waits. The one replica applies every write
/// before answering it, so a revision it has not reached never comes: waiting the production
/// bound would only slow the tests of `TooLargeRevision` down.
const FUTURE_REVISION_WAIT: Duration = Duration::from_millis(20);

/// The adapter over a fresh, empty one-replica store (no bootstrap), and that replica.
fn fresh() -> (Backend, Arc<LocalReplica>) {
    let replica = Arc::new(LocalReplica::default());
    let storage = ReplicaStorage::new(replica.clone()).with_wait_bound(FUTURE_REVISION_WAIT);
    (storage, replica)
}

/// The adapter over a fresh, empty one-replica store (no bootstrap).
fn empty_backend() -> Backend {
    fresh().0
}

/// The adapter over a fresh one-replica store with the system namespaces created by the
/// bootstrap every replica runs, each with its `default` ServiceAccount (which the
/// `serviceaccount` controller creates in a cluster; router tests run no controllers), and
/// that replica.
async fn backend_in(flavor: Flavor) -> (Arc<Backend>, Arc<LocalReplica>) {
    let (storage, replica) = fresh();
    ensure_system_namespaces(&storage, flavor, &SystemClock, &RandomSource::seeded(0))
        .await
        .expect("bootstrap");
    let namespaces = [
        "default",
        flavor.system_namespace(),
        flavor.public_namespace(),
        flavor.node_lease_namespace(),
    ];
    for namespace in namespaces {
        default_account(&storage, flavor, namespace).await;
    }
    (Arc::new(storage), replica)
}

/// Creates the `default` ServiceAccount of `namespace` as the `serviceaccount` controller
/// does, so pods can be created there.
async fn default_account(storage: &dyn Storage, flavor: Flavor, namespace: &str) {
    let registry = apiary_api::registry::Registry::builtin(flavor);
    let accounts = (registry.builtin_store("", "v1", "serviceaccounts")).expect("served");
    let body = r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}"#;
    accounts
        .create(
            storage,
            namespace,
            body.as_bytes(),
            chrono::Utc::now(),
            apiary_api::registry::WriteOptions::default(),
        )
        .await
        .expect("the default ServiceAccount");
}

/// What tests read of a store's state, through the [`Storage`] trait.
#[async_trait::async_trait]
trait Inspect {
    /// Every key currently stored.
    async fn keys(&self) -> Vec<String>;
    /// The newest revision.
    async fn revision(&self) -> Revision;
}

#[async_trait::async_trait]
impl<S: Storage + ?Sized> Inspect for S {
    async fn keys(&self) -> Vec<String> {
        let all = self
            .list("", None, 0, ReadConsistency::Linearizable)
            .await
            .expect("list every key");
        all.items.into_iter().map(|o| o.key).collect()
    }

    async fn revision(&self) -> Revision {
        self.list("", None, 1, ReadConsistency::Linearizable)
            .await
            .expect("read the revision")
            .revision
    }
}

fn cert(cn: &str, org: Option<&str>) -> Vec<u8> {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    if let Some(org) = org {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, org);
    }
    let key = rcgen::KeyPair::generate().expect("key");
    params.self_signed(&key).expect("cert").der().to_vec()
}

/// A `system:masters` member.
fn admin() -> ClientCertificate {
    static DER: OnceLock<Vec<u8>> = OnceLock::new();
    ClientCertificate::new(
        DER.get_or_init(|| cert("admin", Some("system:masters")))
            .clone(),
    )
}

/// An authenticated user with no permissions.
fn bob() -> ClientCertificate {
    static DER: OnceLock<Vec<u8>> = OnceLock::new();
    ClientCertificate::new(DER.get_or_init(|| cert("bob", Some("dev"))).clone())
}

/// A replica that is always ready: these tests run without raft.
struct AlwaysReady;

impl Readiness for AlwaysReady {
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// A router over a fresh store with the system namespaces created.
async fn app() -> (Router, Arc<Backend>) {
    app_in(Flavor::Kubernetes).await
}

/// A router over a fresh store in `flavor`, with the system namespaces created.
async fn app_in(flavor: Flavor) -> (Router, Arc<Backend>) {
    let (router, storage, _) = app_on_replica(flavor).await;
    (router, storage)
}

/// As [`app_in`], with the replica under the store, to compact it or inject failures.
async fn app_on_replica(flavor: Flavor) -> (Router, Arc<Backend>, Arc<LocalReplica>) {
    let (storage, replica) = backend_in(flavor).await;
    let config = ApiConfig::new(flavor, Arc::new(AlwaysReady));
    (
        apiary_api::router(storage.clone(), config),
        storage,
        replica,
    )
}

/// A response: status, headers, body bytes.
struct Reply {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

async fn send(app: &Router, request: Request<Body>) -> Reply {
    let res = app.clone().oneshot(request).await.expect("infallible");
    let status = res.status();
    let headers = res.headers().clone();
    let body = res
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

/// The reply's `Content-Type` (empty when absent).
fn content_type(reply: &Reply) -> &str {
    reply
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// GET `path` as the admin with `headers`.
async fn get_with(app: &Router, path: &str, headers: &[(&str, &str)]) -> Reply {
    let mut req = Request::builder().method("GET").uri(path);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let mut req = req.body(Body::empty()).expect("request");
    req.extensions_mut().insert(admin());
    send(app, req).await
}

/// `method path` with `body` as `who` (`None`: no credentials).
async fn call(
    app: &Router,
    method: &str,
    path: &str,
    body: Option<&str>,
    who: Option<ClientCertificate>,
) -> Reply {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(body.unwrap_or_default().to_owned()))
        .expect("request");
    if let Some(c) = who {
        req.extensions_mut().insert(c);
    }
    send(app, req).await
}

/// `method path` with `body` as the admin.
async fn admin_call(app: &Router, method: &str, path: &str, body: Option<&str>) -> Reply {
    call(app, method, path, body, Some(admin())).await
}

/// `method path` with `body` of media type `content_type`, as the admin.
async fn send_as(app: &Router, method: &str, path: &str, content_type: &str, body: &str) -> Reply {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(Body::from(body.to_owned()))
        .expect("request");
    req.extensions_mut().insert(admin());
    send(app, req).await
}

/// POST `body` to `path` as the admin, which must answer 201; the created object.
async fn created(app: &Router, path: &str, body: &str) -> Value {
    let reply = admin_call(app, "POST", path, Some(body)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    reply.json()
}

/// GET `path` as the admin, which must answer 200; the object read.
async fn fetched(app: &Router, path: &str) -> Value {
    let reply = admin_call(app, "GET", path, None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()
}

/// The `Warning` headers of `reply`, in order.
fn warnings(reply: &Reply) -> Vec<String> {
    reply
        .headers
        .get_all(http::header::WARNING)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect()
}

/// Every stored key with its bytes, and the revision: what a dry run must not change.
async fn snapshot(storage: &Backend) -> (u64, Vec<(String, Vec<u8>)>) {
    let mut objects = Vec::new();
    for key in storage.keys().await {
        let found = storage
            .get(&key, ReadConsistency::Linearizable)
            .await
            .expect("get")
            .expect("listed key exists");
        objects.push((key, found.value.to_vec()));
    }
    (storage.revision().await, objects)
}

/// Creates the ConfigMap `z` for real and asserts that `watch` sees it as its next change,
/// alone: what proves the dry runs before it left no event. Answers the create's reply and
/// the batch.
async fn real_create_is_next_event(
    app: &Router,
    watch: &mut dyn WatchStream,
) -> (Reply, ChangeBatch) {
    let real = admin_call(app, "POST", CM_PATH, Some(&cm("z"))).await;
    assert_eq!(real.status, StatusCode::CREATED);
    let batch = tokio::time::timeout(Duration::from_secs(5), watch.next())
        .await
        .expect("the real write's event")
        .expect("watch")
        .expect("open");
    let keys: Vec<&str> = batch
        .changes
        .iter()
        .map(|c| c.object.key.as_str())
        .collect();
    assert_eq!(keys, ["/registry/core/configmaps/default/z"]);
    (real, batch)
}

fn assert_status(reply: &Reply, code: u16, reason: &str) -> Value {
    assert_eq!(reply.status.as_u16(), code, "{}", reply.text());
    let s = reply.json();
    assert_eq!(s["kind"], "Status", "{s}");
    assert_eq!(s["apiVersion"], "v1");
    assert_eq!(s["status"], "Failure");
    assert_eq!(s["reason"], reason, "{s}");
    assert_eq!(s["code"], code);
    assert_eq!(
        reply.headers.get("content-type").map(|v| v.as_bytes()),
        Some(&b"application/json"[..])
    );
    s
}

/// The condition `kind` of `obj`'s `status.conditions` (`Null` when absent).
fn condition(obj: &Value, kind: &str) -> Value {
    (obj["status"]["conditions"].as_array().into_iter().flatten())
        .find(|c| c["type"] == kind)
        .cloned()
        .unwrap_or(Value::Null)
}

/// Polls `path` as the admin, moving the controllers' change signal each round, until `done`
/// holds for the reply (at most 400 rounds of 50 ms); `what` names the goal in the panic.
async fn poll_until(
    app: &Router,
    changes: &tokio::sync::watch::Sender<u64>,
    path: &str,
    what: &str,
    done: impl Fn(&Reply) -> bool,
) -> Reply {
    let mut last = String::new();
    for round in 0..400 {
        changes.send_replace(round);
        let reply = admin_call(app, "GET", path, None).await;
        if done(&reply) {
            return reply;
        }
        last = reply.text();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not reached in time; last {last}");
}

const CM_PATH: &str = "/api/v1/namespaces/default/configmaps";

fn cm(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"a":"1"}}}}"#
    )
}

//! The subresources with handlers of their own, through the router: `scale` of the
//! replicated workloads, `binding` of pods (and the `bindings` collection), `eviction` of
//! pods under disruption budgets, `token` of service accounts; their discovery entries.

use std::sync::Arc;
use std::sync::OnceLock;

use jsonwebtoken::Algorithm;
use jsonwebtoken::DecodingKey;
use jsonwebtoken::Validation;
use rsa::RsaPrivateKey;
use rsa::pkcs8::EncodePrivateKey;
use rsa::pkcs8::EncodePublicKey;
use rsa::pkcs8::LineEnding;
use serde_json::Value;
use serde_json::json;

use super::patch::JSON_PATCH;
use super::patch::MERGE_PATCH;
use super::patch::patch;
use super::*;
use apiary_api::RsaTokenSigner;

pub(super) const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
pub(super) const PODS: &str = "/api/v1/namespaces/default/pods";

pub(super) fn deployment(name: &str, replicas: i64) -> String {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    })
    .to_string()
}

pub(super) fn pod(name: &str, labels: Value) -> String {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    })
    .to_string()
}

pub(super) fn scale(name: &str, replicas: i64, rv: Option<&str>) -> String {
    let mut metadata = json!({"name": name});
    if let Some(rv) = rv {
        metadata["resourceVersion"] = rv.into();
    }
    json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": metadata,
        "spec": {"replicas": replicas}})
    .to_string()
}

// R-RES-078, R-RES-082: GET of `deployments/<n>/scale` answers an autoscaling/v1 Scale of
// the parent; PUT changes the parent's replicas through its update (generation bumps).
#[tokio::test]
async fn scale_reads_and_writes_the_parent_replicas() {
    let (app, _) = app().await;
    let d = created(&app, DEPLOYMENTS, &deployment("web", 1)).await;
    let path = format!("{DEPLOYMENTS}/web/scale");
    let s = fetched(&app, &path).await;
    assert_eq!(s["kind"], "Scale");
    assert_eq!(s["apiVersion"], "autoscaling/v1");
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        assert_eq!(s["metadata"][field], d["metadata"][field], "{field}: {s}");
    }
    assert_eq!(s["spec"], json!({"replicas": 1}));
    assert_eq!(s["status"], json!({"replicas": 0, "selector": "app=web"}));

    let rv = s["metadata"]["resourceVersion"].as_str().expect("rv");
    let put = admin_call(&app, "PUT", &path, Some(&scale("web", 3, Some(rv)))).await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.text());
    let new_scale = put.json();
    assert_eq!(new_scale["spec"]["replicas"], 3);
    assert_ne!(
        new_scale["metadata"]["resourceVersion"],
        s["metadata"]["resourceVersion"]
    );
    let after = fetched(&app, &format!("{DEPLOYMENTS}/web")).await;
    assert_eq!(after["spec"]["replicas"], 3);
    assert_eq!(after["metadata"]["generation"], 2);
    assert_eq!(
        after["metadata"]["resourceVersion"],
        new_scale["metadata"]["resourceVersion"]
    );

    // Without a resourceVersion the update is unconditional.
    let put = admin_call(&app, "PUT", &path, Some(&scale("web", 2, None))).await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.text());
    assert_eq!(fetched(&app, &path).await["spec"]["replicas"], 2);
}

// R-RES-082, R-RES-090: a PATCH of `scale` patches the Scale and sets the parent's replicas
// (what `kubectl scale` sends); a patched stale resourceVersion is 409, a negative count 422.
#[tokio::test]
async fn scale_patches_set_the_parent_replicas() {
    let (app, _) = app().await;
    created(&app, DEPLOYMENTS, &deployment("web", 1)).await;
    let path = format!("{DEPLOYMENTS}/web/scale");
    let merged = patch(&app, &path, MERGE_PATCH, r#"{"spec":{"replicas":4}}"#).await;
    assert_eq!(merged.status, StatusCode::OK, "{}", merged.text());
    assert_eq!(merged.json()["spec"]["replicas"], 4);
    assert_eq!(
        fetched(&app, &format!("{DEPLOYMENTS}/web")).await["spec"]["replicas"],
        4
    );

    let ops = r#"[{"op":"replace","path":"/spec/replicas","value":2}]"#;
    let replaced = patch(&app, &path, JSON_PATCH, ops).await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.text());
    assert_eq!(
        fetched(&app, &format!("{DEPLOYMENTS}/web")).await["spec"]["replicas"],
        2
    );

    let stale = r#"{"metadata":{"resourceVersion":"1"},"spec":{"replicas":5}}"#;
    assert_status(
        &patch(&app, &path, MERGE_PATCH, stale).await,
        409,
        "Conflict",
    );
    let negative = r#"{"spec":{"replicas":-1}}"#;
    assert_status(
        &patch(&app, &path, MERGE_PATCH, negative).await,
        422,
        "Invalid",
    );
    assert_eq!(
        fetched(&app, &format!("{DEPLOYMENTS}/web")).await["spec"]["replicas"],
        2
    );
}

// R-RES-082: a stale resourceVersion is 409 on the parent, a negative count 422 on
// `Scale.autoscaling`, another name 400, a missing parent 404.
#[tokio::test]
async fn scale_refusals() {
    let (app, _) = app().await;
    created(&app, DEPLOYMENTS, &deployment("web", 1)).await;
    let path = format!("{DEPLOYMENTS}/web/scale");
    let stale = admin_call(&app, "PUT", &path, Some(&scale("web", 3, Some("1")))).await;
    let s = assert_status(&stale, 409, "Conflict");
    assert_eq!(s["details"]["kind"], "deployments");
    assert_eq!(s["details"]["group"], "apps");

    let negative = admin_call(&app, "PUT", &path, Some(&scale("web", -1, None))).await;
    let s = assert_status(&negative, 422, "Invalid");
    assert_eq!(
        s["message"],
        "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    );
    assert_eq!(s["details"]["causes"][0]["field"], "spec.replicas");

    let renamed = admin_call(&app, "PUT", &path, Some(&scale("other", 3, None))).await;
    assert_status(&renamed, 400, "BadRequest");
    let typed = admin_call(
        &app,
        "PUT",
        &path,
        Some(r#"{"metadata":{"name":"web"},"spec":{"replicas":"x"}}"#),
    )
    .await;
    assert_status(&typed, 400, "BadRequest");

    let missing = admin_call(&app, "GET", &format!("{DEPLOYMENTS}/nope/scale"), None).await;
    let s = assert_status(&missing, 404, "NotFound");
    assert_eq!(s["message"], "deployments.apps \"nope\" not found");
    let missing = admin_call(
        &app,
        "PUT",
        &format!("{DEPLOYMENTS}/nope/scale"),
        Some(&scale("nope", 1, None)),
    )
    .await;
    assert_status(&missing, 404, "NotFound");
    assert_eq!(fetched(&app, &path).await["spec"]["replicas"], 1);
}

// R-RES-192, R-RES-193: a dry-run scale answers the new Scale and stores nothing.
#[tokio::test]
async fn dry_run_scale_stores_nothing() {
    let (app, storage) = app().await;
    created(&app, DEPLOYMENTS, &deployment("web", 1)).await;
    let revision = storage.revision().await;
    let path = format!("{DEPLOYMENTS}/web/scale");
    let dry = admin_call(
        &app,
        "PUT",
        &format!("{path}?dryRun=All"),
        Some(&scale("web", 4, None)),
    )
    .await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.text());
    assert_eq!(dry.json()["spec"]["replicas"], 4);
    assert_eq!(storage.revision().await, revision);
    assert_eq!(fetched(&app, &path).await["spec"]["replicas"], 1);
}

// R-RES-082: replication controllers, replica sets and stateful sets serve `scale` too; a
// replication controller's selector map becomes the selector string.
#[tokio::test]
async fn scale_of_every_replicated_kind() {
    let (app, _) = app().await;
    let template = json!({"metadata": {"labels": {"app": "a", "tier": "t"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let rc = json!({"apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"name": "rc"},
        "spec": {"replicas": 2, "selector": {"tier": "t", "app": "a"}, "template": template}});
    created(
        &app,
        "/api/v1/namespaces/default/replicationcontrollers",
        &rc.to_string(),
    )
    .await;
    let s = fetched(
        &app,
        "/api/v1/namespaces/default/replicationcontrollers/rc/scale",
    )
    .await;
    assert_eq!(s["spec"]["replicas"], 2);
    assert_eq!(s["status"]["selector"], "app=a,tier=t");
    for (plural, kind) in [
        ("replicasets", "ReplicaSet"),
        ("statefulsets", "StatefulSet"),
    ] {
        let mut spec = json!({"replicas": 5, "selector": {"matchLabels": {"app": "a"}},
            "template": template});
        if kind == "StatefulSet" {
            spec["serviceName"] = "svc".into();
        }
        let body = json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "x"},
            "spec": spec});
        let collection = format!("/apis/apps/v1/namespaces/default/{plural}");
        created(&app, &collection, &body.to_string()).await;
        let s = fetched(&app, &format!("{collection}/x/scale")).await;
        assert_eq!(s["spec"]["replicas"], 5, "{plural}");
        assert_eq!(s["status"]["selector"], "app=a", "{plural}");
        let put = admin_call(
            &app,
            "PUT",
            &format!("{collection}/x/scale"),
            Some(&scale("x", 0, None)),
        )
        .await;
        assert_eq!(put.status, StatusCode::OK, "{plural}: {}", put.text());
        assert_eq!(
            fetched(&app, &format!("{collection}/x")).await["spec"]["replicas"],
            0
        );
    }
}

pub(super) fn binding(pod: &str, node: &str) -> String {
    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
    .to_string()
}

pub(super) fn assert_success(reply: &Reply) {
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert_eq!(
        reply.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})
    );
}

// R-RES-078, R-RES-082: POST of a Binding to `pods/<n>/binding` sets `spec.nodeName` and the
// PodScheduled condition, and answers a Status Success; a second binding is 409.
#[tokio::test]
async fn binding_assigns_a_pod_once() {
    let (app, _) = app().await;
    created(&app, PODS, &pod("p", json!({}))).await;
    let path = format!("{PODS}/p/binding");
    assert_success(&admin_call(&app, "POST", &path, Some(&binding("p", "n1"))).await);
    let p = fetched(&app, &format!("{PODS}/p")).await;
    assert_eq!(p["spec"]["nodeName"], "n1");
    assert_eq!(p["status"]["conditions"][0]["type"], "PodScheduled");
    assert_eq!(p["status"]["conditions"][0]["status"], "True");

    let again = admin_call(&app, "POST", &path, Some(&binding("p", "n2"))).await;
    let s = assert_status(&again, 409, "Conflict");
    assert_eq!(
        s["message"],
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\""
    );
    assert_eq!(
        fetched(&app, &format!("{PODS}/p")).await["spec"]["nodeName"],
        "n1"
    );
}

// R-RES-082: binding refusals: another name 400, a target that is no node 422, a missing pod
// 404; the core `bindings` collection binds the pod its body names.
#[tokio::test]
async fn binding_refusals_and_the_bindings_collection() {
    let (app, storage) = app().await;
    created(&app, PODS, &pod("p", json!({}))).await;
    let path = format!("{PODS}/p/binding");
    let renamed = admin_call(&app, "POST", &path, Some(&binding("q", "n1"))).await;
    let s = assert_status(&renamed, 400, "BadRequest");
    assert_eq!(
        s["message"],
        "name in URL does not match name in Binding object"
    );
    let no_node = json!({"metadata": {"name": "p"}, "target": {"kind": "Pod"}}).to_string();
    let s = assert_status(
        &admin_call(&app, "POST", &path, Some(&no_node)).await,
        422,
        "Invalid",
    );
    let fields: Vec<&Value> = s["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| &c["field"])
        .collect();
    assert_eq!(fields, [&json!("target.kind"), &json!("target.name")]);
    let missing = admin_call(
        &app,
        "POST",
        &format!("{PODS}/nope/binding"),
        Some(&binding("nope", "n1")),
    )
    .await;
    let s = assert_status(&missing, 404, "NotFound");
    assert_eq!(s["message"], "pods \"nope\" not found");

    let revision = storage.revision().await;
    let dry = admin_call(
        &app,
        "POST",
        &format!("{path}?dryRun=All"),
        Some(&binding("p", "n1")),
    )
    .await;
    assert_success(&dry);
    assert_eq!(
        storage.revision().await,
        revision,
        "a dry run stores nothing"
    );

    let collection = "/api/v1/namespaces/default/bindings";
    assert_success(&admin_call(&app, "POST", collection, Some(&binding("p", "n3"))).await);
    assert_eq!(
        fetched(&app, &format!("{PODS}/p")).await["spec"]["nodeName"],
        "n3"
    );
    let listed = admin_call(&app, "GET", collection, None).await;
    assert_status(&listed, 405, "MethodNotAllowed");
}

/// A 2048-bit RSA key made once per test run: its PKCS#8 PEM and its public key PEM.
fn signing_key() -> &'static (String, String) {
    static KEY: OnceLock<(String, String)> = OnceLock::new();
    KEY.get_or_init(|| {
        let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("key");
        let private = key.to_pkcs8_pem(LineEnding::LF).expect("pem").to_string();
        let public = key
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .expect("public pem");
        (private, public)
    })
}

/// A router like [`app`] whose tokens are signed with [`signing_key`].
async fn app_with_signer(flavor: Flavor) -> Router {
    let (storage, _) = backend_in(flavor).await;
    let mut config = ApiConfig::new(flavor, Arc::new(AlwaysReady));
    let signer = RsaTokenSigner::from_pem(
        signing_key().0.as_bytes(),
        "https://apiary.test",
        vec!["https://apiary.test".to_owned()],
    )
    .expect("signer");
    config.token_signer = Some(Arc::new(signer));
    apiary_api::router(storage, config)
}

const ACCOUNTS: &str = "/api/v1/namespaces/default/serviceaccounts";

// R-ACC-122, R-ACC-114, R-RES-082: POST of a TokenRequest to `serviceaccounts/<n>/token`
// answers a JWT signed RS256 that the public key verifies, naming the service account.
#[tokio::test]
async fn token_is_a_verifiable_jwt_for_the_service_account() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let app = app_with_signer(flavor).await;
        let sa = created(
            &app,
            ACCOUNTS,
            r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}}"#,
        )
        .await;
        let api_version = format!("authentication.{}/v1", flavor.group_domain());
        let request = json!({"apiVersion": api_version, "kind": "TokenRequest", "spec": {}});
        let reply = admin_call(
            &app,
            "POST",
            &format!("{ACCOUNTS}/robot/token"),
            Some(&request.to_string()),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        let tr = reply.json();
        assert_eq!(tr["kind"], "TokenRequest");
        assert_eq!(tr["apiVersion"], api_version);
        assert_eq!(tr["spec"]["expirationSeconds"], 3600);
        assert_eq!(tr["spec"]["audiences"], json!(["https://apiary.test"]));
        assert!(tr["status"]["expirationTimestamp"].is_string(), "{tr}");
        let token = tr["status"]["token"].as_str().expect("token");

        let key = DecodingKey::from_rsa_pem(signing_key().1.as_bytes()).expect("public key");
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_audience(&["https://apiary.test"]);
        validation.set_issuer(&["https://apiary.test"]);
        let claims = jsonwebtoken::decode::<Value>(token, &key, &validation)
            .expect("verifies")
            .claims;
        assert_eq!(claims["sub"], "system:serviceaccount:default:robot");
        let private = &claims[flavor.label_domain()];
        assert_eq!(private["namespace"], "default");
        assert_eq!(private["serviceaccount"]["name"], "robot");
        assert_eq!(private["serviceaccount"]["uid"], sa["metadata"]["uid"]);
        let iat = claims["iat"].as_i64().expect("iat");
        assert_eq!(claims["exp"].as_i64(), Some(iat + 3600));
        assert_eq!(claims["nbf"].as_i64(), Some(iat));
        assert!(claims["jti"].is_string());

        let other = DecodingKey::from_secret(b"not the key");
        assert!(jsonwebtoken::decode::<Value>(token, &other, &validation).is_err());
    }
}

// R-ACC-122: token refusals: a lifetime under ten minutes 422, a missing service account
// 404, no signer 500; audiences asked for are the token's.
#[tokio::test]
async fn token_refusals_and_audiences() {
    let app = app_with_signer(Flavor::Kubernetes).await;
    created(
        &app,
        ACCOUNTS,
        r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}}"#,
    )
    .await;
    let path = format!("{ACCOUNTS}/robot/token");
    let short = json!({"spec": {"expirationSeconds": 599}}).to_string();
    let s = assert_status(
        &admin_call(&app, "POST", &path, Some(&short)).await,
        422,
        "Invalid",
    );
    assert_eq!(
        s["details"]["causes"][0]["message"],
        "Invalid value: 599: may not specify a duration less than 10 minutes"
    );
    assert_eq!(s["details"]["group"], "authentication.k8s.io");
    let missing = admin_call(&app, "POST", &format!("{ACCOUNTS}/nope/token"), Some("{}")).await;
    let s = assert_status(&missing, 404, "NotFound");
    assert_eq!(s["message"], "serviceaccounts \"nope\" not found");

    let audiences = json!({"spec": {"audiences": ["a", "b"], "expirationSeconds": 600}});
    let reply = admin_call(&app, "POST", &path, Some(&audiences.to_string())).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    let tr = reply.json();
    assert_eq!(tr["spec"]["audiences"], json!(["a", "b"]));
    let key = DecodingKey::from_rsa_pem(signing_key().1.as_bytes()).expect("public key");
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_audience(&["b"]);
    let token = tr["status"]["token"].as_str().expect("token");
    let claims = jsonwebtoken::decode::<Value>(token, &key, &validation)
        .expect("verifies")
        .claims;
    assert_eq!(claims["aud"], json!(["a", "b"]));
    assert_eq!(
        claims["exp"].as_i64(),
        claims["iat"].as_i64().map(|t| t + 600)
    );

    let (unsigned, _) = super::app().await;
    created(
        &unsigned,
        ACCOUNTS,
        r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}}"#,
    )
    .await;
    let reply = admin_call(&unsigned, "POST", &path, Some("{}")).await;
    assert_status(&reply, 500, "InternalError");
}

// R-RES-082: discovery lists the served subresources with the kinds they answer.
#[tokio::test]
async fn discovery_lists_the_subresources_and_their_kinds() {
    let (app, _) = app().await;
    let core = fetched(&app, "/api/v1").await;
    let apps = fetched(&app, "/apis/apps/v1").await;
    let entry = |list: &Value, name: &str| -> Value {
        list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} listed"))
    };
    let scale = entry(&apps, "deployments/scale");
    assert_eq!(
        (&scale["group"], &scale["version"], &scale["kind"]),
        (&json!("autoscaling"), &json!("v1"), &json!("Scale"))
    );
    assert_eq!(scale["verbs"], json!(["get", "patch", "update"]));
    assert_eq!(
        entry(&core, "replicationcontrollers/scale")["kind"],
        "Scale"
    );
    assert_eq!(entry(&core, "pods/binding")["verbs"], json!(["create"]));
    let token = entry(&core, "serviceaccounts/token");
    assert_eq!(token["group"], "authentication.k8s.io");
    assert_eq!(token["kind"], "TokenRequest");
}

const BUDGETS: &str = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";

/// Creates the pod `name` labelled `app=<app>` and makes it Running and Ready.
async fn ready_pod(app: &Router, name: &str, label: &str) {
    let mut p = created(app, PODS, &pod(name, json!({"app": label}))).await;
    p["status"] = json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]});
    let reply = admin_call(
        app,
        "PUT",
        &format!("{PODS}/{name}/status"),
        Some(&p.to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
}

async fn budget(app: &Router, name: &str, label: &str, min_available: Value) {
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": label}}}});
    created(app, BUDGETS, &pdb.to_string()).await;
}

pub(super) fn eviction(name: &str) -> String {
    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}).to_string()
}

// R-RES-008: an eviction the budget allows records the disruption in the budget's status
// and deletes the pod; the next one, which would leave too few healthy pods, is 429.
#[tokio::test]
async fn eviction_follows_the_disruption_budget() {
    let (app, _) = app().await;
    ready_pod(&app, "p1", "web").await;
    ready_pod(&app, "p2", "web").await;
    budget(&app, "web", "web", json!(1)).await;
    let evicted = admin_call(
        &app,
        "POST",
        &format!("{PODS}/p1/eviction"),
        Some(&eviction("p1")),
    )
    .await;
    assert_success(&evicted);
    let gone = admin_call(&app, "GET", &format!("{PODS}/p1"), None).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    let pdb = fetched(&app, &format!("{BUDGETS}/web")).await;
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0, "{pdb}");
    assert_eq!(pdb["status"]["currentHealthy"], 2);
    assert_eq!(pdb["status"]["desiredHealthy"], 1);
    assert!(pdb["status"]["disruptedPods"]["p1"].is_string(), "{pdb}");

    let refused = admin_call(
        &app,
        "POST",
        &format!("{PODS}/p2/eviction"),
        Some(&eviction("p2")),
    )
    .await;
    let s = assert_status(&refused, 429, "TooManyRequests");
    assert_eq!(
        s["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        s["details"]["causes"],
        json!([{"reason": "DisruptionBudget",
            "message": "The disruption budget web needs 1 healthy pods and has 1 currently"}])
    );
    fetched(&app, &format!("{PODS}/p2")).await;
}

// R-RES-008: no budget, the pod goes; two budgets, 500 as upstream; another name 400; a
// missing pod 404; a dry run writes neither the budget nor the delete.
#[tokio::test]
async fn eviction_without_one_budget_and_refusals() {
    let (app, storage) = app().await;
    ready_pod(&app, "free", "none").await;
    assert_success(
        &admin_call(
            &app,
            "POST",
            &format!("{PODS}/free/eviction"),
            Some(&eviction("free")),
        )
        .await,
    );
    let gone = admin_call(&app, "GET", &format!("{PODS}/free"), None).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);

    ready_pod(&app, "p", "web").await;
    let renamed = admin_call(
        &app,
        "POST",
        &format!("{PODS}/p/eviction"),
        Some(&eviction("q")),
    )
    .await;
    let s = assert_status(&renamed, 400, "BadRequest");
    assert_eq!(
        s["message"],
        "name in URL does not match name in Eviction object"
    );
    let missing = admin_call(
        &app,
        "POST",
        &format!("{PODS}/nope/eviction"),
        Some(&eviction("nope")),
    )
    .await;
    assert_status(&missing, 404, "NotFound");

    budget(&app, "a", "web", json!(0)).await;
    let revision = storage.revision().await;
    let dry = admin_call(
        &app,
        "POST",
        &format!("{PODS}/p/eviction?dryRun=All"),
        Some(&eviction("p")),
    )
    .await;
    assert_success(&dry);
    assert_eq!(
        storage.revision().await,
        revision,
        "a dry run stores nothing"
    );
    fetched(&app, &format!("{PODS}/p")).await;

    budget(&app, "b", "web", json!("50%")).await;
    let several = admin_call(
        &app,
        "POST",
        &format!("{PODS}/p/eviction"),
        Some(&eviction("p")),
    )
    .await;
    assert_eq!(several.status.as_u16(), 500, "{}", several.text());
    let s = several.json();
    assert_eq!(s["status"], "Failure");
    assert_eq!(
        s["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
    fetched(&app, &format!("{PODS}/p")).await;
}

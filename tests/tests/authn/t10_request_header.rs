//! An authenticating proxy: the test holds a client certificate of the request-header CA and
//! sends `X-Remote-*` headers; the user is what SelfSubjectReview answers.

use std::fs;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::HttpClient;
use apiary_tests::loopback_pki::ClientCert;
use apiary_tests::loopback_pki::TestCa;
use apiary_tests::loopback_pki::client_config;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

const REVIEWS: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// Sends a SelfSubjectReview as `client` (with its headers) and answers the status and the
/// user it names.
async fn who(client: &HttpClient) -> (StatusCode, Value) {
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let reply = client.post(REVIEWS, &review).await.expect("review sent");
    let body: Value = serde_json::from_slice(&reply.body).unwrap_or(Value::Null);
    (reply.status, body["status"]["userInfo"].clone())
}

/// A client of replica 1 presenting `cert` (none: no certificate) with `headers`.
fn client(
    cluster: &DevCluster,
    cert: Option<&ClientCert>,
    headers: &[(&'static str, &str)],
) -> HttpClient {
    let server_ca = fs::read_to_string(cluster.dir().join("ca.crt")).expect("cluster CA");
    let tls = client_config(&server_ca, cert).expect("client TLS");
    let base = cluster
        .client(1)
        .expect("replica 1")
        .base()
        .parse()
        .expect("base URL");
    headers.iter().fold(
        HttpClient::new(&base, Some(tls)),
        |client, (name, value)| client.with_header(name, value).expect("header"),
    )
}

// R-ACC-128, R-ACC-129, R-ACC-130, R-ACC-131, R-ACC-132
#[tokio::test]
async fn a_verified_allowed_proxy_names_the_user_and_nobody_else_can() {
    let pki = tempfile::tempdir().expect("temp dir");
    let proxy_ca = TestCa::generate("front-proxy-ca").expect("proxy CA");
    let proxy_ca_file = pki.path().join("front-proxy-ca.crt");
    fs::write(&proxy_ca_file, proxy_ca.pem()).expect("proxy CA written");
    let options = DevOptions {
        nodes: 1,
        ..DevOptions::flavor(Flavor::Kubernetes)
    }
    .flag(&format!(
        "--requestheader-client-ca-file={}",
        proxy_ca_file.display()
    ))
    .flag("--requestheader-username-headers=X-Remote-User,X-Forwarded-User")
    .flag("--requestheader-uid-headers=X-Remote-Uid")
    .flag("--requestheader-group-headers=X-Remote-Group")
    .flag("--requestheader-extra-headers-prefix=X-Remote-Extra-")
    .flag("--requestheader-allowed-names=front-proxy");
    let cluster = DevCluster::start(options).await.expect("cluster");
    let proxy = proxy_ca
        .client_cert("front-proxy", &[])
        .expect("proxy cert");
    let headers = [
        ("x-remote-user", ""),
        ("X-Forwarded-User", "alice"),
        ("x-remote-uid", "alice-1"),
        ("x-remote-group", "devs"),
        ("x-remote-group", "qa"),
        ("x-remote-extra-Example.org%2FScopes", "read"),
    ];

    let (status, user) = who(&client(&cluster, Some(&proxy), &headers)).await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    assert_eq!(user["username"], "alice", "{user}");
    assert_eq!(user["uid"], "alice-1", "{user}");
    assert_eq!(
        user["groups"],
        json!(["devs", "qa", "system:authenticated"]),
        "{user}"
    );
    assert_eq!(
        user["extra"],
        json!({"example.org/scopes": ["read"]}),
        "{user}"
    );

    // The CA signed it, but its common name is not an allowed proxy's: nobody.
    let stranger = proxy_ca.client_cert("other-proxy", &[]).expect("cert");
    let (status, user) = who(&client(&cluster, Some(&stranger), &headers)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{user}");

    // The proxy's certificate alone is not a user: the client CA did not sign it.
    let (status, user) = who(&client(&cluster, Some(&proxy), &[])).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{user}");

    // A client certificate of the client CA authenticates as itself; its headers are ignored.
    let admin = ClientCert {
        cert_pem: fs::read_to_string(cluster.dir().join("admin.crt")).expect("admin cert"),
        key_pem: fs::read_to_string(cluster.dir().join("admin.key")).expect("admin key"),
    };
    let (status, user) = who(&client(&cluster, Some(&admin), &headers)).await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    assert_eq!(user["username"], "admin", "{user}");

    // Without any certificate the headers are never read.
    let (status, user) = who(&client(&cluster, None, &headers)).await;
    assert_ne!(user["username"], "alice", "{status}: {user}");
}

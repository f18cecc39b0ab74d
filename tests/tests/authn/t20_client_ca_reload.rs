//! `--client-ca-file` may hold several CAs and is followed while the replicas run: a
//! certificate of a CA added to the file authenticates without a restart.

use std::fs;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::HttpClient;
use apiary_tests::loopback_pki::ClientCert;
use apiary_tests::loopback_pki::TestCa;
use apiary_tests::loopback_pki::client_config;
use http::StatusCode;
use serde_json::json;

/// Longer than the replicas' CA reload interval, with room for a loaded machine.
const RELOAD_DEADLINE: Duration = Duration::from_secs(30);

/// Twice the replicas' CA reload interval: a spoiled file has been read by then.
const BAD_FILE_SEEN: Duration = Duration::from_secs(4);

// R-ACC-113, R-ACC-115
#[tokio::test]
async fn a_ca_added_to_the_client_ca_file_lets_its_certificates_in_without_restart() {
    let options = DevOptions {
        nodes: 1,
        ..DevOptions::flavor(Flavor::Kubernetes)
    };
    let cluster = DevCluster::start(options).await.expect("cluster");
    let ca_file = cluster.dir().join("ca.crt");
    let server_ca = fs::read_to_string(&ca_file).expect("cluster CA");
    let rotated = TestCa::generate("rotated-client-ca").expect("CA");
    let carol = rotated.client_cert("carol", &["ops"]).expect("cert");
    let tls = client_config(&server_ca, Some(&carol)).expect("client TLS");
    let base = cluster
        .client(1)
        .expect("replica 1")
        .base()
        .parse()
        .expect("base URL");
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

    // Not trusted yet: the handshake or the request fails.
    let before = HttpClient::new(&base, Some(tls.clone()))
        .post(path, &review)
        .await;
    assert!(
        before
            .as_ref()
            .map_or(true, |reply| reply.status == StatusCode::UNAUTHORIZED),
        "{:?}",
        before.map(|reply| reply.text())
    );

    // A file that holds no CA is not used: the previous CAs stay.
    fs::write(&ca_file, "not a certificate\n").expect("CA file spoiled");
    tokio::time::sleep(BAD_FILE_SEEN).await;
    let fresh = HttpClient::new(&base, Some(admin_tls(&cluster, &server_ca)));
    let kept = fresh.post(path, &review).await.expect("sent");
    assert_eq!(kept.status, StatusCode::CREATED, "{}", kept.text());

    fs::write(&ca_file, format!("{server_ca}{}", rotated.pem())).expect("CA file replaced");
    let deadline = Instant::now() + RELOAD_DEADLINE;
    let user = loop {
        // A new client: a new connection, as the reloaded CAs apply to new connections.
        let reply = HttpClient::new(&base, Some(tls.clone()))
            .post(path, &review)
            .await;
        if let Ok(reply) = &reply
            && reply.status == StatusCode::CREATED
        {
            break reply.json(path).expect("JSON")["status"]["userInfo"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "still refused: {:?}",
            reply.map(|r| r.text())
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(user["username"], "carol", "{user}");
    assert_eq!(
        user["groups"],
        json!(["ops", "system:authenticated"]),
        "{user}"
    );

    // The CA that was there before still counts: the admin's certificate keeps working.
    let fresh = HttpClient::new(&base, Some(admin_tls(&cluster, &server_ca)));
    let reply = fresh.post(path, &review).await.expect("sent");
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
}

/// The admin's client certificate of `cluster`, trusting `server_ca`.
fn admin_tls(cluster: &DevCluster, server_ca: &str) -> std::sync::Arc<rustls::ClientConfig> {
    let admin = ClientCert {
        cert_pem: fs::read_to_string(cluster.dir().join("admin.crt")).expect("admin cert"),
        key_pem: fs::read_to_string(cluster.dir().join("admin.key")).expect("admin key"),
    };
    client_config(server_ca, Some(&admin)).expect("admin TLS")
}

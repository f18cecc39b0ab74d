//! Kubeconfig users whose credentials come from an exec plugin (a shell script the test
//! writes): a client certificate, a changed certificate on a new connection, a token run
//! again after a 401, and kubectl with the same kubeconfig.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::HttpClient;
use apiary_tests::kubeconfig;
use apiary_tests::loopback_pki::TestCa;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

const REVIEWS: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// Prints an ExecCredential with the certificate and key `$CERTS/<run>.crt|key` of this run
/// (1, 2, ...; the last pair once runs outnumber the pairs), records its request in
/// `$CERTS/request-<run>.json` and an already passed expiry when `$EXPIRED` is set.
const CERT_PLUGIN: &str = r#"#!/bin/sh
set -e
echo run >> "$CERTS/runs"
run=$(wc -l < "$CERTS/runs" | tr -d ' ')
printf '%s' "$KUBERNETES_EXEC_INFO" > "$CERTS/request-$run.json"
[ -f "$CERTS/$run.crt" ] || run=$(ls "$CERTS" | grep -c '\.crt$')
cert=$(awk '{printf "%s\\n", $0}' "$CERTS/$run.crt")
key=$(awk '{printf "%s\\n", $0}' "$CERTS/$run.key")
expiry=""
[ -n "$EXPIRED" ] && expiry=',"expirationTimestamp":"2000-01-01T00:00:00Z"'
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"%s","clientKeyData":"%s"%s}}' "$cert" "$key" "$expiry"
"#;

/// Prints a bearer token no authenticator of the cluster knows, counting its runs.
const TOKEN_PLUGIN: &str = r#"#!/bin/sh
echo run >> "$1"
printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"plugin-token-%s"}}' "$(wc -l < "$1" | tr -d ' ')"
"#;

fn write_plugin(path: &Path, script: &str) {
    fs::create_dir_all(path.parent().expect("a directory")).expect("plugin directory");
    fs::write(path, script).expect("plugin written");
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("executable");
}

/// A kubeconfig at `path` for replica 1 of `cluster` whose user is `exec` (JSON).
fn write_kubeconfig(path: &Path, cluster: &DevCluster, server: &str, exec: Value) {
    let ca = fs::read(cluster.dir().join("ca.crt")).expect("cluster CA");
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {
            "server": server,
            "certificate-authority-data": STANDARD.encode(ca),
            "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"audience": "apiary"}}],
        }}],
        "users": [{"name": "u", "user": {"exec": exec}}],
        "contexts": [{"name": "exec", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "exec",
    });
    fs::write(path, config.to_string()).expect("kubeconfig written");
}

async fn user(client: &HttpClient) -> (StatusCode, Value) {
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let reply = client.post(REVIEWS, &review).await.expect("review sent");
    let body: Value = serde_json::from_slice(&reply.body).unwrap_or(Value::Null);
    (reply.status, body["status"]["userInfo"]["username"].clone())
}

fn runs(file: &Path) -> usize {
    fs::read_to_string(file).map_or(0, |runs| runs.lines().count())
}

// R-ACC-073, R-ACC-074, R-ACC-075, R-ACC-076, R-ACC-077, R-ACC-078
#[tokio::test]
async fn exec_plugins_give_certificates_and_tokens() {
    let options = DevOptions {
        nodes: 1,
        ..DevOptions::flavor(Flavor::Kubernetes)
    };
    let cluster = DevCluster::start(options).await.expect("cluster");
    let server = cluster.client(1).expect("replica 1").base().to_owned();
    let work = tempfile::tempdir().expect("temp dir");
    let certs = work.path().join("certs");
    fs::create_dir_all(&certs).expect("certs directory");
    let dev = cluster.dir();
    fs::copy(dev.join("admin.crt"), certs.join("1.crt")).expect("admin cert");
    fs::copy(dev.join("admin.key"), certs.join("1.key")).expect("admin key");
    let ca_key = fs::read_to_string(dev.join("ca.key")).expect("cluster CA key");
    let dave = TestCa::from_key("apiary-dev-ca", &ca_key)
        .and_then(|ca| ca.client_cert("dave", &["system:masters"]))
        .expect("dave's certificate");
    fs::write(certs.join("2.crt"), &dave.cert_pem).expect("dave cert");
    fs::write(certs.join("2.key"), &dave.key_pem).expect("dave key");

    // A certificate, cached without an expiry: one plugin run for several requests. The
    // command is relative to the kubeconfig's directory.
    let config = work.path().join("kubeconfig");
    write_plugin(&work.path().join("bin/cert-plugin"), CERT_PLUGIN);
    let exec = |expired: bool| {
        let mut env = vec![json!({"name": "CERTS", "value": certs.display().to_string()})];
        if expired {
            env.push(json!({"name": "EXPIRED", "value": "1"}));
        }
        json!({
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "./bin/cert-plugin",
            "env": env,
            "interactiveMode": "Never",
            "provideClusterInfo": true,
        })
    };
    write_kubeconfig(&config, &cluster, &server, exec(false));
    let endpoint = kubeconfig::endpoint(&config, "exec")
        .await
        .expect("endpoint");
    let client = HttpClient::for_endpoint(&endpoint);
    assert_eq!(user(&client).await, (StatusCode::CREATED, json!("admin")));
    assert_eq!(user(&client).await, (StatusCode::CREATED, json!("admin")));
    assert_eq!(runs(&certs.join("runs")), 1);
    let request: Value =
        serde_json::from_str(&fs::read_to_string(certs.join("request-1.json")).expect("request"))
            .expect("JSON request");
    assert_eq!(request["kind"], "ExecCredential", "{request}");
    assert_eq!(
        request["apiVersion"], "client.authentication.k8s.io/v1",
        "{request}"
    );
    assert_eq!(request["spec"]["interactive"], false, "{request}");
    let described = &request["spec"]["cluster"];
    assert_eq!(
        described["server"]
            .as_str()
            .map(|s| s.trim_end_matches('/')),
        Some(server.as_str())
    );
    let ca = fs::read(dev.join("ca.crt")).expect("cluster CA");
    assert_eq!(
        described["certificate-authority-data"],
        STANDARD.encode(ca),
        "{request}"
    );
    assert_eq!(
        described["config"],
        json!({"audience": "apiary"}),
        "{request}"
    );

    // An expired credential runs the plugin again; its new certificate needs new connections.
    fs::remove_file(certs.join("runs")).expect("runs reset");
    write_kubeconfig(&config, &cluster, &server, exec(true));
    let endpoint = kubeconfig::endpoint(&config, "exec")
        .await
        .expect("endpoint");
    let client = HttpClient::for_endpoint(&endpoint);
    assert_eq!(user(&client).await, (StatusCode::CREATED, json!("admin")));
    assert_eq!(user(&client).await, (StatusCode::CREATED, json!("dave")));
    assert_eq!(runs(&certs.join("runs")), 2);

    // kubectl runs the same plugin from the same kubeconfig.
    let output = tokio::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&config)
        .args(["get", "namespaces", "-o", "name"])
        .stdin(Stdio::null())
        .output()
        .await
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("namespace/default"));

    // A token no authenticator knows: 401, the plugin runs once more, the request is retried
    // once, and the 401 stands.
    let token_runs = work.path().join("token-runs");
    write_plugin(&work.path().join("token-plugin"), TOKEN_PLUGIN);
    let exec = json!({
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": work.path().join("token-plugin").display().to_string(),
        "args": [token_runs.display().to_string()],
    });
    let token_config = work.path().join("token-kubeconfig");
    write_kubeconfig(&token_config, &cluster, &server, exec);
    let endpoint = kubeconfig::endpoint(&token_config, "exec")
        .await
        .expect("endpoint");
    let client = HttpClient::for_endpoint(&endpoint);
    let (status, _) = user(&client).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(runs(&token_runs), 2);
}

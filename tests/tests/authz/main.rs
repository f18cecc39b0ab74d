//! Authorization modes against a real one-replica `apiary dev --flavor kubernetes` cluster:
//! AlwaysAllow and AlwaysDeny, the webhook mode of the flags and the authorization
//! configuration file with its webhooks (a real TLS SubjectAccessReview server,
//! [`apiary_tests::authz_webhook`]), their failure policies, match conditions and reloads.
//! Users come from a static token file, so each request is one user's.

mod t10_fixed_modes;
mod t20_webhook_flags;
mod t30_config_file;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::HttpClient;
use base64::Engine;
use http::Method;
use http::StatusCode;
use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde_json::Value;

/// The users of the token file: each user's token is `<name>-token`.
pub const USERS: [&str; 10] = [
    "alice", "bob", "carl", "dora", "erin", "fred", "gina", "hank", "ivan", "skip",
];

/// Writes the token file of [`USERS`] into `dir` and answers its path.
pub fn token_file(dir: &Path) -> std::path::PathBuf {
    let lines: String = USERS
        .iter()
        .zip(1..)
        .map(|(user, uid)| format!("{user}-token,{user},{uid},\"dev\"\n"))
        .collect();
    let path = dir.join("tokens.csv");
    std::fs::write(&path, lines).expect("token file written");
    path
}

/// Starts one kubernetes-flavored replica with the token file in `dir` and `flags`.
pub async fn start(dir: &Path, flags: &[String]) -> DevCluster {
    let mut options = DevOptions::flavor(Flavor::Kubernetes)
        .flag(&format!("--token-auth-file={}", token_file(dir).display()));
    for flag in flags {
        options = options.flag(flag);
    }
    options.nodes = 1;
    options.request_timeout = Duration::from_secs(30);
    DevCluster::start(options).await.expect("cluster started")
}

/// A client of replica 1 that trusts its CA and presents no client certificate, sending
/// `token` as its bearer token when there is one.
pub fn client(cluster: &DevCluster, token: Option<&str>) -> HttpClient {
    let dev: Value = serde_json::from_slice(
        &std::fs::read(cluster.kubeconfig()).expect("the dev kubeconfig is there"),
    )
    .expect("the dev kubeconfig is JSON");
    let cluster = &dev["clusters"][0]["cluster"];
    let ca = base64::engine::general_purpose::STANDARD
        .decode(
            cluster["certificate-authority-data"]
                .as_str()
                .expect("CA data"),
        )
        .expect("base64");
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&ca) {
        roots.add(cert.expect("a PEM certificate")).expect("a CA");
    }
    let tls = ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let server = cluster["server"]
        .as_str()
        .expect("server")
        .parse()
        .expect("a URL");
    let client = HttpClient::new(&server, Some(Arc::new(tls)));
    match token {
        Some(token) => client
            .with_header("authorization", &format!("Bearer {token}"))
            .expect("a header value"),
        None => client,
    }
}

/// The status `user` gets for `GET path`.
pub async fn status_of(cluster: &DevCluster, user: &str, path: &str) -> StatusCode {
    client(cluster, Some(&format!("{user}-token")))
        .send(Method::GET, path, None)
        .await
        .expect("an answer")
        .status
}

/// Pods in namespace `default`, which every user lists.
pub const PODS: &str = "/api/v1/namespaces/default/pods";

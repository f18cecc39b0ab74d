//! Authorization modes against a real one-replica `apiary dev --flavor kubernetes` cluster:
//! AlwaysAllow and AlwaysDeny, the webhook mode of the flags and the authorization
//! configuration file with its webhooks (a real TLS SubjectAccessReview server,
//! [`apiary_tests::authz_webhook`]), their failure policies, match conditions and reloads.
//! Users come from a static token file, so each request is one user's.

mod t10_fixed_modes;
mod t20_webhook_flags;
mod t30_config_file;

use std::path::Path;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::HttpClient;
use http::Method;
use http::StatusCode;

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
pub async fn client(cluster: &DevCluster, token: Option<&str>) -> HttpClient {
    let client = (cluster.anonymous_client(1).await).expect("replica 1 in the kubeconfig");
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
        .await
        .send(Method::GET, path, None)
        .await
        .expect("an answer")
        .status
}

/// Pods in namespace `default`, which every user lists.
pub const PODS: &str = "/api/v1/namespaces/default/pods";

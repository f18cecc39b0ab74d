//! Bootstrap tokens and their controllers on a real 3-replica cluster started with
//! `--enable-bootstrap-token-auth --controllers=*,tokencleaner,bootstrapsigner`: kubectl with
//! `--token` is the bootstrap user, the bootstrap signer signs `cluster-info` so that an
//! independent verifier (Python's hmac) accepts it, and after the leader is killed the new
//! leader's token cleaner deletes a token that expires after the change.

use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use serde_json::Value;
use serde_json::json;

use crate::run::kubectl;
use crate::run::kubectl_available;
use crate::run::kubectl_status;
use crate::run::write_file;

/// The signing token; the expiring one.
const SIGNING: (&str, &str) = ("abcdef", "0123456789abcdef");
const EXPIRING: (&str, &str) = ("zyxwvu", "fedcba9876543210");

/// How long after its creation the expiring token expires: after the leader change.
const EXPIRY: Duration = Duration::from_secs(20);

/// How long the controllers get to converge.
const CONVERGE: Duration = Duration::from_secs(60);

/// The Secret of the token `id.secret` with `extra` string data.
fn token_secret(id: &str, secret: &str, extra: &Value) -> Value {
    let mut data = json!({
        "token-id": id,
        "token-secret": secret,
        "usage-bootstrap-authentication": "true",
    });
    if let (Some(data), Some(extra)) = (data.as_object_mut(), extra.as_object()) {
        data.extend(extra.clone());
    }
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": format!("bootstrap-token-{id}"), "namespace": "kube-system"},
        "type": "bootstrap.kubernetes.io/token",
        "stringData": data,
    })
}

/// kubectl against replica `index` with only `token` (no client certificate), and whether it
/// succeeded.
async fn as_token(
    cluster: &DevCluster,
    index: usize,
    token: &str,
    args: &[&str],
) -> (bool, String) {
    let empty = write_file(
        cluster,
        "empty.kubeconfig",
        "apiVersion: v1\nkind: Config\n",
    );
    let server = cluster
        .endpoint(index)
        .await
        .expect("endpoint")
        .server
        .to_string();
    let ca = cluster.dir().join("ca.crt");
    let mut all = vec![
        "--server".to_owned(),
        server.trim_end_matches('/').to_owned(),
        "--certificate-authority".to_owned(),
        ca.to_str().expect("a UTF-8 path").to_owned(),
    ];
    all.push(format!("--token={token}"));
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    kubectl_status(std::path::Path::new(&empty), &all).await
}

/// A SelfSubjectReview as `token` through replica `index`: the user info, or kubectl's error.
async fn whoami(cluster: &DevCluster, index: usize, token: &str) -> Result<Value, String> {
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let file = write_file(cluster, "whoami.json", &review.to_string());
    let path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    match as_token(
        cluster,
        index,
        token,
        &["create", "--raw", path, "-f", &file],
    )
    .await
    {
        (true, out) => {
            let reply: Value = serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))?;
            Ok(reply["status"]["userInfo"].clone())
        }
        (false, out) => Err(out),
    }
}

/// The detached JWS Kubernetes' bootstrap signer makes, computed by Python's hmac.
fn python_jws(content: &str, id: &str, secret: &str) -> String {
    let program = r#"
import base64, hashlib, hmac, sys
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
content, kid, secret = sys.argv[1], sys.argv[2], sys.argv[3]
header = b64(('{"alg":"HS256","kid":"%s"}' % kid).encode())
mac = hmac.new(secret.encode(), (header + "." + b64(content.encode())).encode(), hashlib.sha256)
print(header + ".." + b64(mac.digest()))
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", program, content, id, secret])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Polls `check` every half second until it answers `Some`, for at most `limit`.
async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(
            start.elapsed() < limit,
            "{what} did not happen within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

// R-ACC-018, R-ACC-023, R-ACC-025, R-ACC-026, R-ACC-119 (a bootstrap token authenticates),
// R-ACC-024, R-ACC-028, R-ACC-029 (cluster-info signed as Kubernetes signs it), R-ACC-080,
// R-ACC-082 (an expired token is refused and deleted), R-ACC-120 (the controllers by name).
#[tokio::test]
async fn bootstrap_tokens_authenticate_sign_and_expire_across_a_leader_change() {
    if !kubectl_available() {
        return;
    }
    let options = DevOptions::flavor(Flavor::Kubernetes)
        .flag("--enable-bootstrap-token-auth")
        .flag("--controllers=*,tokencleaner,bootstrapsigner");
    let cluster = DevCluster::start(options)
        .await
        .expect("the cluster starts");
    let kubeconfig = cluster.kubeconfig();

    let extra = json!({
        "usage-bootstrap-signing": "true",
        "auth-extra-groups": "system:bootstrappers:workers",
    });
    let signing = token_secret(SIGNING.0, SIGNING.1, &extra);
    let file = write_file(&cluster, "signing.json", &signing.to_string());
    kubectl(&kubeconfig, &["create", "-f", &file]).await;
    let token = format!("{}.{}", SIGNING.0, SIGNING.1);
    let user = eventually(CONVERGE, "the token authenticating", || async {
        whoami(&cluster, 2, &token).await.ok()
    })
    .await;
    assert_eq!(
        user,
        json!({
            "username": "system:bootstrap:abcdef",
            "groups": ["system:bootstrappers", "system:bootstrappers:workers", "system:authenticated"],
        })
    );
    let (ok, out) = whoami(&cluster, 1, "abcdef.0000000000000000")
        .await
        .map_or_else(|e| (false, e), |u| (true, u.to_string()));
    assert!(!ok && out.contains("Unauthorized"), "{out}");

    // A request from the network cannot act as a controller: without credentials (curl, as
    // kubectl would prompt for a password) it is anonymous, and forbidden.
    let server = cluster
        .endpoint(1)
        .await
        .expect("endpoint")
        .server
        .to_string();
    let url = format!(
        "{}/api/v1/namespaces/kube-system/secrets",
        server.trim_end_matches('/')
    );
    let ca = cluster.dir().join("ca.crt");
    let out = std::process::Command::new("curl")
        .args(["-s", "-w", "%{http_code}", "--cacert"])
        .arg(&ca)
        .arg(&url)
        .output()
        .expect("curl runs");
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.ends_with("403") && out.contains(r#"User \"system:anonymous\" cannot list"#),
        "{out}"
    );

    let content = "apiVersion: v1\nkind: Config\nclusters:\n- name: ''\n  cluster:\n    server: https://127.0.0.1:6443\n";
    let cluster_info = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-info", "namespace": "kube-public"},
        "data": {"kubeconfig": content},
    });
    let file = write_file(&cluster, "cluster-info.json", &cluster_info.to_string());
    kubectl(&kubeconfig, &["create", "-f", &file]).await;
    let key = format!("jws-kubeconfig-{}", SIGNING.0);
    let signature = eventually(CONVERGE, "cluster-info signed", || async {
        let out = kubectl(
            &kubeconfig,
            &[
                "get",
                "configmap",
                "cluster-info",
                "-n",
                "kube-public",
                "-o",
                "json",
            ],
        )
        .await;
        let object: Value = serde_json::from_str(&out).ok()?;
        object["data"][&key].as_str().map(str::to_owned)
    })
    .await;
    assert_eq!(signature, python_jws(content, SIGNING.0, SIGNING.1));

    // A token expiring after the leader is killed; the new leader's cleaner deletes it.
    let leader = cluster
        .wait_leader(Duration::from_secs(30))
        .await
        .expect("a leader");
    let expires = rfc3339_from_now(EXPIRY);
    let expires_at = Instant::now() + EXPIRY;
    let expiring = token_secret(EXPIRING.0, EXPIRING.1, &json!({"expiration": expires}));
    let file = write_file(&cluster, "expiring.json", &expiring.to_string());
    kubectl(&kubeconfig, &["create", "-f", &file]).await;
    let follower = if leader == 1 { 2 } else { 1 };
    let expiring_token = format!("{}.{}", EXPIRING.0, EXPIRING.1);
    eventually(CONVERGE, "the expiring token authenticating", || async {
        whoami(&cluster, follower, &expiring_token).await.ok()
    })
    .await;
    cluster.kill_replica(leader).expect("the leader is killed");
    let new_leader = cluster.wait_leader(Duration::from_secs(30)).await;
    assert!(new_leader.is_some_and(|l| l != leader), "{new_leader:?}");
    assert!(
        Instant::now() < expires_at,
        "the new leader was elected before the token expired"
    );
    let context = format!("--context=node-{follower}");
    eventually(CONVERGE, "the expired token's Secret deleted", || async {
        let args = [
            "get",
            "secret",
            "bootstrap-token-zyxwvu",
            "-n",
            "kube-system",
            &context,
        ];
        let (found, out) = kubectl_status(&kubeconfig, &args).await;
        (!found && out.contains("NotFound")).then_some(())
    })
    .await;
    let refused = whoami(&cluster, follower, &expiring_token).await;
    assert!(
        refused.as_ref().is_err_and(|e| e.contains("Unauthorized")),
        "{refused:?}"
    );
    // The new leader's signer still keeps the signature (and none for the expired token).
    let out = kubectl(
        &kubeconfig,
        &[
            "get",
            "configmap",
            "cluster-info",
            "-n",
            "kube-public",
            "-o",
            "json",
            &context,
        ],
    )
    .await;
    let object: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(object["data"][&key].as_str(), Some(signature.as_str()));
    assert!(
        object["data"]["jws-kubeconfig-zyxwvu"].is_null(),
        "{object}"
    );
}

/// RFC 3339 UTC time `after` from now (by `date`, as the tests crate has no time library).
fn rfc3339_from_now(after: Duration) -> String {
    let out = std::process::Command::new("date")
        .args([
            "-u",
            "-d",
            &format!("+{} seconds", after.as_secs()),
            "+%Y-%m-%dT%H:%M:%SZ",
        ])
        .output()
        .expect("date runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

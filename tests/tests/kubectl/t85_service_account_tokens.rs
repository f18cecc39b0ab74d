//! A service account token as kubectl's credential on a real three-replica cluster: issued on
//! one replica, used with `--token` on the others; forged, expired and misaddressed tokens are
//! refused; the issuer discovery documents serve the key that verifies it. The TokenRequest
//! and the reviews go in JSON through `kubectl create --raw` (t12 runs the commands that send
//! them as Protobuf).

use std::path::Path;
use std::time::Duration;
use std::time::SystemTime;

use jsonwebtoken::Algorithm;
use jsonwebtoken::DecodingKey;
use jsonwebtoken::EncodingKey;
use jsonwebtoken::Header;
use jsonwebtoken::Validation;
use jsonwebtoken::jwk::JwkSet;
use serde_json::Value;
use serde_json::json;

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

const ISSUER: &str = "https://apiary.local";
const ACCOUNT: &str = "/api/v1/namespaces/default/serviceaccounts/robot";

/// kubectl on replica `node` as the bearer of `token` (the kubeconfig's user is replaced, so
/// no client certificate is sent): whether it succeeded, and what it printed.
async fn as_token(kubeconfig: &Path, node: usize, token: &str, args: &[&str]) -> (bool, String) {
    let context = format!("--context=node-{node}");
    let user = "--user=robot";
    let token = format!("--token={token}");
    let mut all = vec![context.as_str(), user, token.as_str()];
    all.extend_from_slice(args);
    kubectl_status(kubeconfig, &all).await
}

/// The SelfSubjectReview the bearer of `token` gets from replica `node`, or kubectl's output.
async fn whoami(
    kubeconfig: &Path,
    review: &str,
    node: usize,
    token: &str,
) -> Result<Value, String> {
    let path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    let (ok, out) = as_token(
        kubeconfig,
        node,
        token,
        &["create", "--raw", path, "-f", review],
    )
    .await;
    if ok {
        Ok(serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}")))
    } else {
        Err(out)
    }
}

fn seconds_now() -> i64 {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after the epoch");
    i64::try_from(since.as_secs()).expect("a sane clock")
}

// R-ACC-114, R-ACC-121, R-ACC-122: a token requested on node-1 is a bearer credential on
// node-2 and node-3 (the service account's user; a resource request is then 403, not 401);
// a token signed by another key, expired, or for another audience is 401; the discovery
// documents name the issuer and serve the key that verifies the token; once the service
// account is deleted its token is 401.
#[tokio::test]
async fn service_account_tokens_authenticate_on_every_replica() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    // A copy of the kubeconfig with a user `robot` without credentials, whom `--token` fills.
    let robot_config = cluster.dir().join("robot-kubeconfig");
    std::fs::copy(&kubeconfig, &robot_config).expect("the kubeconfig is copied");
    kubectl(&robot_config, &["config", "set-credentials", "robot"]).await;
    let account = write_file(
        &cluster,
        "robot.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n  namespace: default\n",
    );
    kubectl(&kubeconfig, &["--context=node-1", "create", "-f", &account]).await;
    let request = |name: &str, audiences: Value| {
        let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"audiences": audiences}});
        write_file(&cluster, name, &body.to_string())
    };
    let ask = |file: String| {
        let kubeconfig = kubeconfig.clone();
        async move {
            let path = format!("{ACCOUNT}/token");
            let out = kubectl(
                &kubeconfig,
                &["--context=node-1", "create", "--raw", &path, "-f", &file],
            )
            .await;
            let answer: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
            answer["status"]["token"]
                .as_str()
                .expect("a token")
                .to_owned()
        }
    };
    let token = ask(request("token.json", json!([]))).await;
    let review = write_file(
        &cluster,
        "whoami.json",
        r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#,
    );

    for node in [2, 3] {
        let me = whoami(&robot_config, &review, node, &token)
            .await
            .expect("authenticated");
        let user = &me["status"]["userInfo"];
        assert_eq!(
            user["username"], "system:serviceaccount:default:robot",
            "{me}"
        );
        let groups = user["groups"].as_array().expect("groups");
        assert!(
            groups.iter().any(|g| g == "system:serviceaccounts:default"),
            "{me}"
        );
        let (ok, out) = as_token(&robot_config, node, &token, &["get", "configmaps"]).await;
        assert!(!ok && out.contains("Forbidden"), "node-{node}: {out}");
    }

    let jwks = as_token(
        &robot_config,
        3,
        &token,
        &["get", "--raw", "/openid/v1/jwks"],
    )
    .await;
    assert!(jwks.0, "{}", jwks.1);
    let set: JwkSet = serde_json::from_str(&jwks.1).expect("a JWK set");
    let config = as_token(
        &robot_config,
        2,
        &token,
        &["get", "--raw", "/.well-known/openid-configuration"],
    )
    .await;
    let config: Value = serde_json::from_str(&config.1).expect("the OpenID configuration");
    assert_eq!(config["issuer"], ISSUER, "{config}");
    let kid = jsonwebtoken::decode_header(&token).expect("a JWT").kid;
    let jwk = set
        .find(kid.as_deref().expect("a key id"))
        .expect("the token's key is published");
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_issuer(&[ISSUER]);
    validation.set_audience(&[ISSUER]);
    let key = DecodingKey::from_jwk(jwk).expect("a key");
    jsonwebtoken::decode::<Value>(&token, &key, &validation).expect("the published key verifies");

    let claims: Value = {
        let header = jsonwebtoken::dangerous::insecure_decode::<Value>(&token).expect("claims");
        header.claims
    };
    let now = seconds_now();
    let mut expired = claims.clone();
    expired["iat"] = (now - 7200).into();
    expired["nbf"] = (now - 7200).into();
    expired["exp"] = (now - 3600).into();
    let signing =
        std::fs::read(cluster.dir().join("service-account.key")).expect("the cluster's key");
    let ours = EncodingKey::from_rsa_pem(&signing).expect("an RSA key");
    let expired =
        jsonwebtoken::encode(&Header::new(Algorithm::RS256), &expired, &ours).expect("signed");
    let stranger = rcgen::KeyPair::generate().expect("a key");
    let theirs = EncodingKey::from_ec_pem(stranger.serialize_pem().as_bytes()).expect("an EC key");
    let forged =
        jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims, &theirs).expect("signed");
    let elsewhere = ask(request("elsewhere.json", json!(["https://elsewhere"]))).await;
    for (what, bad) in [
        ("expired", expired),
        ("forged", forged),
        ("elsewhere", elsewhere),
    ] {
        let refused = whoami(&robot_config, &review, 2, &bad).await;
        assert!(
            refused
                .as_ref()
                .is_err_and(|out| out.contains("Unauthorized")),
            "{what}: {refused:?}"
        );
    }

    kubectl(
        &kubeconfig,
        &["--context=node-1", "delete", "serviceaccount", "robot"],
    )
    .await;
    // Each replica reads the account as it applied it; a follower may apply the delete a
    // moment after the leader answered.
    let mut last = Ok(Value::Null);
    for _ in 0..50 {
        last = whoami(&robot_config, &review, 3, &token).await;
        if last.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        last.as_ref().is_err_and(|out| out.contains("Unauthorized")),
        "{last:?}"
    );
}

//! OpenID Connect authentication on a real cluster, with a local issuer
//! ([`apiary_tests::oidc_issuer`]): kubectl with an ID token (`--token` in its kubeconfig)
//! is the mapped user, by the `--oidc-*` flags and by `--authentication-config`; wrong
//! audience, expired, forged and rule-breaking tokens are refused (401); a rotated key and
//! a changed configuration file are picked up while the cluster runs.

use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use std::time::SystemTime;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::oidc_issuer::OidcIssuer;
use apiary_tests::oidc_issuer::SigningAlg;
use serde_json::Value;
use serde_json::json;

use crate::run::kubectl;
use crate::run::kubectl_available;
use crate::run::kubectl_status;

/// How long a reloaded configuration file may take to be in force.
const RELOAD_LIMIT: Duration = Duration::from_secs(30);

fn now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs()
}

/// A copy of the cluster's kubeconfig whose current user is `token` only (a new user entry,
/// `oidc-<name>`, so that no client certificate comes with it).
async fn token_kubeconfig(cluster: &DevCluster, name: &str, token: &str) -> PathBuf {
    let name = format!("oidc-{name}");
    let name = name.as_str();
    let path = cluster.dir().join(format!("{name}.kubeconfig"));
    std::fs::copy(cluster.kubeconfig(), &path).expect("kubeconfig copied");
    kubectl(
        &path,
        &[
            "config",
            "set-credentials",
            name,
            &format!("--token={token}"),
        ],
    )
    .await;
    kubectl(
        &path,
        &[
            "config",
            "set-context",
            "--current",
            &format!("--user={name}"),
        ],
    )
    .await;
    path
}

/// Who the cluster says the token's user is (SelfSubjectReview), or kubectl's error.
async fn whoami(cluster: &DevCluster, name: &str, token: &str) -> Result<Value, String> {
    let kubeconfig = token_kubeconfig(cluster, name, token).await;
    let review = cluster.dir().join("whoami.json");
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    std::fs::write(&review, body.to_string()).expect("review written");
    let (ok, out) = kubectl_status(
        &kubeconfig,
        &[
            "create",
            "--raw",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            "-f",
            review.to_str().expect("a UTF-8 path"),
        ],
    )
    .await;
    if !ok {
        return Err(out);
    }
    let reply: Value = serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))?;
    Ok(reply["status"]["userInfo"].clone())
}

/// Asserts kubectl with `token` is refused as unauthenticated.
async fn assert_unauthorized(cluster: &DevCluster, name: &str, token: &str) {
    match whoami(cluster, name, token).await {
        Ok(user) => panic!("{name}: authenticated as {user}"),
        Err(out) => assert!(out.contains("Unauthorized"), "{name}: {out}"),
    }
}

async fn start(
    dir: &Path,
    alg: SigningAlg,
    flags: impl Fn(&OidcIssuer) -> Vec<String>,
) -> Option<(OidcIssuer, DevCluster)> {
    if !kubectl_available() {
        return None;
    }
    let issuer = OidcIssuer::start(dir, alg).await.expect("issuer starts");
    let mut options = DevOptions::flavor(Flavor::Kubernetes);
    options.nodes = 1;
    for flag in flags(&issuer) {
        options = options.flag(&flag);
    }
    let cluster = DevCluster::start(options).await.expect("cluster starts");
    Some((issuer, cluster))
}

// R-ACC-037, R-ACC-125, R-ACC-133, R-ACC-134, R-ACC-135, R-ACC-137, R-ACC-138, R-ACC-139,
// R-ACC-140, R-ACC-141: the `--oidc-*` flags: the email claim as user name (no prefix),
// prefixed groups, a required claim, the client id as audience, expiry, signature and the
// default algorithm checked, a rotated key picked up.
#[tokio::test]
async fn oidc_flags_authenticate_id_tokens() {
    let pki = tempfile::tempdir().expect("temp dir");
    let Some((issuer, cluster)) = start(pki.path(), SigningAlg::Rs256, |issuer| {
        vec![
            format!("--oidc-issuer-url={}", issuer.url()),
            "--oidc-client-id=apiary".to_owned(),
            format!("--oidc-ca-file={}", issuer.ca_file().display()),
            "--oidc-username-claim=email".to_owned(),
            "--oidc-groups-claim=groups".to_owned(),
            "--oidc-groups-prefix=oidc:".to_owned(),
            "--oidc-required-claim=hd=example.org".to_owned(),
        ]
    })
    .await
    else {
        return;
    };
    let claims = json!({
        "iss": issuer.url(), "aud": "apiary", "sub": "1234", "email": "alice@example.org",
        "email_verified": true, "groups": ["dev", "ops"], "hd": "example.org",
        "iat": now(), "exp": now() + 600,
    });
    let user = whoami(&cluster, "alice", &issuer.mint(&claims).expect("minted"))
        .await
        .expect("authenticated");
    assert_eq!(user["username"], "alice@example.org", "{user}");
    let groups = user["groups"].as_array().expect("groups");
    for group in ["oidc:dev", "oidc:ops", "system:authenticated"] {
        assert!(groups.iter().any(|g| g == group), "{group} in {user}");
    }

    let mut wrong_audience = claims.clone();
    wrong_audience["aud"] = json!("someone-else");
    assert_unauthorized(&cluster, "audience", &issuer.mint(&wrong_audience).unwrap()).await;
    let mut expired = claims.clone();
    expired["exp"] = json!(now() - 60);
    assert_unauthorized(&cluster, "expired", &issuer.mint(&expired).unwrap()).await;
    let forged = issuer.mint_forged(&claims, SigningAlg::Rs256).unwrap();
    assert_unauthorized(&cluster, "forged", &forged).await;
    let other_alg = issuer.mint_forged(&claims, SigningAlg::Es256).unwrap();
    assert_unauthorized(&cluster, "algorithm", &other_alg).await;
    let mut no_domain = claims.clone();
    no_domain["hd"] = json!("elsewhere.org");
    assert_unauthorized(&cluster, "domain", &issuer.mint(&no_domain).unwrap()).await;
    let mut unverified = claims.clone();
    unverified["email_verified"] = json!(false);
    assert_unauthorized(&cluster, "unverified", &issuer.mint(&unverified).unwrap()).await;

    issuer.rotate(SigningAlg::Rs256).expect("rotated");
    let user = whoami(&cluster, "rotated", &issuer.mint(&claims).unwrap())
        .await
        .expect("a token of the new key is authenticated");
    assert_eq!(user["username"], "alice@example.org", "{user}");
}

fn configuration(issuer: &OidcIssuer, prefix: &str) -> String {
    let ca = std::fs::read_to_string(issuer.ca_file()).expect("CA read");
    let ca: String = ca.lines().map(|l| format!("      {l}\n")).collect();
    format!(
        "apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: {url}
    audiences: [apiary, other]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
{ca}  claimValidationRules:
  - expression: \"claims.tier != 'blocked'\"
    message: blocked tier
  claimMappings:
    username:
      expression: \"'{prefix}' + claims.sub\"
    groups:
      expression: \"claims.roles.map(r, 'role:' + r)\"
    uid:
      claim: oid
    extra:
    - key: example.org/tier
      valueExpression: claims.tier
  userValidationRules:
  - expression: \"!user.username.startsWith('{prefix}admin')\"
    message: no admins
",
        url = issuer.url()
    )
}

// R-ACC-030, R-ACC-036, R-ACC-037, R-ACC-038, R-ACC-039, R-ACC-040, R-ACC-043, R-ACC-044,
// R-ACC-045, R-ACC-046, R-ACC-143, R-ACC-144, R-ACC-145: an `--authentication-config` file:
// CEL mappings of user name, groups, uid and extra, claim and user validation rules (401 when
// broken), several audiences, its CA, ES256; a changed file is reloaded and the reload
// recorded, a bad one leaves the configuration in force.
#[tokio::test]
async fn authentication_config_maps_claims_with_cel_and_reloads() {
    let pki = tempfile::tempdir().expect("temp dir");
    let config = pki.path().join("authn.yaml");
    let Some((issuer, cluster)) = start(pki.path(), SigningAlg::Es256, |issuer| {
        std::fs::write(&config, configuration(issuer, "oidc:")).expect("config written");
        vec![format!("--authentication-config={}", config.display())]
    })
    .await
    else {
        return;
    };
    let claims = json!({
        "iss": issuer.url(), "aud": ["other"], "sub": "bob", "oid": "u-42",
        "roles": ["dev"], "tier": "gold", "exp": now() + 600,
    });
    let token = issuer.mint(&claims).expect("minted");
    let user = whoami(&cluster, "bob", &token)
        .await
        .expect("authenticated");
    assert_eq!(user["username"], "oidc:bob", "{user}");
    assert_eq!(user["uid"], "u-42", "{user}");
    assert!(
        user["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g == "role:dev"),
        "{user}"
    );
    assert_eq!(user["extra"]["example.org/tier"], json!(["gold"]), "{user}");

    let mut blocked = claims.clone();
    blocked["tier"] = json!("blocked");
    assert_unauthorized(&cluster, "blocked", &issuer.mint(&blocked).unwrap()).await;
    let mut admin = claims.clone();
    admin["sub"] = json!("admin");
    assert_unauthorized(&cluster, "admin", &issuer.mint(&admin).unwrap()).await;

    std::fs::write(&config, configuration(&issuer, "corp:")).expect("config rewritten");
    let deadline = tokio::time::Instant::now() + RELOAD_LIMIT;
    loop {
        let user = whoami(&cluster, "reloaded", &token)
            .await
            .expect("authenticated");
        if user["username"] == "corp:bob" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not reloaded: {user}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let metrics = cluster
        .client(1)
        .expect("a client")
        .get("/metrics")
        .await
        .expect("metrics answer")
        .text();
    assert!(
        metrics.lines().any(|l| l.starts_with(
            "apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds{"
        ) && l.contains("status=\"success\"")),
        "{metrics}"
    );
    std::fs::write(&config, "not: [valid").expect("config broken");
    tokio::time::sleep(Duration::from_secs(5)).await;
    let user = whoami(&cluster, "kept", &token)
        .await
        .expect("a bad file keeps the old config");
    assert_eq!(user["username"], "corp:bob", "{user}");
}

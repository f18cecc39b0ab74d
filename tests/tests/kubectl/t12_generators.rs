//! kubectl's generators and reviews with no `--raw` workaround, in the kubernetes flavor:
//! `create configmap|secret|serviceaccount|role|rolebinding|namespace|service|deployment|token`
//! (kubectl sends each object as a Protobuf body), then `auth can-i` and `auth whoami`
//! (Protobuf reviews), as the admin, as an impersonated user the role binding names, and as the
//! service account through the token kubectl created.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use serde_json::json;

use crate::printed::Printed;
use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::t85_tokens::user_kubeconfig;

/// `kubectl get <kind> <name> -o json`, parsed.
async fn get_json(kubeconfig: &Path, kind: &str, name: &str) -> Value {
    let out = kubectl(kubeconfig, &["get", kind, name, "-o", "json"]).await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The claims of a JWT (its middle part), without checking the signature.
fn claims(token: &str) -> Value {
    let payload = token
        .trim()
        .split('.')
        .nth(1)
        .expect("a JWT has three parts");
    let bytes = URL_SAFE_NO_PAD.decode(payload).expect("base64url claims");
    serde_json::from_slice(&bytes).expect("JSON claims")
}

/// Each generator prints `<resource>/<name> created`; the stored object is what it asked for.
async fn generators_create_what_they_say(kubeconfig: &Path) {
    let runs: [(&[&str], &str); 8] = [
        (
            &[
                "create",
                "configmap",
                "gen-cm",
                "--from-literal=a=1",
                "--from-literal=b=2",
            ],
            "configmap/gen-cm created",
        ),
        (
            &[
                "create",
                "secret",
                "generic",
                "gen-secret",
                "--from-literal=password=s3cret",
            ],
            "secret/gen-secret created",
        ),
        (
            &["create", "serviceaccount", "builder"],
            "serviceaccount/builder created",
        ),
        (
            &[
                "create",
                "role",
                "reader",
                "--verb=get,list",
                "--resource=pods",
            ],
            "role.rbac.authorization.k8s.io/reader created",
        ),
        (
            &[
                "create",
                "rolebinding",
                "reader-binding",
                "--role=reader",
                "--user=alice",
                "--serviceaccount=default:builder",
            ],
            "rolebinding.rbac.authorization.k8s.io/reader-binding created",
        ),
        (
            &["create", "namespace", "team-a"],
            "namespace/team-a created",
        ),
        (
            &["create", "service", "clusterip", "web", "--tcp=80:8080"],
            "service/web created",
        ),
        (
            &[
                "create",
                "deployment",
                "web",
                "--image=nginx:1.27",
                "--replicas=2",
            ],
            "deployment.apps/web created",
        ),
    ];
    for (args, said) in runs {
        let out = kubectl(kubeconfig, args).await;
        assert_eq!(out.trim(), said, "kubectl {args:?}");
    }

    let cm = get_json(kubeconfig, "configmap", "gen-cm").await;
    assert_eq!(cm["data"], json!({"a": "1", "b": "2"}));
    let secret = get_json(kubeconfig, "secret", "gen-secret").await;
    assert_eq!(secret["type"], "Opaque");
    assert_eq!(secret["data"], json!({"password": "czNjcmV0"}));
    let account = get_json(kubeconfig, "serviceaccount", "builder").await;
    assert_eq!(account["metadata"]["namespace"], "default");
    let role = get_json(kubeconfig, "role", "reader").await;
    assert_eq!(
        role["rules"],
        json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}])
    );
    let binding = get_json(kubeconfig, "rolebinding", "reader-binding").await;
    assert_eq!(
        binding["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"})
    );
    assert_eq!(
        binding["subjects"],
        json!([
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"},
            {"kind": "ServiceAccount", "name": "builder", "namespace": "default"}
        ])
    );
    let namespace = get_json(kubeconfig, "namespace", "team-a").await;
    assert_eq!(namespace["status"]["phase"], "Active");
    let service = get_json(kubeconfig, "service", "web").await;
    assert_eq!(service["spec"]["selector"], json!({"app": "web"}));
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}])
    );
    let deployment = get_json(kubeconfig, "deployment", "web").await;
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(
        deployment["spec"]["selector"]["matchLabels"],
        json!({"app": "web"})
    );
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
}

/// `kubectl auth can-i` answers `yes` (exit 0) or `no` (exit 1) on the line it prints.
async fn can_i(kubeconfig: &Path, args: &[&str]) -> (bool, String) {
    let mut all = vec!["auth", "can-i"];
    all.extend_from_slice(args);
    let (ok, out) = kubectl_status(kubeconfig, &all).await;
    let answer = out.lines().next().unwrap_or_default().trim().to_owned();
    assert_eq!(
        ok,
        answer == "yes",
        "kubectl auth can-i {args:?}: exit and answer disagree: {out}"
    );
    (ok, answer)
}

// R-HA-016, R-RES-121, R-RES-124, R-ACC-016, R-ACC-095
#[tokio::test]
async fn kubectl_generators_tokens_can_i_and_whoami_without_raw() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    generators_create_what_they_say(&kubeconfig).await;

    assert_eq!(can_i(&kubeconfig, &["create", "pods"]).await.1, "yes");
    assert_eq!(can_i(&kubeconfig, &["*", "*"]).await.1, "yes");
    let alice = ["--as=alice", "-n", "default"];
    assert_eq!(
        can_i(&kubeconfig, &[&alice[..], &["list", "pods"]].concat())
            .await
            .1,
        "yes"
    );
    assert_eq!(
        can_i(&kubeconfig, &[&alice[..], &["delete", "pods"]].concat())
            .await
            .1,
        "no"
    );
    assert_eq!(
        can_i(
            &kubeconfig,
            &["--as=alice", "-n", "kube-system", "list", "pods"]
        )
        .await
        .1,
        "no"
    );

    let whoami = Printed::parse(&kubectl(&kubeconfig, &["auth", "whoami"]).await);
    assert_eq!(whoami.header, ["ATTRIBUTE", "VALUE"]);
    whoami.assert_row("ATTRIBUTE", "Username", &[("VALUE", "admin")]);
    let review: Value =
        serde_json::from_str(&kubectl(&kubeconfig, &["auth", "whoami", "-o", "json"]).await)
            .expect("whoami -o json");
    assert_eq!(review["kind"], "SelfSubjectReview");
    assert_eq!(review["status"]["userInfo"]["username"], "admin");
    assert!(
        review["status"]["userInfo"]["groups"]
            .as_array()
            .is_some_and(|g| g.iter().any(|g| g == "system:masters")),
        "{review}"
    );

    // `create token` prints a token of the account, which authenticates as it.
    let token = kubectl(
        &kubeconfig,
        &["create", "token", "builder", "--duration=10m"],
    )
    .await;
    assert_eq!(
        claims(&token)["sub"],
        "system:serviceaccount:default:builder"
    );
    let as_builder = user_kubeconfig(&cluster, "builder", token.trim());
    let review: Value =
        serde_json::from_str(&kubectl(&as_builder, &["auth", "whoami", "-o", "json"]).await)
            .expect("whoami -o json");
    assert_eq!(
        review["status"]["userInfo"]["username"],
        "system:serviceaccount:default:builder"
    );
    assert_eq!(can_i(&as_builder, &["get", "pods"]).await.1, "yes");
    assert_eq!(can_i(&as_builder, &["create", "pods"]).await.1, "no");
}

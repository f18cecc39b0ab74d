//! The `ServiceAccount` plugin: a new pod runs as `default` unless it names an account, the
//! account must exist, and the pod gets the projected `kube-api-access-` token volume mounted
//! in every container unless automounting is off; an account enforcing mountable secrets
//! limits its pods to the secrets it lists; mirror pods reference no accounts or secrets.

use axum::Router;
use serde_json::Value;
use serde_json::json;

use super::admin_call;
use super::app;
use super::assert_status;
use super::created;

const PODS: &str = "/api/v1/namespaces/default/pods";
const ACCOUNTS: &str = "/api/v1/namespaces/default/serviceaccounts";
const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

fn pod(name: &str, spec: Value) -> String {
    let mut spec = spec;
    if spec.get("containers").is_none() {
        spec["containers"] = json!([{"name": "c", "image": "i"}]);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}).to_string()
}

fn account(name: &str, extra: Value) -> String {
    let mut account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                             "metadata": {"name": name}});
    if let (Some(account), Some(extra)) = (account.as_object_mut(), extra.as_object()) {
        account.extend(extra.clone());
    }
    account.to_string()
}

async fn refused(app: &Router, path: &str, body: &str) -> String {
    let reply = admin_call(app, "POST", path, Some(body)).await;
    let status = assert_status(&reply, 403, "Forbidden");
    status["message"].as_str().unwrap_or_default().to_owned()
}

/// The token volume's name, checked to be `kube-api-access-` and five generated characters.
fn token_volume_name(pod: &Value) -> String {
    let volumes = pod["spec"]["volumes"].as_array().expect("volumes");
    let name = (volumes.iter())
        .filter_map(|v| v["name"].as_str())
        .find(|n| n.starts_with("kube-api-access-"))
        .expect("a token volume")
        .to_owned();
    let suffix = &name["kube-api-access-".len()..];
    assert_eq!(suffix.len(), 5, "{name}");
    assert!(
        suffix
            .chars()
            .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
        "{name}"
    );
    name
}

fn mount(volume: &str) -> Value {
    json!({"name": volume, "readOnly": true, "mountPath": MOUNT_PATH})
}

// R-ACC-124: a pod naming no account runs as `default` and gets the projected token volume,
// shaped as Kubernetes shapes it, mounted read-only in every init container and container.
#[tokio::test]
async fn a_pod_runs_as_default_with_the_token_volume_mounted_everywhere() {
    let (app, _) = app().await;
    let spec = json!({"initContainers": [{"name": "init", "image": "i"}],
                      "containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "i"}]});
    let stored = created(&app, PODS, &pod("p", spec)).await;
    assert_eq!(stored["spec"]["serviceAccountName"], "default");
    assert_eq!(
        stored["spec"]["serviceAccount"], "default",
        "the deprecated field follows"
    );
    let name = token_volume_name(&stored);
    assert_eq!(
        stored["spec"]["volumes"],
        json!([{"name": name, "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt",
                               "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef":
                    {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ],
            "defaultMode": 420,
        }}])
    );
    for pointer in [
        "/spec/initContainers/0/volumeMounts",
        "/spec/containers/0/volumeMounts",
        "/spec/containers/1/volumeMounts",
    ] {
        assert_eq!(
            stored.pointer(pointer),
            Some(&json!([mount(&name)])),
            "{pointer}"
        );
    }
    let read = admin_call(&app, "GET", &format!("{PODS}/p"), None)
        .await
        .json();
    assert_eq!(read["spec"]["volumes"], stored["spec"]["volumes"]);
}

// R-ACC-124: `serviceAccountName` picks another account, which must exist; an account that
// does not is refused with Kubernetes' message, as is a namespace whose `default` account
// has not been created.
#[tokio::test]
async fn the_named_account_must_exist() {
    let (app, _) = app().await;
    created(&app, ACCOUNTS, &account("builder", json!({}))).await;
    let stored = created(
        &app,
        PODS,
        &pod("p", json!({"serviceAccountName": "builder"})),
    )
    .await;
    assert_eq!(stored["spec"]["serviceAccountName"], "builder");
    token_volume_name(&stored);

    assert_eq!(
        refused(
            &app,
            PODS,
            &pod("q", json!({"serviceAccountName": "ghost"}))
        )
        .await,
        "pods \"q\" is forbidden: error looking up service account default/ghost: \
         serviceaccount \"ghost\" not found"
    );
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}});
    created(&app, "/api/v1/namespaces", &namespace.to_string()).await;
    assert_eq!(
        refused(&app, "/api/v1/namespaces/x/pods", &pod("r", json!({}))).await,
        "pods \"r\" is forbidden: error looking up service account x/default: \
         serviceaccount \"default\" not found"
    );
}

// An account annotated `kubernetes.io/enforce-mountable-secrets: "true"` limits its pods to
// the secrets it lists: a secret volume it lists passes, an environment variable from another
// secret is refused with Kubernetes' message; the same pod passes under an account without
// the annotation.
#[tokio::test]
async fn an_enforcing_account_limits_its_pods_to_the_secrets_it_lists() {
    let (app, _) = app().await;
    let locked = json!({"metadata": {"name": "locked",
        "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}},
        "secrets": [{"name": "mine"}]});
    created(&app, ACCOUNTS, &account("locked", locked)).await;
    created(&app, ACCOUNTS, &account("open", json!({}))).await;
    let volume = json!([{"name": "v", "secret": {"secretName": "mine"}}]);
    let listed = json!({"serviceAccountName": "locked", "volumes": volume});
    created(&app, PODS, &pod("listed", listed)).await;
    let containers = json!([{"name": "c", "image": "i", "env": [{"name": "TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "theirs", "key": "k"}}}]}]);
    let spec = |account: &str| json!({"serviceAccountName": account, "containers": containers});
    assert_eq!(
        refused(&app, PODS, &pod("unlisted", spec("locked"))).await,
        "pods \"unlisted\" is forbidden: container c with envVar TOKEN referencing \
         secret.secretName=\"theirs\" is not allowed because service account locked does not \
         reference that secret"
    );
    created(&app, PODS, &pod("unlimited", spec("open"))).await;
}

// R-ACC-124: `automountServiceAccountToken: false` on the pod, or on its account when the
// pod leaves it unset, keeps the token out; the pod's `true` wins over the account's `false`.
#[tokio::test]
async fn automounting_is_decided_by_the_pod_then_its_account() {
    let (app, _) = app().await;
    let off = json!({"automountServiceAccountToken": false});
    created(&app, ACCOUNTS, &account("quiet", off)).await;

    let spec = json!({"automountServiceAccountToken": false});
    let stored = created(&app, PODS, &pod("pod-off", spec)).await;
    assert_eq!(stored["spec"]["serviceAccountName"], "default");
    assert_eq!(stored["spec"].get("volumes"), None);
    assert_eq!(stored["spec"]["containers"][0].get("volumeMounts"), None);

    let stored = created(
        &app,
        PODS,
        &pod("account-off", json!({"serviceAccountName": "quiet"})),
    )
    .await;
    assert_eq!(stored["spec"].get("volumes"), None);

    let spec = json!({"serviceAccountName": "quiet", "automountServiceAccountToken": true});
    let stored = created(&app, PODS, &pod("pod-on", spec)).await;
    token_volume_name(&stored);
}

// A container already mounting something at the token path keeps its mount; the others get
// the token. An image pull secret of the account goes to a pod that has none.
#[tokio::test]
async fn an_existing_mount_at_the_path_is_left_alone() {
    let (app, _) = app().await;
    let spec = json!({
        "containers": [
            {"name": "own", "image": "i",
             "volumeMounts": [{"name": "mine", "mountPath": MOUNT_PATH}]},
            {"name": "other", "image": "i"},
        ],
        "volumes": [{"name": "mine", "emptyDir": {}}],
    });
    let stored = created(&app, PODS, &pod("p", spec)).await;
    assert_eq!(
        stored["spec"]["containers"][0]["volumeMounts"],
        json!([{"name": "mine", "mountPath": MOUNT_PATH}])
    );
    let name = token_volume_name(&stored);
    assert_eq!(
        stored["spec"]["containers"][1]["volumeMounts"],
        json!([mount(&name)])
    );

    let only_own = json!({
        "containers": [{"name": "own", "image": "i",
                        "volumeMounts": [{"name": "mine", "mountPath": MOUNT_PATH}]}],
        "volumes": [{"name": "mine", "emptyDir": {}}],
    });
    let stored = created(&app, PODS, &pod("q", only_own)).await;
    assert_eq!(
        stored["spec"]["volumes"],
        json!([{"name": "mine", "emptyDir": {}}]),
        "no container needs the token volume"
    );

    let pulling = json!({"imagePullSecrets": [{"name": "registry"}]});
    created(&app, ACCOUNTS, &account("puller", pulling)).await;
    let stored = created(
        &app,
        PODS,
        &pod("r", json!({"serviceAccountName": "puller"})),
    )
    .await;
    assert_eq!(
        stored["spec"]["imagePullSecrets"],
        json!([{"name": "registry"}])
    );
    let own = json!({"serviceAccountName": "puller", "imagePullSecrets": [{"name": "mine"}]});
    let stored = created(&app, PODS, &pod("s", own)).await;
    assert_eq!(
        stored["spec"]["imagePullSecrets"],
        json!([{"name": "mine"}])
    );
}

// Mirror pods are not changed and may reference neither service accounts nor secrets.
#[tokio::test]
async fn mirror_pods_reference_no_accounts_or_secrets() {
    let (app, _) = app().await;
    let mirror = |name: &str, spec: Value| {
        let mut body: Value = serde_json::from_str(&pod(name, spec)).expect("JSON");
        body["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "hash"});
        body.to_string()
    };
    let stored = created(&app, PODS, &mirror("m", json!({}))).await;
    assert_eq!(stored["spec"].get("serviceAccountName"), None);
    assert_eq!(stored["spec"].get("volumes"), None);

    assert_eq!(
        refused(
            &app,
            PODS,
            &mirror("n", json!({"serviceAccountName": "default"}))
        )
        .await,
        "pods \"n\" is forbidden: a mirror pod may not reference service accounts"
    );
    let secret = json!({"volumes": [{"name": "s", "secret": {"secretName": "s"}}]});
    assert_eq!(
        refused(&app, PODS, &mirror("o", secret)).await,
        "pods \"o\" is forbidden: a mirror pod may not reference secrets"
    );
    let token = json!({"volumes": [{"name": "t", "projected": {"sources": [
        {"serviceAccountToken": {"path": "token"}}]}}]});
    assert_eq!(
        refused(&app, PODS, &mirror("p", token)).await,
        "pods \"p\" is forbidden: a mirror pod may not use ServiceAccountToken volume \
         projections"
    );
}

// R-RES-192: a dry run is admitted as the real create (account and token volume set) and
// stores nothing.
#[tokio::test]
async fn a_dry_run_is_admitted_and_stores_nothing() {
    let (app, _) = app().await;
    let path = format!("{PODS}?dryRun=All");
    let reply = admin_call(&app, "POST", &path, Some(&pod("p", json!({})))).await;
    assert_eq!(reply.status, 201, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["spec"]["serviceAccountName"], "default");
    token_volume_name(&answer);
    let read = admin_call(&app, "GET", &format!("{PODS}/p"), None).await;
    assert_eq!(read.status, 404);
}

// The account of a pod does not change: pod updates may not change it (the pod's
// validation refuses it).
#[tokio::test]
async fn the_account_of_a_pod_does_not_change() {
    let (app, _) = app().await;
    created(&app, ACCOUNTS, &account("other", json!({}))).await;
    let mut stored = created(&app, PODS, &pod("p", json!({}))).await;
    stored["spec"]["serviceAccountName"] = json!("other");
    stored["spec"]["serviceAccount"] = json!("other");
    let reply = admin_call(&app, "PUT", &format!("{PODS}/p"), Some(&stored.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("pod updates may not change fields other than"),
        "{message}"
    );
}

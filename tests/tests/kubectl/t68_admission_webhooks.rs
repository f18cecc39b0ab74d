//! kubectl and real TLS admission webhooks on a three-replica cluster: a mutating webhook
//! reached through a Service's EndpointSlice labels objects by JSON Patch (seen on a read from
//! another replica, reinvoked when a later webhook changed the object), a validating webhook
//! named by URL refuses labelled objects with Kubernetes' message, dry runs call webhooks
//! without side effects with `dryRun: true`, and an unreachable or silent webhook fails the
//! write or lets it pass as its `failurePolicy` says.

use apiary_tests::DevCluster;
use apiary_tests::admission_webhook;
use apiary_tests::admission_webhook::DENY_LABEL;
use apiary_tests::admission_webhook::DENY_MESSAGE;
use apiary_tests::admission_webhook::DENY_REASON;
use apiary_tests::admission_webhook::Silent;
use base64::Engine;
use serde_json::Value;
use serde_json::json;

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::run::until;
use crate::run::write_file;

/// One webhook of a configuration, over ConfigMap creates and updates.
fn webhook(name: &str, client_config: Value, extra: Value) -> Value {
    let mut hook = json!({
        "name": name,
        "clientConfig": client_config,
        "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""],
                   "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "objectSelector": {"matchExpressions": [
            {"key": "skip-webhooks", "operator": "DoesNotExist"}]},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    });
    if let (Some(hook), Some(extra)) = (hook.as_object_mut(), extra.as_object()) {
        hook.extend(extra.clone());
    }
    hook
}

/// Applies the configuration `kind` (`Mutating` / `Validating`) `name` with `hooks`.
async fn configure(cluster: &DevCluster, kind: &str, name: &str, hooks: Value) {
    let object = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": format!("{kind}WebhookConfiguration"),
        "metadata": {"name": name},
        "webhooks": hooks,
    });
    let file = write_file(cluster, &format!("{name}.json"), &object.to_string());
    kubectl(&cluster.kubeconfig(), &["apply", "-f", &file]).await;
}

/// A ConfigMap manifest named `name` with `labels`.
fn config_map(cluster: &DevCluster, name: &str, labels: Value) -> String {
    let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "data": {"k": "v"}});
    write_file(cluster, &format!("{name}.json"), &object.to_string())
}

fn parsed(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn port_of(url: &str) -> i64 {
    (url.rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next()))
    .and_then(|p| p.parse().ok())
    .expect("the URL has a port")
}

/// Creates ConfigMaps `<prefix>-<n>` through replica `context` until one comes back with
/// `label` (every replica follows the configurations asynchronously); that one, read back.
async fn created_until_labelled(
    cluster: &DevCluster,
    context: &str,
    prefix: &str,
    label: &str,
) -> Value {
    let kubeconfig = cluster.kubeconfig();
    for attempt in 0..100 {
        let name = format!("{prefix}-{attempt}");
        let file = config_map(cluster, &name, json!({}));
        let out = kubectl(
            &kubeconfig,
            &["--context", context, "create", "-f", &file, "-o", "json"],
        )
        .await;
        let object = parsed(&out);
        if object["metadata"]["labels"].get(label).is_some() {
            return object;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    panic!("no ConfigMap created through {context} was labelled {label}");
}

/// Creates `file` through replica `context` once a server-side dry run of it is refused with
/// `needle` in the message (the replica follows the configurations asynchronously); the
/// refusal's output.
async fn refused(cluster: &DevCluster, context: &str, file: &str, needle: &str) -> String {
    let kubeconfig = cluster.kubeconfig();
    let dry = [
        "--context",
        context,
        "create",
        "-f",
        file,
        "--dry-run=server",
    ];
    let out = until(&kubeconfig, &dry, |ok, out| !ok && out.contains(needle)).await;
    assert!(out.contains(needle), "{out}");
    let (ok, out) =
        kubectl_status(&kubeconfig, &["--context", context, "create", "-f", file]).await;
    assert!(!ok, "{out}");
    out
}

// CHECKLIST: R-RES-195 (a webhook with sideEffects None / NoneOnDryRun is called on a dry
// run, with dryRun true).
#[tokio::test]
async fn kubectl_writes_pass_a_mutating_and_a_validating_webhook() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    // One directory per webhook: each makes its own CA there.
    let (dir, other) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let labeller = admission_webhook::labelling(
        dir.path(),
        &["label.default.svc"],
        "example.com/labelled",
        "yes",
    )
    .await
    .expect("the mutating webhook starts");
    let denier = admission_webhook::denying(other.path(), &[])
        .await
        .expect("the validating webhook starts");
    let ca = |pem: String| base64::engine::general_purpose::STANDARD.encode(pem);

    // The labelling webhook as a Service: its one ready endpoint is the loopback server.
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "label", "namespace": "default"},
        "spec": {"ports": [{"port": 443, "targetPort": port_of(labeller.url())}]}});
    let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "label-1", "namespace": "default",
                     "labels": {"kubernetes.io/service-name": "label"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
        "ports": [{"name": "", "port": port_of(labeller.url()), "protocol": "TCP"}]});
    for (name, object) in [("service.json", service), ("slice.json", slice)] {
        let file = write_file(&cluster, name, &object.to_string());
        kubectl(&kubeconfig, &["apply", "-f", &file]).await;
    }
    let by_service = json!({"caBundle": ca(labeller.ca_pem().expect("CA")),
        "service": {"namespace": "default", "name": "label", "path": "/mutate"}});
    configure(
        &cluster,
        "Mutating",
        "label",
        json!([webhook("label.example.com", by_service, json!({}))]),
    )
    .await;
    let by_url = json!({"caBundle": ca(denier.ca_pem().expect("CA")), "url": denier.url()});
    configure(
        &cluster,
        "Validating",
        "deny",
        json!([webhook(
            "deny.example.com",
            by_url,
            json!({"sideEffects": "NoneOnDryRun"})
        )]),
    )
    .await;

    // Created through replica 1, labelled by the webhook, read so from replica 3.
    let created = created_until_labelled(&cluster, "node-1", "probe", "example.com/labelled").await;
    let name = created["metadata"]["name"].as_str().expect("name");
    let read = until(
        &kubeconfig,
        &[
            "--context",
            "node-3",
            "get",
            "configmap",
            name,
            "-o",
            "json",
        ],
        |ok, _| ok,
    )
    .await;
    assert_eq!(
        parsed(&read)["metadata"]["labels"]["example.com/labelled"],
        "yes"
    );
    let review = (labeller.received().into_iter())
        .find(|r| r["request"]["name"] == name)
        .expect("the webhook got the create");
    let request = &review["request"];
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(request["operation"], "CREATE");
    assert_eq!(request["namespace"], "default");
    assert_eq!(
        request["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(request["resource"]["resource"], "configmaps");
    assert_eq!(request["dryRun"], false);
    assert!(request["uid"].is_string() && request["userInfo"]["username"].is_string());

    // Refused by the validating webhook, through every replica, with Kubernetes' message and
    // the webhook's own reason, which kubectl prints.
    let denied = config_map(&cluster, "denied", json!({DENY_LABEL: "x"}));
    for context in ["node-1", "node-2", "node-3"] {
        let out = refused(&cluster, context, &denied, "denied the request").await;
        assert!(
            out.contains(&format!(
                "Error from server ({DENY_REASON}): error when creating"
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "admission webhook \"deny.example.com\" denied the request: {DENY_MESSAGE}"
            )),
            "{out}"
        );
    }
    let (found, _) = kubectl_status(&kubeconfig, &["get", "configmap", "denied"]).await;
    assert!(!found, "a refused object is not stored");

    // A dry run calls both webhooks (None, NoneOnDryRun) with dryRun true, stores nothing.
    let dry = config_map(&cluster, "dry", json!({}));
    let out = kubectl(
        &kubeconfig,
        &["create", "-f", &dry, "--dry-run=server", "-o", "json"],
    )
    .await;
    assert_eq!(
        parsed(&out)["metadata"]["labels"]["example.com/labelled"],
        "yes"
    );
    for hook in [&labeller, &denier] {
        let dry_reviews: Vec<Value> = (hook.received().into_iter())
            .filter(|r| r["request"]["name"] == "dry")
            .collect();
        assert!(
            dry_reviews.iter().any(|r| r["request"]["dryRun"] == true),
            "{dry_reviews:?}"
        );
    }
    let (found, _) = kubectl_status(&kubeconfig, &["get", "configmap", "dry"]).await;
    assert!(!found, "a dry run stores nothing");
}

// A reinvocationPolicy IfNeeded webhook is called again when a later webhook changed the
// object; a Never one is not.
#[tokio::test]
async fn kubectl_writes_reinvoke_if_needed_webhooks() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    // One directory per webhook: each makes its own CA there.
    let (dir, other) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let first = admission_webhook::labelling(dir.path(), &[], "example.com/first", "1")
        .await
        .expect("starts");
    let second = admission_webhook::labelling(other.path(), &[], "example.com/second", "2")
        .await
        .expect("starts");
    let config = |hook: &apiary_tests::review_webhook::ReviewWebhook| {
        json!({"caBundle": base64::engine::general_purpose::STANDARD
            .encode(hook.ca_pem().expect("CA")), "url": hook.url()})
    };
    configure(
        &cluster,
        "Mutating",
        "a-first",
        json!([webhook(
            "first.example.com",
            config(&first),
            json!({"reinvocationPolicy": "IfNeeded"})
        )]),
    )
    .await;
    configure(
        &cluster,
        "Mutating",
        "b-second",
        json!([webhook("second.example.com", config(&second), json!({}))]),
    )
    .await;
    let created = created_until_labelled(&cluster, "node-2", "again", "example.com/second").await;
    let labels = &created["metadata"]["labels"];
    assert_eq!(labels["example.com/first"], "1", "{created}");
    assert_eq!(labels["example.com/second"], "2", "{created}");
    let name = created["metadata"]["name"].clone();
    let calls = |hook: &apiary_tests::review_webhook::ReviewWebhook| -> Vec<Value> {
        (hook.received().into_iter())
            .filter(|r| r["request"]["name"] == name)
            .collect()
    };
    let first_calls = calls(&first);
    assert_eq!(
        first_calls.len(),
        2,
        "called, then reinvoked: {first_calls:?}"
    );
    assert_eq!(
        first_calls[1]["request"]["object"]["metadata"]["labels"]["example.com/second"], "2",
        "the reinvocation sees the later webhook's change"
    );
    assert_eq!(calls(&second).len(), 1, "a Never webhook is not reinvoked");
}

// failurePolicy: an unreachable or silent (timed out) webhook fails the write under Fail,
// with Kubernetes' message, and lets it pass under Ignore.
#[tokio::test]
async fn kubectl_writes_follow_the_failure_policy_of_a_broken_webhook() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let silent = Silent::start().await.expect("starts");
    let unreachable = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        format!("https://127.0.0.1:{port}/gone")
    };
    let only = |label: &str| json!({"objectSelector": {"matchLabels": {"case": label}}});
    let with = |extra: Value, more: Value| {
        let mut extra = extra;
        if let (Some(e), Some(m)) = (extra.as_object_mut(), more.as_object()) {
            e.extend(m.clone());
        }
        extra
    };
    configure(
        &cluster,
        "Validating",
        "broken",
        json!([
            webhook(
                "gone-fail.example.com",
                json!({"url": unreachable}),
                with(only("gone-fail"), json!({"failurePolicy": "Fail"}))
            ),
            webhook(
                "gone-ignore.example.com",
                json!({"url": unreachable}),
                with(only("gone-ignore"), json!({"failurePolicy": "Ignore"}))
            ),
            webhook(
                "slow-fail.example.com",
                json!({"url": silent.url()}),
                with(
                    only("slow-fail"),
                    json!({"failurePolicy": "Fail", "timeoutSeconds": 1})
                )
            ),
            webhook(
                "slow-ignore.example.com",
                json!({"url": silent.url()}),
                with(
                    only("slow-ignore"),
                    json!({"failurePolicy": "Ignore", "timeoutSeconds": 1})
                )
            ),
        ]),
    )
    .await;
    let fail_gone = config_map(&cluster, "gone-fail", json!({"case": "gone-fail"}));
    let out = refused(&cluster, "node-1", &fail_gone, "failed calling webhook").await;
    assert!(
        out.contains("Internal error occurred: failed calling webhook \"gone-fail.example.com\": failed to call webhook: Post \"https://127.0.0.1:"),
        "{out}"
    );
    let fail_slow = config_map(&cluster, "slow-fail", json!({"case": "slow-fail"}));
    let (ok, out) = kubectl_status(
        &kubeconfig,
        &["--context", "node-1", "create", "-f", &fail_slow],
    )
    .await;
    assert!(!ok, "{out}");
    assert!(
        out.contains("failed calling webhook \"slow-fail.example.com\"")
            && out.contains("?timeout=1s\": context deadline exceeded"),
        "{out}"
    );
    for case in ["gone-ignore", "slow-ignore"] {
        let file = config_map(&cluster, case, json!({"case": case}));
        kubectl(&kubeconfig, &["--context", "node-1", "create", "-f", &file]).await;
    }
    let names = kubectl(
        &kubeconfig,
        &[
            "get",
            "configmaps",
            "-l",
            "case",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
    )
    .await;
    assert_eq!(names, "gone-ignore slow-ignore");
}

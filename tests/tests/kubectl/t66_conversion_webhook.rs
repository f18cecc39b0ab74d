//! kubectl and a CRD whose versions convert through a real TLS conversion webhook, on a
//! three-replica cluster: the webhook is reached through a Service's EndpointSlice (verified
//! as `<service>.<namespace>.svc` with the definition's CA bundle) and through a URL; an
//! object written in one version is stored in the other and reads back in each, on every
//! replica, without loss; a change of the storage version keeps both readable; and an
//! unreachable webhook fails the read with Kubernetes' message.

use apiary_tests::conversion_webhook;
use apiary_tests::conversion_webhook::WEIGHT_ANNOTATION;
use base64::Engine;
use serde_json::Value;
use serde_json::json;

use crate::run::kubectl;
use crate::run::kubernetes_cluster;
use crate::run::until;
use crate::run::write_file;

/// The definition: `v1` (host, port) stored, `v2` (address, weight) served, converted by the
/// webhook `client_config` names.
fn definition(client_config: &Value) -> String {
    let version = |name: &str, storage: bool, spec: Value| {
        json!({"name": name, "served": true, "storage": storage, "schema": {"openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": spec}}}}})
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                version("v1", true, json!({"host": {"type": "string"},
                                            "port": {"type": "integer"}})),
                version("v2", false, json!({"address": {"type": "string"},
                                             "weight": {"type": "integer"}})),
            ],
            "conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": client_config, "conversionReviewVersions": ["v1"]}},
        },
    })
    .to_string()
}

fn parsed(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

// CHECKLIST: R-VER-070 (objects round-trip between the versions without loss), R-VER-074
// (objects stored in the older version still read), R-VER-128 (the webhook is named under
// `spec.conversion.webhook`).
#[tokio::test]
async fn kubectl_reads_and_writes_every_version_through_a_conversion_webhook() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let dir = tempfile::tempdir().expect("dir");
    let webhook = conversion_webhook::start(dir.path(), &["convert.default.svc"])
        .await
        .expect("the webhook starts");
    let port = webhook
        .url()
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .expect("the URL has a port")
        .to_owned();
    let ca_bundle = base64::engine::general_purpose::STANDARD
        .encode(webhook.ca_pem().expect("the CA is readable"));

    // The webhook as a Service: its one ready endpoint is the loopback server.
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "convert", "namespace": "default"},
        "spec": {"ports": [{"port": 443, "targetPort": port.parse::<i64>().expect("port")}]}});
    let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "convert-1", "namespace": "default",
                     "labels": {"kubernetes.io/service-name": "convert"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
        "ports": [{"name": "", "port": port.parse::<i64>().expect("port"), "protocol": "TCP"}]});
    for (name, object) in [("service.json", service), ("slice.json", slice)] {
        kubectl(
            &kubeconfig,
            &[
                "apply",
                "-f",
                &write_file(&cluster, name, &object.to_string()),
            ],
        )
        .await;
    }
    let by_service = json!({"caBundle": ca_bundle,
        "service": {"namespace": "default", "name": "convert", "path": "/convert", "port": 443}});
    let crd = write_file(&cluster, "crd.json", &definition(&by_service));
    kubectl(&kubeconfig, &["apply", "-f", &crd]).await;
    let established = until(
        &kubeconfig,
        &["get", "widgets.v2.example.com", "-o", "json"],
        |ok, _| ok,
    )
    .await;
    assert!(established.contains("\"items\""), "{established}");

    // Written as v2: stored as v1, the weight kept in an annotation.
    let widget = json!({"apiVersion": "example.com/v2", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default", "labels": {"app": "db"}},
        "spec": {"address": "db.local:5432", "weight": 7}});
    let file = write_file(&cluster, "w1.json", &widget.to_string());
    kubectl(&kubeconfig, &["create", "-f", &file]).await;
    let v1 = parsed(
        &kubectl(
            &kubeconfig,
            &["get", "widgets.v1.example.com", "w1", "-o", "json"],
        )
        .await,
    );
    assert_eq!(v1["apiVersion"], "example.com/v1");
    assert_eq!(v1["spec"], json!({"host": "db.local", "port": 5432}));
    assert_eq!(v1["metadata"]["annotations"][WEIGHT_ANNOTATION], "7");
    assert_eq!(v1["metadata"]["labels"]["app"], "db");

    // Read back as v2 through another replica: the same object, nothing lost.
    let v2 = parsed(
        &kubectl(
            &kubeconfig,
            &[
                "--context",
                "node-2",
                "get",
                "widgets.v2.example.com",
                "-o",
                "json",
            ],
        )
        .await,
    );
    let item = &v2["items"][0];
    assert_eq!(item["apiVersion"], "example.com/v2");
    assert_eq!(
        item["spec"],
        json!({"address": "db.local:5432", "weight": 7})
    );
    assert!(
        item["metadata"]["annotations"][WEIGHT_ANNOTATION].is_null(),
        "{item}"
    );
    assert_eq!(item["metadata"]["uid"], v1["metadata"]["uid"]);

    let reviews = webhook.received();
    let desired: Vec<&str> = (reviews.iter())
        .filter_map(|r| r["request"]["desiredAPIVersion"].as_str())
        .collect();
    assert!(
        desired.contains(&"example.com/v1") && desired.contains(&"example.com/v2"),
        "{desired:?}"
    );
    assert!(
        reviews
            .iter()
            .all(|r| r["apiVersion"] == "apiextensions.k8s.io/v1")
    );
    assert!(reviews.iter().all(|r| r["request"]["uid"].is_string()));

    // v2 becomes the storage version, the webhook named by its URL: objects written in
    // either version read back in both.
    let by_url = json!({"caBundle": ca_bundle, "url": webhook.url()});
    let mut changed: Value = serde_json::from_str(&definition(&by_url)).expect("json");
    changed["spec"]["versions"][0]["storage"] = false.into();
    changed["spec"]["versions"][1]["storage"] = true.into();
    let file = write_file(&cluster, "crd-v2.json", &changed.to_string());
    kubectl(&kubeconfig, &["apply", "-f", &file]).await;
    let stored = kubectl(
        &kubeconfig,
        &[
            "get",
            "crd",
            "widgets.example.com",
            "-o",
            "jsonpath={.status.storedVersions}",
        ],
    )
    .await;
    assert_eq!(stored, r#"["v1","v2"]"#);
    let w2 = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w2", "namespace": "default"},
        "spec": {"host": "cache.local", "port": 6379}});
    kubectl(
        &kubeconfig,
        &[
            "create",
            "-f",
            &write_file(&cluster, "w2.json", &w2.to_string()),
        ],
    )
    .await;
    let both = parsed(
        &kubectl(
            &kubeconfig,
            &["get", "widgets.v2.example.com", "-o", "json"],
        )
        .await,
    );
    let addresses: Vec<&Value> = (both["items"].as_array().into_iter().flatten())
        .map(|i| &i["spec"]["address"])
        .collect();
    assert_eq!(
        addresses,
        [&json!("db.local:5432"), &json!("cache.local:6379")]
    );
    let w2 = parsed(
        &kubectl(
            &kubeconfig,
            &["get", "widgets.v1.example.com", "w2", "-o", "json"],
        )
        .await,
    );
    assert_eq!(w2["spec"], json!({"host": "cache.local", "port": 6379}));

    // An unreachable webhook fails every read that needs it, with Kubernetes' message.
    let dead = json!({"caBundle": ca_bundle, "url": "https://127.0.0.1:1/convert"});
    let mut unreachable: Value = serde_json::from_str(&definition(&dead)).expect("json");
    unreachable["spec"]["versions"][0]["storage"] = false.into();
    unreachable["spec"]["versions"][1]["storage"] = true.into();
    let file = write_file(&cluster, "crd-dead.json", &unreachable.to_string());
    kubectl(&kubeconfig, &["apply", "-f", &file]).await;
    let failed = until(
        &kubeconfig,
        &["get", "widgets.v2.example.com", "w1"],
        |ok, _| !ok,
    )
    .await;
    assert!(
        failed.contains(
            "conversion webhook for example.com/v1, Kind=Widget failed: \
             Post \"https://127.0.0.1:1/convert\""
        ),
        "{failed}"
    );
    // An object already in the version asked for needs no webhook.
    kubectl(&kubeconfig, &["get", "widgets.v1.example.com", "w1"]).await;
}

//! `kubectl apply --server-side` against the kubernetes flavor: the managedFields it leaves
//! (read back with `--show-managed-fields`, compared with the sets Kubernetes writes for the
//! same manifests), two field managers sharing, conflicting and forcing, `kubectl diff
//! --server-side`, and the switch from client-side to server-side apply.

use serde_json::Value;
use serde_json::json;

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

/// The annotation client-side apply keeps its last applied manifest in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn parse(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("kubectl -o json ({e}): {out}"))
}

/// A ConfigMap manifest named `name` with `data`.
fn configmap(name: &str, data: &[(&str, &str)]) -> String {
    let pairs: String = data
        .iter()
        .map(|(k, v)| format!("  {k}: \"{v}\"\n"))
        .collect();
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n\
         data:\n{pairs}"
    )
}

/// A Deployment manifest with one container of `image`, and an env var when `env` is set.
fn deployment(replicas: u32, image: &str, env: Option<(&str, &str)>) -> String {
    let env = env.map_or(String::new(), |(name, value)| {
        format!("        env:\n        - name: {name}\n          value: \"{value}\"\n")
    });
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ssa-web\n  namespace: default\n  \
         labels:\n    app: web\nspec:\n  replicas: {replicas}\n  selector:\n    matchLabels:\n      \
         app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      \
         containers:\n      - name: web\n        image: {image}\n        ports:\n        \
         - containerPort: 80\n          protocol: TCP\n{env}"
    )
}

/// The object `kind/name` as JSON, its managedFields included.
async fn get(kubeconfig: &std::path::Path, kind: &str, name: &str) -> Value {
    let out = kubectl(
        kubeconfig,
        &["get", kind, name, "-o", "json", "--show-managed-fields"],
    )
    .await;
    parse(&out)
}

/// The managedFields entry of `manager` with `operation`; fails when there is none or more
/// than one.
fn entry<'a>(object: &'a Value, manager: &str, operation: &str) -> &'a Value {
    let entries: Vec<&Value> = object["metadata"]["managedFields"]
        .as_array()
        .unwrap_or_else(|| panic!("no managedFields: {object}"))
        .iter()
        .filter(|e| e["manager"] == manager && e["operation"] == operation)
        .collect();
    assert_eq!(
        entries.len(),
        1,
        "one {operation} entry of {manager}: {object}"
    );
    entries[0]
}

/// The managers of `object`'s managedFields entries, sorted.
fn managers(object: &Value) -> Vec<String> {
    let mut names: Vec<String> = object["metadata"]["managedFields"]
        .as_array()
        .unwrap_or_else(|| panic!("no managedFields: {object}"))
        .iter()
        .map(|e| e["manager"].as_str().expect("a manager").to_owned())
        .collect();
    names.sort();
    names
}

/// Checks an Apply entry's fixed members besides its fields: Apply entries carry the
/// apiVersion they were applied with, `FieldsV1` and an RFC 3339 time.
fn assert_apply_entry(entry: &Value, api_version: &str, fields: &Value) {
    assert_eq!(entry["operation"], "Apply", "{entry}");
    assert_eq!(entry["apiVersion"], api_version, "{entry}");
    assert_eq!(entry["fieldsType"], "FieldsV1", "{entry}");
    let time = entry["time"].as_str().unwrap_or_else(|| panic!("{entry}"));
    assert!(
        chrono::DateTime::parse_from_rfc3339(time).is_ok(),
        "{entry}"
    );
    assert_eq!(&entry["fieldsV1"], fields, "{entry}");
}

/// The fields Kubernetes lists for `deployment(..)`: the selector is an atomic struct (one
/// leaf), containers and ports are list maps keyed by `name` and by `containerPort` with
/// `protocol` (the key as JSON, its fields sorted), each item also owning itself (`.`).
fn deployment_fields(env: bool) -> Value {
    let mut container = json!({
        ".": {},
        "f:image": {},
        "f:name": {},
        "f:ports": {
            "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                ".": {},
                "f:containerPort": {},
                "f:protocol": {}
            }
        }
    });
    if env {
        container["f:env"] = json!({
            "k:{\"name\":\"MODE\"}": {".": {}, "f:name": {}, "f:value": {}}
        });
    }
    json!({
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": container}}
            }
        }
    })
}

// R-RES-111, R-RES-112, R-RES-113, R-RES-203
#[tokio::test]
async fn kubectl_apply_server_side_twice_records_the_fields_kubernetes_lists() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();

    // The first apply creates the Deployment.
    let v1 = write_file(&cluster, "v1.yaml", &deployment(2, "nginx:1", None));
    let out = kubectl(&kubeconfig, &["apply", "--server-side", "-f", &v1]).await;
    assert!(
        out.contains("deployment.apps/ssa-web serverside-applied"),
        "{out}"
    );
    let created = get(&kubeconfig, "deployment", "ssa-web").await;
    assert_eq!(created["spec"]["replicas"], 2, "{created}");
    let applied = entry(&created, "kubectl", "Apply");
    assert_apply_entry(applied, "apps/v1", &deployment_fields(false));

    // The second apply, through another replica, changes the image and the replicas and adds
    // an env var: the same entry, now listing the env var too.
    let v2 = write_file(
        &cluster,
        "v2.yaml",
        &deployment(3, "nginx:2", Some(("MODE", "blue"))),
    );
    let out = kubectl(
        &kubeconfig,
        &["--context", "node-2", "apply", "--server-side", "-f", &v2],
    )
    .await;
    assert!(
        out.contains("deployment.apps/ssa-web serverside-applied"),
        "{out}"
    );
    let updated = get(&kubeconfig, "deployment", "ssa-web").await;
    assert_eq!(updated["spec"]["replicas"], 3, "{updated}");
    let container = &updated["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx:2", "{updated}");
    assert_eq!(
        container["env"],
        json!([{"name": "MODE", "value": "blue"}]),
        "{updated}"
    );
    assert_apply_entry(
        entry(&updated, "kubectl", "Apply"),
        "apps/v1",
        &deployment_fields(true),
    );
}

// R-RES-204, R-RES-206, R-RES-207, R-RES-208, R-RES-209, R-RES-210, R-RES-211
#[tokio::test]
async fn two_field_managers_share_conflict_and_force_with_kubectl() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let file = |name: &str, body: String| write_file(&cluster, name, &body);
    let apply = |path: String, extra: &[&str]| {
        let mut args: Vec<String> = ["apply", "--server-side", "-f"]
            .iter()
            .map(|a| (*a).to_owned())
            .collect();
        args.push(path);
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        let kubeconfig = kubeconfig.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            kubectl_status(&kubeconfig, &args).await
        }
    };
    let fields_of =
        |object: &Value, manager: &str| entry(object, manager, "Apply")["fieldsV1"].clone();

    // kubectl applies a, b and shared; its next apply omits b, which goes (no other owner).
    let (ok, out) = apply(
        file(
            "k1.yaml",
            configmap("ssa", &[("a", "1"), ("b", "2"), ("shared", "x")]),
        ),
        &[],
    )
    .await;
    assert!(
        ok && out.contains("configmap/ssa serverside-applied"),
        "{out}"
    );
    let (ok, out) = apply(
        file("k2.yaml", configmap("ssa", &[("a", "1"), ("shared", "x")])),
        &[],
    )
    .await;
    assert!(ok, "{out}");
    let object = get(&kubeconfig, "configmap", "ssa").await;
    assert_eq!(object["data"], json!({"a": "1", "shared": "x"}), "{object}");
    assert_eq!(
        fields_of(&object, "kubectl"),
        json!({"f:data": {"f:a": {}, "f:shared": {}}})
    );

    // alice applies the value shared already holds, and her own c: shared is owned by both.
    let alice = ["--field-manager=alice"];
    let (ok, out) = apply(
        file("a1.yaml", configmap("ssa", &[("c", "3"), ("shared", "x")])),
        &alice,
    )
    .await;
    assert!(ok, "{out}");
    let object = get(&kubeconfig, "configmap", "ssa").await;
    assert_eq!(managers(&object), ["alice", "kubectl"], "{object}");
    assert_eq!(
        fields_of(&object, "alice"),
        json!({"f:data": {"f:c": {}, "f:shared": {}}})
    );
    assert_eq!(
        fields_of(&object, "kubectl"),
        json!({"f:data": {"f:a": {}, "f:shared": {}}})
    );

    // alice changing the shared field conflicts with kubectl, named with the field; nothing
    // changes.
    let changed = file("a2.yaml", configmap("ssa", &[("c", "3"), ("shared", "y")]));
    let (ok, out) = apply(changed.clone(), &alice).await;
    assert!(!ok, "{out}");
    assert!(
        out.contains(r#"Apply failed with 1 conflict: conflict with "kubectl": .data.shared"#),
        "{out}"
    );
    assert!(out.contains("--force-conflicts"), "{out}");
    let unchanged = get(&kubeconfig, "configmap", "ssa").await;
    assert_eq!(unchanged["data"]["shared"], "x", "{unchanged}");
    assert_eq!(
        unchanged["metadata"]["resourceVersion"],
        object["metadata"]["resourceVersion"]
    );

    // Forced, through node-3: alice's value, and kubectl no longer owns the field.
    let (ok, out) = apply(
        changed,
        &[
            "--field-manager=alice",
            "--force-conflicts",
            "--context=node-3",
        ],
    )
    .await;
    assert!(ok, "{out}");
    let forced = get(&kubeconfig, "configmap", "ssa").await;
    assert_eq!(forced["data"]["shared"], "y", "{forced}");
    assert_eq!(
        fields_of(&forced, "alice"),
        json!({"f:data": {"f:c": {}, "f:shared": {}}})
    );
    assert_eq!(
        fields_of(&forced, "kubectl"),
        json!({"f:data": {"f:a": {}}})
    );

    // kubectl applies without the field it lost: no conflict, and alice's value stays.
    let (ok, out) = apply(file("k3.yaml", configmap("ssa", &[("a", "1")])), &[]).await;
    assert!(ok, "{out}");
    let kept = get(&kubeconfig, "configmap", "ssa").await;
    assert_eq!(
        kept["data"],
        json!({"a": "1", "c": "3", "shared": "y"}),
        "{kept}"
    );
}

// R-RES-113, R-RES-192
#[tokio::test]
async fn kubectl_diff_server_side_shows_a_change_and_changes_nothing() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let v1 = write_file(&cluster, "v1.yaml", &configmap("diffed", &[("a", "1")]));
    kubectl(&kubeconfig, &["apply", "--server-side", "-f", &v1]).await;
    let before = get(&kubeconfig, "configmap", "diffed").await;

    // The same manifest: no difference, exit 0.
    let (same, out) = kubectl_status(&kubeconfig, &["diff", "--server-side", "-f", &v1]).await;
    assert!(same && out.trim().is_empty(), "{out}");

    // A changed value: exit 1 with the line removed and the line added.
    let v2 = write_file(&cluster, "v2.yaml", &configmap("diffed", &[("a", "2")]));
    let (same, out) = kubectl_status(&kubeconfig, &["diff", "--server-side", "-f", &v2]).await;
    assert!(!same, "{out}");
    assert!(out.contains("-  a: \"1\""), "{out}");
    assert!(out.contains("+  a: \"2\""), "{out}");
    let after = get(&kubeconfig, "configmap", "diffed").await;
    assert_eq!(after["data"]["a"], "1", "{after}");
    assert_eq!(
        after["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );
}

// R-RES-113, R-RES-203
#[tokio::test]
async fn client_side_apply_then_server_side_apply_has_no_conflict() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();

    // Client-side apply: the creator is kubectl-client-side-apply, and the annotation holds the
    // manifest.
    let v1 = write_file(
        &cluster,
        "v1.yaml",
        &configmap("moved", &[("a", "1"), ("b", "2")]),
    );
    kubectl(&kubeconfig, &["apply", "-f", &v1]).await;
    let before = get(&kubeconfig, "configmap", "moved").await;
    let client_side = entry(&before, "kubectl-client-side-apply", "Update");
    assert!(
        client_side["fieldsV1"]["f:data"].get("f:a").is_some(),
        "{before}"
    );

    // Server-side apply changing a, owned by kubectl-client-side-apply: its old value is the
    // last applied one, so the server lets kubectl take it without a conflict and keeps the
    // annotation current. kubectl then moves the annotation to its own Apply manager and
    // merges the client-side entry into its server-side one (as kubectl 1.26+ does against
    // kube-apiserver).
    let v2 = write_file(
        &cluster,
        "v2.yaml",
        &configmap("moved", &[("a", "changed"), ("b", "2")]),
    );
    let out = kubectl(&kubeconfig, &["apply", "--server-side", "-f", &v2]).await;
    assert!(out.contains("configmap/moved serverside-applied"), "{out}");
    let after = get(&kubeconfig, "configmap", "moved").await;
    assert_eq!(after["data"], json!({"a": "changed", "b": "2"}), "{after}");
    assert_eq!(
        managers(&after),
        ["kubectl", "kubectl-last-applied"],
        "{after}"
    );
    assert_apply_entry(
        entry(&after, "kubectl", "Apply"),
        "v1",
        &json!({"f:data": {"f:a": {}, "f:b": {}}}),
    );
    assert_eq!(
        entry(&after, "kubectl-last-applied", "Apply")["fieldsV1"],
        json!({"f:metadata": {"f:annotations": {format!("f:{LAST_APPLIED}"): {}}}}),
        "{after}"
    );
    let annotation = after["metadata"]["annotations"][LAST_APPLIED]
        .as_str()
        .unwrap_or_else(|| panic!("{after}"));
    let last_applied: Value = serde_json::from_str(annotation).expect("JSON");
    assert_eq!(last_applied["data"]["a"], "changed", "{annotation}");
}

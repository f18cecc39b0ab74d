//! Server-side apply of a config map with the Python client's `patch_namespaced_config_map` and
//! the apply content type: created, then updated, through different replicas, with the
//! managedFields Kubernetes writes read back, and a conflicting apply of another manager.

use serde_json::json;

use crate::cluster;
use crate::summary_of;

// R-HA-016, R-RES-111, R-RES-112, R-RES-113, R-RES-203, R-RES-204, R-RES-237
#[tokio::test]
async fn the_python_client_applies_a_config_map_and_reads_its_managed_fields() {
    let (_cluster, kubeconfig) = cluster().await;
    let kubeconfig = kubeconfig.as_str();

    let summary = summary_of(
        "server_side_apply.py",
        &[kubeconfig, "node-1,node-2,node-3"],
    )
    .await;
    assert_eq!(summary["data"], json!({"a": "2", "b": "3"}), "{summary}");
    assert_eq!(
        summary["fieldsV1"],
        json!({"f:data": {"f:a": {}, "f:b": {}}}),
        "{summary}"
    );
    assert_eq!(
        summary["conflict"], r#"Apply failed with 1 conflict: conflict with "py-applier": .data.a"#,
        "{summary}"
    );
}

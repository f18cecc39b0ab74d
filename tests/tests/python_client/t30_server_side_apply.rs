//! Server-side apply of a config map with the Python client's `patch_namespaced_config_map` and
//! the apply content type: created, then updated, through different replicas, with the
//! managedFields Kubernetes writes read back, and a conflicting apply of another manager.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::python;
use serde_json::json;

use crate::run_script;

// R-HA-016, R-RES-111, R-RES-112, R-RES-113, R-RES-203, R-RES-204, R-RES-237
#[tokio::test]
async fn the_python_client_applies_a_config_map_and_reads_its_managed_fields() {
    // Before the cluster: a missing venv fails at once.
    python::python().unwrap();
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let kubeconfig = cluster.kubeconfig();
    let kubeconfig = kubeconfig.to_str().expect("a UTF-8 path");

    let out = run_script(
        "server_side_apply.py",
        &[kubeconfig, "node-1,node-2,node-3"],
    )
    .await;
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("a JSON summary");
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

//! JSON, strategic merge and merge patches, a Deployment scaled by a patch, and deletes with
//! stale and current preconditions, each call through a replica in turn.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::python;

use crate::run_script;

// R-HA-016, R-RES-114, R-RES-116, R-RES-117, R-RES-055, R-RES-062
#[tokio::test]
async fn the_python_client_patches_and_deletes_through_every_replica() {
    // Before the cluster: a missing venv fails at once.
    python::python().unwrap();
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let kubeconfig = cluster.kubeconfig();
    let kubeconfig = kubeconfig.to_str().expect("a UTF-8 path");

    let out = run_script("patch_delete.py", &[kubeconfig, "node-1,node-2,node-3"]).await;
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("a JSON summary");
    assert_eq!(
        summary["patched"],
        serde_json::json!({"b": "2", "c": "3"}),
        "{summary}"
    );
}

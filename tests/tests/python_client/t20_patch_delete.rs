//! JSON, strategic merge and merge patches, a Deployment scaled by a patch, and deletes with
//! stale and current preconditions, each call through a replica in turn.

use crate::cluster;
use crate::summary_of;

// R-HA-016, R-RES-114, R-RES-116, R-RES-117, R-RES-055, R-RES-062
#[tokio::test]
async fn the_python_client_patches_and_deletes_through_every_replica() {
    let (_cluster, kubeconfig) = cluster().await;
    let kubeconfig = kubeconfig.as_str();

    let summary = summary_of("patch_delete.py", &[kubeconfig, "node-1,node-2,node-3"]).await;
    assert_eq!(
        summary["patched"],
        serde_json::json!({"b": "2", "c": "3"}),
        "{summary}"
    );
}

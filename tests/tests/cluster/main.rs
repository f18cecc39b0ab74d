//! Black-box tests of real `apiary dev` clusters (three `apiary serve` processes) over HTTPS with
//! the admin client certificate of the generated kubeconfig. Each test starts its own cluster in
//! a temporary directory on free loopback ports.

mod t05_readiness;
mod t10_replication;
mod t20_conflicts;
mod t30_leader_loss;
mod t40_restart;

use apiary_tests::HttpClient;
use apiary_tests::objects;
use http::StatusCode;
use serde_json::Value;

/// Reads the config map `name` through `client` (replica `replica`, named in failures), which
/// must answer 200 OK; returns the object.
async fn read_configmap(client: &HttpClient, replica: usize, name: &str) -> Value {
    let item = objects::configmap_path(name);
    let read = client.get(&item).await.expect("the replica answers");
    assert_eq!(
        read.status,
        StatusCode::OK,
        "{name} on node-{replica}: {}",
        read.text()
    );
    read.json(&item).expect("a JSON object")
}

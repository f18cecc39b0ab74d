//! Black-box tests of real `apiary dev` clusters (three `apiary serve` processes) over HTTPS with
//! the admin client certificate of the generated kubeconfig. Each test starts its own cluster in
//! a temporary directory on free loopback ports.

mod t05_readiness;
mod t100_members;
mod t101_status;
mod t10_replication;
mod t110_snapshot;
mod t112_corrupt;
mod t120_namespace_deletion;
mod t130_garbage_collection;
mod t140_pod_deletion;
mod t20_conflicts;
mod t30_leader_loss;
mod t40_restart;
mod t50_continue_across_replicas;
mod t55_watch_across_replicas;
mod t60_lagging_follower;
mod t70_compaction;
mod t80_leader_under_load;
mod t82_concurrent_apply;
mod t90_flow_control;
mod t90_graceful_shutdown;
mod t95_rolling_upgrade;

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

/// `object`'s `metadata.resourceVersion` as a revision (DESIGN.md §3: a decimal raft index).
fn revision(object: &Value) -> u64 {
    objects::resource_version(object)
        .expect("resourceVersion set")
        .parse()
        .expect("a decimal revision")
}

/// Creates the config map `name` through `client` (replica `replica`, named in failures), which
/// must answer 201 Created; returns the created object.
async fn create_configmap(client: &HttpClient, replica: usize, name: &str, value: &str) -> Value {
    let path = objects::configmaps_path();
    let body = objects::configmap(name, &[("v", value)]);
    let created = client
        .post(&path, &body)
        .await
        .expect("the replica answers");
    assert_eq!(
        created.status,
        StatusCode::CREATED,
        "create {name} on node-{replica}: {}",
        created.text()
    );
    created.json(&path).expect("a JSON object")
}

/// Lists config maps through `client` with `query` (without the `?`); the replica must answer
/// 200 OK. Returns the list.
async fn list_configmaps(client: &HttpClient, replica: usize, query: &str) -> Value {
    let path = format!("{}?{query}", objects::configmaps_path());
    let list = client.get(&path).await.expect("the replica answers");
    assert_eq!(
        list.status,
        StatusCode::OK,
        "{path} on node-{replica}: {}",
        list.text()
    );
    list.json(&path).expect("a JSON list")
}

/// The names of a list's items, in order.
fn item_names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            item["metadata"]["name"]
                .as_str()
                .expect("a name")
                .to_owned()
        })
        .collect()
}

/// `value` percent-encoded for a query string (a continue token is opaque and may hold `=`,
/// `+` or `/`).
fn query_value(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Sets `data.v` of the config map `name` to `value` through `client` (read, then a PUT with
/// the read resourceVersion), which must answer 200 OK; returns the updated object.
async fn update_configmap(client: &HttpClient, replica: usize, name: &str, value: &str) -> Value {
    let path = objects::configmap_path(name);
    let mut object = read_configmap(client, replica, name).await;
    object["data"]["v"] = Value::from(value);
    let updated = client
        .put(&path, &object)
        .await
        .expect("the replica answers");
    assert_eq!(
        updated.status,
        StatusCode::OK,
        "update {name} on node-{replica}: {}",
        updated.text()
    );
    updated.json(&path).expect("a JSON object")
}

/// Deletes the config map `name` through `client`, which must answer 200 OK.
async fn delete_configmap(client: &HttpClient, replica: usize, name: &str) {
    let deleted = client
        .delete(&objects::configmap_path(name))
        .await
        .expect("the replica answers");
    assert_eq!(
        deleted.status,
        StatusCode::OK,
        "delete {name} on node-{replica}: {}",
        deleted.text()
    );
}

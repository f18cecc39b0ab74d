//! Fifty field managers apply fifty different keys of one config map at once, spread over the
//! three replicas, without a resourceVersion: every apply succeeds (the server retries a write
//! that raced another), every key is there, and each manager owns exactly its key.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::objects;
use bytes::Bytes;
use http::Method;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use crate::read_configmap;

/// The concurrent appliers, one field manager each.
const APPLIERS: usize = 50;

/// The key applier `i` owns, and its value.
fn key(i: usize) -> (String, String) {
    (format!("key-{i:02}"), format!("value-{i}"))
}

// R-RES-111, R-RES-113, R-RES-203, R-HA-003
#[tokio::test]
async fn fifty_managers_applying_one_object_at_once_each_keep_their_field() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let name = "applied-by-many";
    let created = cluster
        .client(1)
        .unwrap()
        .post(&objects::configmaps_path(), &objects::configmap(name, &[]))
        .await
        .unwrap();
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());

    let start = std::sync::Arc::new(tokio::sync::Barrier::new(APPLIERS));
    let appliers: Vec<_> = (0..APPLIERS)
        .map(|i| {
            let client = cluster.client(i % cluster.nodes() + 1).unwrap().clone();
            let start = start.clone();
            let (key, value) = key(i);
            // YAML, as kubectl would send it.
            let body = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  \
                 namespace: {}\ndata:\n  {key}: {value}\n",
                objects::NAMESPACE
            );
            let path = format!("{}?fieldManager=applier-{i}", objects::configmap_path(name));
            tokio::spawn(async move {
                start.wait().await;
                client
                    .send_typed(
                        Method::PATCH,
                        &path,
                        "application/apply-patch+yaml",
                        Bytes::from(body),
                    )
                    .await
            })
        })
        .collect();
    let mut failed = Vec::new();
    for (i, applier) in futures::future::join_all(appliers)
        .await
        .into_iter()
        .enumerate()
    {
        let reply = applier
            .expect("the applier runs")
            .expect("the replica answers");
        if reply.status != StatusCode::OK {
            failed.push(format!("applier-{i}: {} {}", reply.status, reply.text()));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {APPLIERS} applies failed: {failed:#?}",
        failed.len()
    );

    for replica in 1..=cluster.nodes() {
        let object = read_configmap(cluster.client(replica).unwrap(), replica, name).await;
        let data = object["data"].as_object().expect("data");
        assert_eq!(data.len(), APPLIERS, "node-{replica}: {object}");
        let entries = object["metadata"]["managedFields"]
            .as_array()
            .unwrap_or_else(|| panic!("no managedFields on node-{replica}: {object}"));
        let applied: Vec<&Value> = entries
            .iter()
            .filter(|e| e["operation"] == "Apply")
            .collect();
        assert_eq!(applied.len(), APPLIERS, "node-{replica}: {object}");
        for i in 0..APPLIERS {
            let (key, value) = key(i);
            assert_eq!(data[&key], value.as_str(), "node-{replica}: {object}");
            let manager = format!("applier-{i}");
            let own: Vec<&&Value> = applied.iter().filter(|e| e["manager"] == manager).collect();
            assert_eq!(own.len(), 1, "node-{replica}, {manager}: {object}");
            assert_eq!(own[0]["apiVersion"], "v1", "{manager}");
            assert_eq!(own[0]["fieldsType"], "FieldsV1", "{manager}");
            assert_eq!(
                own[0]["fieldsV1"],
                json!({"f:data": {format!("f:{key}"): {}}}),
                "node-{replica}, {manager}"
            );
        }
    }
}

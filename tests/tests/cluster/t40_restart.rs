//! Data survives a full stop and restart of the cluster on the same directory.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::objects;
use http::StatusCode;

use crate::read_configmap;

// R-RES-004
#[tokio::test]
async fn accepted_writes_are_still_there_after_every_replica_restarts() {
    let mut cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let path = objects::configmaps_path();
    let mut written = Vec::new();

    for i in 0..6usize {
        let name = format!("durable-{i}");
        let reply = cluster
            .client(i % 3 + 1)
            .unwrap()
            .post(&path, &objects::configmap(&name, &[("v", &name)]))
            .await
            .unwrap();
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        written.push(reply.json(&path).unwrap());
    }
    // An update and a delete must survive too.
    let mut update = written[0].clone();
    update["data"]["v"] = "updated".into();
    let item0 = objects::configmap_path("durable-0");
    let updated = cluster
        .client(2)
        .unwrap()
        .put(&item0, &update)
        .await
        .unwrap();
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());
    written[0] = updated.json(&item0).unwrap();
    let item5 = objects::configmap_path("durable-5");
    let deleted = cluster.client(3).unwrap().delete(&item5).await.unwrap();
    assert!(deleted.status.is_success(), "{}", deleted.text());
    written.pop();

    // Ctrl-C stops every replica; the same command on the same directory starts them again.
    cluster.start_again().await.unwrap();

    for replica in 1..=3 {
        let client = cluster.client(replica).unwrap();
        for object in &written {
            let name = object["metadata"]["name"].as_str().unwrap();
            let read = read_configmap(client, replica, name).await;
            assert_eq!(read["data"], object["data"], "{name} on node-{replica}");
            assert_eq!(
                read["metadata"]["resourceVersion"], object["metadata"]["resourceVersion"],
                "{name} on node-{replica}"
            );
        }
        let gone = client.get(&item5).await.unwrap();
        assert_eq!(gone.status, StatusCode::NOT_FOUND, "deleted stays deleted");
    }

    // The restarted cluster accepts writes, at a revision after everything before the restart.
    let last: u64 = objects::resource_version(&written[0])
        .unwrap()
        .parse()
        .unwrap();
    let after = cluster
        .client(1)
        .unwrap()
        .post(&path, &objects::configmap("after-restart", &[("v", "x")]))
        .await
        .unwrap();
    assert_eq!(after.status, StatusCode::CREATED, "{}", after.text());
    let after: u64 = objects::resource_version(&after.json(&path).unwrap())
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        after > last,
        "revision {after} after the restart, {last} before"
    );
}

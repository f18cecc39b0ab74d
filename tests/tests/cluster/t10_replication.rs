//! Writes through one replica are read back, at once and with the same resourceVersion, from
//! the others.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::objects;
use http::StatusCode;

use crate::read_configmap;

fn rv(object: &serde_json::Value) -> u64 {
    objects::resource_version(object)
        .expect("resourceVersion set")
        .parse()
        .expect("a decimal revision (DESIGN.md §3)")
}

// R-HA-002, R-HA-003, R-HA-004
#[tokio::test]
async fn a_create_on_a_follower_is_read_at_once_on_every_replica() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let path = objects::configmaps_path();

    // A create through node-2, then a quorum read (resourceVersion unset) on node-1 and node-3
    // sent right after the create's response: the read must see it (R-HA-004), whichever replica
    // leads, so at least one of the creates below goes through a follower (R-HA-003).
    let body = objects::configmap("via-node-2", &[("greeting", "hello")]);
    let created = cluster.client(2).unwrap().post(&path, &body).await.unwrap();
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let created = created.json(&path).unwrap();
    assert_eq!(created["data"]["greeting"], "hello");
    for reader in [1, 3] {
        let read = read_configmap(cluster.client(reader).unwrap(), reader, "via-node-2").await;
        assert_eq!(read["data"]["greeting"], "hello", "node-{reader}");
        // R-HA-002: the revision the leader's log assigned, identical on every replica.
        assert_eq!(rv(&read), rv(&created), "node-{reader}");
    }

    // Writes rotate over the replicas, each followed by a read on the next replica: every read
    // sees the write acknowledged just before it, and revisions strictly increase.
    let mut last = rv(&created);
    let mut expected = vec![("via-node-2".to_owned(), rv(&created))];
    for i in 0..12usize {
        let writer = i % 3 + 1;
        let reader = (i + 1) % 3 + 1;
        let name = format!("rotate-{i}");
        let value = format!("value-{i}");
        let body = objects::configmap(&name, &[("v", &value)]);
        let created = cluster
            .client(writer)
            .unwrap()
            .post(&path, &body)
            .await
            .unwrap();
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
        let revision = rv(&created.json(&path).unwrap());
        assert!(
            revision > last,
            "revisions strictly increase: {revision} after {last}"
        );
        last = revision;
        let read = read_configmap(cluster.client(reader).unwrap(), reader, &name).await;
        assert_eq!(read["data"]["v"], value.as_str());
        assert_eq!(rv(&read), revision);
        expected.push((name, revision));
    }

    // Every replica lists every object with the same resourceVersions, at a collection
    // revision no older than the last write.
    for replica in 1..=3 {
        let list = cluster.client(replica).unwrap().get(&path).await.unwrap();
        assert_eq!(list.status, StatusCode::OK, "{}", list.text());
        let list = list.json(&path).unwrap();
        assert!(
            rv(&list) >= last,
            "node-{replica} listed at {} < {last}",
            rv(&list)
        );
        let items = list["items"].as_array().expect("items");
        for (name, revision) in &expected {
            let item = items
                .iter()
                .find(|item| item["metadata"]["name"] == name.as_str())
                .unwrap_or_else(|| panic!("{name} missing on node-{replica}"));
            assert_eq!(rv(item), *revision, "{name} on node-{replica}");
        }
    }
}

//! Optimistic concurrency across replicas: a name is taken once, and an update must carry the
//! current resourceVersion, whichever replica each request goes through.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::objects;
use http::StatusCode;

use crate::read_configmap;

// R-RES-012, R-RES-069, R-RES-070, R-HA-003
#[tokio::test]
async fn duplicate_creates_and_stale_updates_get_409_on_any_replica() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let path = objects::configmaps_path();
    let item = objects::configmap_path("contested");

    let first = cluster
        .client(1)
        .unwrap()
        .post(
            &path,
            &objects::configmap("contested", &[("owner", "first")]),
        )
        .await
        .unwrap();
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.text());
    let first = first.json(&path).unwrap();

    // The same name again, through another replica: 409 AlreadyExists, first object unchanged.
    let second = cluster
        .client(3)
        .unwrap()
        .post(
            &path,
            &objects::configmap("contested", &[("owner", "second")]),
        )
        .await
        .unwrap();
    assert_eq!(second.status, StatusCode::CONFLICT, "{}", second.text());
    let status = second.json(&path).unwrap();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "AlreadyExists");
    assert_eq!(status["code"], 409);
    let stored = read_configmap(cluster.client(2).unwrap(), 2, "contested").await;
    assert_eq!(stored["data"]["owner"], "first");
    assert_eq!(
        stored["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );

    // An update through node-2 carrying the current resourceVersion succeeds with a new one.
    let mut update = first.clone();
    update["data"]["owner"] = "updated".into();
    let updated = cluster
        .client(2)
        .unwrap()
        .put(&item, &update)
        .await
        .unwrap();
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());
    let updated = updated.json(&item).unwrap();
    assert_eq!(updated["data"]["owner"], "updated");
    assert_ne!(
        updated["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );

    // The same stale resourceVersion again, through node-3: 409 Conflict, object unchanged.
    let mut stale = first.clone();
    stale["data"]["owner"] = "stale".into();
    let rejected = cluster.client(3).unwrap().put(&item, &stale).await.unwrap();
    assert_eq!(rejected.status, StatusCode::CONFLICT, "{}", rejected.text());
    let status = rejected.json(&item).unwrap();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "Conflict");
    for replica in 1..=3 {
        let now = read_configmap(cluster.client(replica).unwrap(), replica, "contested").await;
        assert_eq!(now["data"]["owner"], "updated", "node-{replica}");
        assert_eq!(
            now["metadata"]["resourceVersion"], updated["metadata"]["resourceVersion"],
            "node-{replica}"
        );
    }
}

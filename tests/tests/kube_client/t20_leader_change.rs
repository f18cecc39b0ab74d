//! kube-rs keeps working through the surviving replicas after the leader is killed.

use std::future::Future;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::kubeconfig;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::api::PostParams;

use crate::configmaps;

/// How long one call may keep failing while the survivors elect a new leader.
const ELECTION_LIMIT: Duration = Duration::from_secs(30);

/// Calls `call` until it succeeds or fails with a client error (4xx, which a retry cannot fix),
/// for at most [`ELECTION_LIMIT`].
async fn through_election<T, F, Fut>(mut call: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let start = Instant::now();
    loop {
        match call().await {
            Ok(value) => return Ok(value),
            Err(kube::Error::Api(status)) if (400..500).contains(&status.code) => {
                return Err(kube::Error::Api(status));
            }
            Err(e) if start.elapsed() > ELECTION_LIMIT => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

fn configmap(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some([("v".to_owned(), name.to_owned())].into()),
        ..ConfigMap::default()
    }
}

// R-HA-016, R-HA-011
#[tokio::test]
async fn kube_rs_writes_and_reads_through_the_survivors_of_a_leader_crash() {
    kubeconfig::install_crypto_provider();
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let victim = cluster
        .wait_leader(Duration::from_secs(10))
        .await
        .unwrap_or(1);
    let survivors: Vec<usize> = (1..=3).filter(|&i| i != victim).collect();
    let writer = configmaps(&cluster, survivors[0]).await;
    let reader = configmaps(&cluster, survivors[1]).await;

    writer
        .create(&PostParams::default(), &configmap("before-crash"))
        .await
        .unwrap();
    cluster.kill_replica(victim).unwrap();

    let params = PostParams::default();
    let after = configmap("after");
    match through_election(|| writer.create(&params, &after)).await {
        Ok(created) => assert!(created.metadata.resource_version.is_some()),
        // An attempt that timed out during the election was committed after all.
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(e) => panic!("create through a survivor: {e:?}"),
    }
    for name in ["before-crash", "after"] {
        let read = through_election(|| reader.get(name)).await.unwrap();
        assert_eq!(read.data, configmap(name).data, "{name} on a survivor");
    }
}

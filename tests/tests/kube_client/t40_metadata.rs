//! kube-rs metadata-only calls: `Api::get_metadata`, `list_metadata` and `watch_metadata` ask
//! for `PartialObjectMetadata` / `PartialObjectMetadataList` (JSON, `meta.k8s.io/v1`) and get
//! the objects' metadata without their data, through every replica.

use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::kubeconfig;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ListParams;
use kube::api::ObjectMeta;
use kube::api::PostParams;
use kube::api::WatchEvent;
use kube::api::WatchParams;

use crate::configmaps;

/// How long the metadata watch may take to report the create.
const WATCH_TIMEOUT: Duration = Duration::from_secs(30);

fn labelled(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some([("tier".to_owned(), "meta".to_owned())].into()),
            ..ObjectMeta::default()
        },
        data: Some([("secret-ish".to_owned(), "x".repeat(64))].into()),
        ..ConfigMap::default()
    }
}

// R-HA-016
#[tokio::test]
async fn kube_rs_reads_and_watches_metadata_only() {
    kubeconfig::install_crypto_provider();
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let writer = configmaps(&cluster, 1).await;
    let reader = configmaps(&cluster, 2).await;
    let watcher = configmaps(&cluster, 3).await;

    let created = writer
        .create(&PostParams::default(), &labelled("meta-1"))
        .await
        .unwrap();
    let meta = reader.get_metadata("meta-1").await.unwrap();
    assert_eq!(
        meta.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    assert_eq!(meta.metadata.uid, created.metadata.uid);
    assert_eq!(meta.metadata.labels, created.metadata.labels);

    let list = reader
        .list_metadata(&ListParams::default().labels("tier=meta"))
        .await
        .unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].metadata.name.as_deref(), Some("meta-1"));
    let start = list
        .metadata
        .resource_version
        .clone()
        .expect("a list resourceVersion");

    let mut stream = watcher
        .watch_metadata(
            &WatchParams::default().labels("tier=meta").timeout(60),
            &start,
        )
        .await
        .unwrap()
        .boxed();
    let second = writer
        .create(&PostParams::default(), &labelled("meta-2"))
        .await
        .unwrap();
    let event = tokio::time::timeout(WATCH_TIMEOUT, stream.next())
        .await
        .expect("an event in time")
        .expect("the watch goes on")
        .unwrap();
    match event {
        WatchEvent::Added(object) => {
            assert_eq!(object.metadata.name.as_deref(), Some("meta-2"));
            assert_eq!(
                object.metadata.resource_version,
                second.metadata.resource_version
            );
        }
        other => panic!("expected ADDED, got {other:?}"),
    }
}

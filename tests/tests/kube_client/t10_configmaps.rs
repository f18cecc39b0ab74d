//! `Api<ConfigMap>` create, get, list, replace and delete, each through a different replica.

use std::collections::BTreeMap;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::kubeconfig;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::DeleteParams;
use kube::api::ListParams;
use kube::api::ObjectMeta;
use kube::api::PostParams;

use crate::configmaps;

fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

// R-HA-016, R-HA-003, R-RES-069
#[tokio::test]
async fn kube_rs_round_trips_a_configmap_across_replicas() {
    kubeconfig::install_crypto_provider();
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let node1 = configmaps(&cluster, 1).await;
    let node2 = configmaps(&cluster, 2).await;
    let node3 = configmaps(&cluster, 3).await;

    let wanted = ConfigMap {
        metadata: ObjectMeta {
            name: Some("kube-rs".to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(data(&[("greeting", "hello")])),
        ..ConfigMap::default()
    };
    let created = node1.create(&PostParams::default(), &wanted).await.unwrap();
    assert_eq!(created.metadata.name.as_deref(), Some("kube-rs"));
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.resource_version.is_some());

    let read = node2.get("kube-rs").await.unwrap();
    assert_eq!(read.data, wanted.data);
    assert_eq!(
        read.metadata.resource_version,
        created.metadata.resource_version
    );

    let listed = node3.list(&ListParams::default()).await.unwrap();
    assert!(listed.metadata.resource_version.is_some());
    assert!(
        listed
            .items
            .iter()
            .any(|cm| cm.metadata.name.as_deref() == Some("kube-rs")),
        "list on node-3 has the ConfigMap"
    );

    let mut changed = read.clone();
    changed.data = Some(data(&[("greeting", "bonjour")]));
    let replaced = node2
        .replace("kube-rs", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_eq!(replaced.data, changed.data);
    assert_ne!(
        replaced.metadata.resource_version,
        read.metadata.resource_version
    );
    assert_eq!(node3.get("kube-rs").await.unwrap().data, changed.data);

    // Replacing again with the old resourceVersion is a conflict (409) for kube-rs too.
    let stale = node1
        .replace("kube-rs", &PostParams::default(), &changed)
        .await
        .unwrap_err();
    assert!(
        matches!(&stale, kube::Error::Api(status) if status.code == 409),
        "{stale:?}"
    );

    node3
        .delete("kube-rs", &DeleteParams::default())
        .await
        .unwrap();
    let missing = node1.get_opt("kube-rs").await.unwrap();
    assert!(missing.is_none(), "deleted through node-3, gone on node-1");
}

//! The kube-rs client (unmodified, from crates.io) against a real
//! `apiary dev --flavor kubernetes` cluster, one `Client` per kubeconfig context, including
//! across a leader change.

mod t10_configmaps;
mod t20_leader_change;
mod t30_paging_watch_patch;
mod t40_metadata;

use apiary_tests::DevCluster;
use apiary_tests::kubeconfig;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::Client;

/// The config maps of `default`, through `replica`'s kubeconfig context.
async fn configmaps(cluster: &DevCluster, replica: usize) -> Api<ConfigMap> {
    let config = kubeconfig::kube_config(&cluster.kubeconfig(), &DevCluster::context(replica))
        .await
        .expect("the kubeconfig context loads");
    let client = Client::try_from(config).expect("kube-rs accepts the configuration");
    Api::namespaced(client, "default")
}

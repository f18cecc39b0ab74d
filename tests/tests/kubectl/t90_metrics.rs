//! `kubectl get --raw /metrics` on a cluster `apiary dev` started with
//! `--show-hidden-metrics-for-version`: kube-apiserver's request metrics with their labels,
//! the store's under etcd's names, and the hidden deprecated metric shown again on every
//! replica, because `apiary dev` passed the flag on.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::objects;
use http::StatusCode;

use crate::run::kubectl;
use crate::run::kubectl_available;

/// The sample lines of `metric` in `scrape`.
fn samples<'a>(scrape: &'a str, metric: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    scrape.lines().filter(move |line| {
        line.strip_prefix(metric)
            .is_some_and(|rest| rest.starts_with(['{', ' ']))
    })
}

// R-VER-092
#[tokio::test]
async fn kubectl_get_raw_metrics_reads_the_api_and_store_metrics() {
    if !kubectl_available() {
        return;
    }
    let options =
        DevOptions::flavor(Flavor::Kubernetes).flag("--show-hidden-metrics-for-version=1.36");
    let cluster = DevCluster::start(options)
        .await
        .expect("the cluster starts");
    let kubeconfig = cluster.kubeconfig();
    let created = cluster
        .client(1)
        .unwrap()
        .post(
            &objects::configmaps_path(),
            &objects::configmap("counted", &[("k", "v")]),
        )
        .await
        .unwrap();
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());

    let scrape = kubectl(&kubeconfig, &["get", "--raw", "/metrics"]).await;
    assert!(
        scrape.contains("# HELP apiserver_request_total [STABLE] Counter of apiserver requests"),
        "{scrape}"
    );
    assert!(scrape.contains("# TYPE apiserver_request_total counter\n"));
    assert!(scrape.contains("# TYPE apiserver_request_duration_seconds histogram\n"));
    assert!(
        samples(&scrape, "apiserver_request_duration_seconds_bucket")
            .any(|l| l.contains("le=\"60\"")),
        "kube-apiserver's buckets"
    );
    assert!(samples(&scrape, "etcd_server_has_leader").any(|l| l.ends_with(" 1")));
    assert!(
        scrape.contains(
            "# HELP apiserver_storage_objects [STABLE] (Deprecated since 1.34.0) [DEPRECATED, consider using apiserver_resource_objects instead]"
        ),
        "the hidden metric is shown again"
    );
    // kubectl's own discovery before the scrape was counted on the replica it reached, as
    // were the create on node-1 when that is the same replica; every replica counts requests.
    assert!(
        samples(&scrape, "apiserver_request_total").any(|l| l.contains("component=\"apiserver\""))
    );
    assert!(
        samples(&scrape, "apiserver_request_total").all(|l| l.contains("verb=\"")
            && l.contains("dry_run=\"")
            && l.contains("scope=\"")
            && l.contains("code=\"")),
        "{scrape}"
    );
}

//! kube-rs beyond single-object round trips, each call through a replica in turn: a paged list
//! (`ListParams::limit` / `continue_token`), `Api::watch` on one replica seeing a create, merge
//! and strategic merge patches and a delete made through another, and a Deployment scaled by a
//! patch and deleted. kube 5 has no Protobuf codec (it sends and accepts JSON only), so JSON is
//! what these prove.

use std::collections::BTreeSet;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::kubeconfig;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::DeleteParams;
use kube::api::ListParams;
use kube::api::ObjectMeta;
use kube::api::Patch;
use kube::api::PatchParams;
use kube::api::PostParams;
use kube::api::WatchEvent;
use kube::api::WatchParams;
use serde_json::json;

use crate::configmaps;

/// How many config maps the paged list goes through, and its page size.
const COUNT: usize = 20;
const LIMIT: u32 = 3;

/// How long the watch may take to report every write.
const WATCH_TIMEOUT: Duration = Duration::from_secs(30);

fn configmap(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some([("v".to_owned(), value.to_owned())].into()),
        ..ConfigMap::default()
    }
}

/// Creates [`COUNT`] config maps and pages through them, each page from the next replica: every
/// object once, every page at most [`LIMIT`] items and at the first page's resourceVersion.
async fn pages(apis: &[Api<ConfigMap>]) {
    let mut created = BTreeSet::new();
    for i in 0..COUNT {
        let name = format!("kube-page-{i:02}");
        apis[i % apis.len()]
            .create(&PostParams::default(), &configmap(&name, "1"))
            .await
            .expect("create");
        created.insert(name);
    }
    let mut names = Vec::new();
    let mut versions = BTreeSet::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut params = ListParams::default().limit(LIMIT);
        if let Some(token) = &token {
            params = params.continue_token(token);
        }
        let page = apis[pages % apis.len()]
            .list(&params)
            .await
            .expect("list a page");
        pages += 1;
        assert!(page.items.len() <= LIMIT as usize, "page {pages}");
        names.extend(page.items.into_iter().filter_map(|cm| cm.metadata.name));
        versions.insert(page.metadata.resource_version);
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
        assert!(pages <= COUNT + 10, "the continue chain does not end");
    }
    let unique: BTreeSet<String> = names.iter().cloned().collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "an object listed twice: {names:?}"
    );
    assert!(created.is_subset(&unique), "listed {names:?}");
    assert_eq!(versions.len(), 1, "pages at several versions: {versions:?}");
    assert_eq!(pages, names.len().div_ceil(LIMIT as usize));
}

/// What a watch event says of `name`: its type and resourceVersion, or `None` for another
/// object or a bookmark.
fn event_of(event: WatchEvent<ConfigMap>, name: &str) -> Option<(&'static str, String)> {
    let (kind, object) = match event {
        WatchEvent::Added(o) => ("ADDED", o),
        WatchEvent::Modified(o) => ("MODIFIED", o),
        WatchEvent::Deleted(o) => ("DELETED", o),
        WatchEvent::Bookmark(_) => return None,
        WatchEvent::Error(status) => panic!("the watch failed: {status:?}"),
    };
    (object.metadata.name.as_deref() == Some(name))
        .then(|| (kind, object.metadata.resource_version.unwrap_or_default()))
}

/// `watcher` follows config maps from a list's resourceVersion while `writer` creates, patches
/// twice and deletes one: the watch reports each write, in order, at the version it answered.
async fn watches(watcher: &Api<ConfigMap>, writer: &Api<ConfigMap>) {
    let name = "kube-watched";
    let start = watcher
        .list(&ListParams::default().limit(1))
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("a list resourceVersion");
    let mut stream = watcher
        .watch(&WatchParams::default().timeout(60), &start)
        .await
        .expect("watch")
        .boxed();

    let params = PatchParams::default();
    let created = writer
        .create(&PostParams::default(), &configmap(name, "1"))
        .await
        .expect("create");
    let merged = writer
        .patch(name, &params, &Patch::Merge(json!({"data": {"v": "2"}})))
        .await
        .expect("merge patch");
    let strategic = writer
        .patch(
            name,
            &params,
            &Patch::Strategic(json!({"metadata": {"labels": {"patched": "yes"}}})),
        )
        .await
        .expect("strategic patch");
    assert_eq!(merged.data, configmap(name, "2").data);
    assert_eq!(strategic.data, merged.data, "a label patch keeps the data");
    writer
        .delete(name, &DeleteParams::default())
        .await
        .expect("delete");

    let mut seen = Vec::new();
    while seen.last().is_none_or(|(kind, _)| *kind != "DELETED") {
        let event = tokio::time::timeout(WATCH_TIMEOUT, stream.next())
            .await
            .unwrap_or_else(|_| panic!("no DELETED within {WATCH_TIMEOUT:?}; saw {seen:?}"))
            .unwrap_or_else(|| panic!("the watch ended; saw {seen:?}"))
            .expect("a watch event");
        seen.extend(event_of(event, name));
    }
    let version = |o: &ConfigMap| o.metadata.resource_version.clone().unwrap_or_default();
    assert_eq!(
        seen[..3],
        [
            ("ADDED", version(&created)),
            ("MODIFIED", version(&merged)),
            ("MODIFIED", version(&strategic)),
        ],
        "{seen:?}"
    );
    assert_eq!(seen.len(), 4, "{seen:?}");
}

fn deployment(name: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}
            }
        }
    }))
    .expect("a Deployment")
}

/// A Deployment created, scaled by a strategic merge patch and deleted, each through another
/// replica.
async fn scales_a_deployment(cluster: &DevCluster) {
    let mut apis = Vec::new();
    for replica in 1..=3 {
        let client = configmaps(cluster, replica).await.into_client();
        apis.push(Api::<Deployment>::namespaced(client, "default"));
    }
    let name = "kube-deployment";
    apis[0]
        .create(&PostParams::default(), &deployment(name))
        .await
        .expect("create the Deployment");
    let scaled = apis[1]
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"replicas": 3}})),
        )
        .await
        .expect("scale the Deployment");
    assert_eq!(scaled.spec.replicas, Some(3));
    apis[2]
        .delete(name, &DeleteParams::default())
        .await
        .expect("delete the Deployment");
    assert!(
        apis[0]
            .get_opt(name)
            .await
            .expect("get the Deployment")
            .is_none(),
        "deleted"
    );
}

// R-HA-016, R-HA-008, R-RES-182, R-RES-183, R-RES-184, R-HA-010, R-RES-116, R-RES-117
#[tokio::test]
async fn kube_rs_pages_watches_patches_and_deletes_across_replicas() {
    kubeconfig::install_crypto_provider();
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let mut apis = Vec::new();
    for replica in 1..=3 {
        apis.push(configmaps(&cluster, replica).await);
    }
    pages(&apis).await;
    watches(&apis[2], &apis[0]).await;
    scales_a_deployment(&cluster).await;
}

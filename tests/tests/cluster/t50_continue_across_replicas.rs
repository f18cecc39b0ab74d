//! A paged list started on one replica is continued on the others: every replica serves the
//! same next page at the first page's revision, and writes made after the first page stay out.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use serde_json::Value;

use crate::create_configmap;
use crate::item_names;
use crate::list_configmaps;
use crate::query_value;
use crate::revision;
use crate::update_configmap;

/// Items per page.
const LIMIT: usize = 3;

/// What must agree between replicas serving one page: the items with their versions, the
/// collection's resourceVersion, and whether more pages follow.
fn page_view(page: &Value) -> (Vec<(String, u64)>, u64, bool) {
    let items = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            (
                item["metadata"]["name"]
                    .as_str()
                    .expect("a name")
                    .to_owned(),
                revision(item),
            )
        })
        .collect();
    let more = page["metadata"]["continue"]
        .as_str()
        .is_some_and(|token| !token.is_empty());
    (items, revision(page), more)
}

// R-HA-008, R-RES-167, R-RES-184
#[tokio::test]
async fn a_continue_token_from_node_1_yields_the_same_next_page_on_every_replica() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let node1 = cluster.client(1).unwrap();
    for i in 0..8 {
        create_configmap(node1, 1, &format!("page-{i}"), "before").await;
    }
    // Everything the paged list must return: a whole list, with no write between it and the
    // first page.
    let whole = item_names(&list_configmaps(node1, 1, "").await);
    let first = list_configmaps(node1, 1, &format!("limit={LIMIT}")).await;
    let (first_items, at, more) = page_view(&first);
    assert_eq!(first_items.len(), LIMIT, "{first}");
    assert!(
        more,
        "a first page of {LIMIT} out of 8 has a continue token: {first}"
    );

    // Changes after the first page: a new object that sorts into a later page, and a change to
    // one that is in a later page. Neither may show (R-RES-184).
    create_configmap(cluster.client(2).unwrap(), 2, "page-4a", "after").await;
    let changed = update_configmap(cluster.client(3).unwrap(), 3, "page-6", "after").await;
    assert!(revision(&changed) > at);

    let mut names = item_names(&first);
    let mut token = first["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_owned();
    let mut page_number = 1;
    loop {
        page_number += 1;
        let query = format!("limit={LIMIT}&continue={}", query_value(&token));
        let mut pages = Vec::new();
        for replica in 1..=3 {
            let page = list_configmaps(cluster.client(replica).unwrap(), replica, &query).await;
            pages.push(page);
        }
        let view = page_view(&pages[0]);
        for (replica, page) in pages.iter().enumerate().skip(1) {
            assert_eq!(
                page_view(page),
                view,
                "page {page_number} on node-{} differs from node-1's",
                replica + 1
            );
        }
        let (items, page_at, more) = view;
        // R-RES-167: every page at the first page's revision.
        assert_eq!(page_at, at, "page {page_number} served at another revision");
        for (name, item_revision) in &items {
            assert!(
                *item_revision <= at,
                "{name} at {item_revision} is newer than the list at {at}"
            );
        }
        names.extend(items.into_iter().map(|(name, _)| name));
        if !more {
            break;
        }
        // The next page follows the token another replica issued.
        let from = page_number % 3;
        token = pages[from]["metadata"]["continue"]
            .as_str()
            .expect("continue")
            .to_owned();
    }
    assert_eq!(
        names, whole,
        "the pages together are the list at the first page's revision"
    );
    assert!(!names.iter().any(|n| n == "page-4a"));
}

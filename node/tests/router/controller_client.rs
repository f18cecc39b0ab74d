//! The controllers' in-process client against the router: a collection larger than one page
//! is read page by page, each page bounded, every item once.

use std::collections::BTreeSet;

use apiary_node::controllers::client::InProcessClient;
use apiary_node::controllers::client::LIST_PAGE;

use super::*;

// No CHECKLIST ID (the controllers' memory bound, issue 20 item 5): `list_page` answers at most
// LIST_PAGE items per page with a continue token until the last page, and the pages together
// hold every object of the collection exactly once.
#[tokio::test]
async fn list_page_walks_a_large_collection_in_bounded_pages() {
    let (app, _) = app().await;
    let total = LIST_PAGE + 7;
    for i in 0..total {
        created(
            &app,
            "/api/v1/namespaces/default/configmaps",
            &cm(&format!("cm-{i}")),
        )
        .await;
    }
    let client = InProcessClient::loopback(app.clone());
    let path = "/api/v1/namespaces/default/configmaps";
    let mut names = BTreeSet::new();
    let mut pages = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let (items, next) =
            (client.list_page::<serde_json::Value>(path, token.as_deref(), LIST_PAGE))
                .await
                .unwrap();
        pages.push(items.len());
        for item in &items {
            let name = item["metadata"]["name"].as_str().unwrap().to_owned();
            assert!(names.insert(name), "an item listed twice");
        }
        match next {
            Some(next) => token = Some(next),
            None => break,
        }
        assert!(pages.len() <= total, "the pages do not end");
    }
    assert_eq!(pages, vec![LIST_PAGE, 7]);
    assert_eq!(names.len(), total);
}

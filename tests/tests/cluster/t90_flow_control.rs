//! API Priority and Fairness in a real cluster started with low concurrency flags: every
//! replica finds the bootstrap FlowSchemas and PriorityLevelConfigurations, names the schema
//! and level that served each request in its response headers, reports the start-up step in
//! `/readyz`, and dumps its levels.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use http::StatusCode;
use serde_json::Value;

const GROUP: &str = "/apis/flowcontrol.apiserver.platform.io/v1";

fn uid_of(list: &Value, name: &str) -> String {
    let items = list["items"].as_array().expect("items");
    let item = items
        .iter()
        .find(|i| i["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list}"));
    item["metadata"]["uid"].as_str().expect("uid").to_owned()
}

// R-RES-239
#[tokio::test]
async fn every_replica_classifies_by_the_bootstrap_objects() {
    let cluster = DevCluster::start(
        DevOptions::default()
            .flag("--max-requests-inflight=4")
            .flag("--max-mutating-requests-inflight=2"),
    )
    .await
    .unwrap();
    for replica in 1..=3 {
        let client = cluster.client(replica).unwrap();
        let path = format!("{GROUP}/flowschemas");
        // A replica classifies by the stored objects once it has read them (its first request
        // starts the reading); until then it sends no uid headers.
        let mut schemas = client.get(&path).await.unwrap();
        for _ in 0..100 {
            if schemas.headers.contains_key("x-platform-pf-flowschema-uid") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            schemas = client.get(&path).await.unwrap();
        }
        assert_eq!(schemas.status, StatusCode::OK, "{}", schemas.text());
        let list = schemas.json(&path).unwrap();
        assert_eq!(list["items"].as_array().map(Vec::len), Some(11), "{list}");
        // The admin is in system:masters: the `exempt` schema and level serve it.
        let header = |name: &str| {
            schemas.headers[name]
                .to_str()
                .expect("a text header")
                .to_owned()
        };
        assert_eq!(
            header("x-platform-pf-flowschema-uid"),
            uid_of(&list, "exempt")
        );
        let levels_path = format!("{GROUP}/prioritylevelconfigurations");
        let levels = client.get(&levels_path).await.unwrap();
        let levels = levels.json(&levels_path).unwrap();
        assert_eq!(
            levels["items"].as_array().map(Vec::len),
            Some(8),
            "{levels}"
        );
        assert_eq!(
            header("x-platform-pf-prioritylevel-uid"),
            uid_of(&levels, "exempt")
        );

        let ready = client.get("/readyz?verbose").await.unwrap();
        assert!(
            ready
                .text()
                .contains("[+]poststarthook/priority-and-fairness-config-producer ok"),
            "{}",
            ready.text()
        );
        let dump = client
            .get("/debug/api_priority_and_fairness/dump_priority_levels")
            .await
            .unwrap();
        assert_eq!(dump.status, StatusCode::OK);
        let text = dump.text();
        assert!(
            text.starts_with("PriorityLevelName, ActiveQueues,"),
            "{text}"
        );
        assert!(
            text.lines().any(|l| l.starts_with("workload-low,")),
            "{text}"
        );
    }
}

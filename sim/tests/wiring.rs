//! Every simulated replica host runs the node crate's production wiring: what `apiary serve`
//! starts besides the replica and its API (the bootstrap of the API servers' Service, the
//! readiness it gates, the service account token signer) is there in the simulation too.

use std::time::Duration;

use apiary_sim::cluster::ClusterOptions;
use apiary_sim::cluster::SimCluster;
use apiary_sim::cluster::api_url;
use apiary_sim::net::send;
use apiary_sim::resource_api::FLAVOR;
use bytes::Bytes;
use http::Method;
use serde_json::Value;
use serde_json::json;

const DEADLINE: Duration = Duration::from_secs(2);
const JSON: &str = "application/json";

/// The answer to `method path` on replica 1, parsed as JSON.
async fn call(
    method: Method,
    path: &str,
    body: &Value,
) -> Result<Value, Box<dyn std::error::Error>> {
    let base = api_url("replica-1");
    let body = Bytes::from(body.to_string());
    let answer = send(method, &base, path, JSON, body, DEADLINE).await?;
    Ok(serde_json::from_slice(&answer)?)
}

// A simulated replica becomes ready only once the production bootstrap has run: it then serves
// the API servers' Service on the first cluster IP, and signs a TokenRequest with the signer
// the wiring installed.
#[test]
fn simulated_hosts_bootstrap_and_sign_as_apiary_serve_does() {
    let mut cluster = SimCluster::build(&ClusterOptions::new(1)).expect("cluster");
    cluster.client("client", async {
        let base = api_url("replica-1");
        while send(Method::GET, &base, "/readyz", JSON, Bytes::new(), DEADLINE)
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let name = FLAVOR.api_service_name();
        let service = call(
            Method::GET,
            &format!("/api/v1/namespaces/default/services/{name}"),
            &Value::Null,
        )
        .await?;
        assert_eq!(service["spec"]["clusterIP"], "10.96.0.1", "{service}");
        assert_eq!(service["spec"]["ports"][0]["targetPort"], 6443, "{service}");

        let accounts = "/api/v1/namespaces/default/serviceaccounts";
        let account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "robot"}});
        call(Method::POST, accounts, &account).await?;
        let api_version = format!("authentication.{}/v1", FLAVOR.group_domain());
        let request = json!({"apiVersion": api_version, "kind": "TokenRequest", "spec": {}});
        let answer = call(Method::POST, &format!("{accounts}/robot/token"), &request).await?;
        let token = answer["status"]["token"].as_str().unwrap_or_default();
        assert_eq!(token.split('.').count(), 3, "a JWT: {answer}");
        Ok(())
    });
    cluster.sim().run().expect("the client's checks pass");
}

//! The `TaintNodesByCondition` plugin: new Nodes are tainted not-ready:NoSchedule.

use serde_json::json;

use super::admin_call;
use super::app;
use super::created;
use http::StatusCode;

const NODES: &str = "/api/v1/nodes";

#[tokio::test]
async fn a_new_node_is_tainted_not_ready_once() {
    let (app, _) = app().await;
    let own = json!({"key": "dedicated", "value": "db", "effect": "NoExecute"});
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                      "spec": {"taints": [own]}});
    let stored = created(&app, NODES, &node.to_string()).await;
    let not_ready = json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"});
    assert_eq!(stored["spec"]["taints"], json!([own, not_ready]));

    let bare = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}});
    let stored = created(&app, NODES, &bare.to_string()).await;
    assert_eq!(stored["spec"]["taints"], json!([not_ready]));

    let tainted = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n3"},
                         "spec": {"taints": [not_ready]}});
    let stored = created(&app, NODES, &tainted.to_string()).await;
    assert_eq!(
        stored["spec"]["taints"],
        json!([not_ready]),
        "not added twice"
    );
}

#[tokio::test]
async fn an_update_keeps_the_taints_it_gives() {
    let (app, _) = app().await;
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}});
    created(&app, NODES, &node.to_string()).await;
    let reply = admin_call(&app, "PUT", &format!("{NODES}/n"), Some(&node.to_string())).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(
        reply.json()["spec"]["taints"],
        json!(null),
        "only creates taint"
    );
}

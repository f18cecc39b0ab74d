//! Server-side apply on custom resources follows their schema's list types: map lists merge
//! item by item on their keys (ownership and conflicts per item), set lists by value, and
//! atomic lists are replaced.

use serde_json::Value;
use serde_json::json;

use super::custom_resources::WIDGETS;
use super::custom_resources::serve;
use super::custom_resources::widgets_where;
use super::*;

/// Applies `body` to the widget `name` as the field manager `manager`.
async fn apply_widget(app: &Router, name: &str, manager: &str, spec: Value) -> Reply {
    let body = json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": spec});
    let path = format!("{WIDGETS}/{name}?fieldManager={manager}");
    send_as(
        app,
        "PATCH",
        &path,
        "application/apply-patch+yaml",
        &body.to_string(),
    )
    .await
}

/// The `fieldsV1` of `manager`'s entry in `obj`'s managedFields.
fn fields_of(obj: &Value, manager: &str) -> Value {
    (obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten())
    .find(|e| e["manager"] == manager)
    .map_or(Value::Null, |e| e["fieldsV1"].clone())
}

// CHECKLIST: R-RES-215, R-RES-216, R-RES-217, R-RES-204, R-RES-211, R-RES-237 (apply follows
// a custom resource's list types: map lists merge and are owned per item, sets per value,
// atomic lists whole; a conflict names the item's field and its manager).
#[tokio::test]
async fn apply_follows_the_list_types_of_the_schema() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let crd = widgets_where(flavor, |_, version| {
        version["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({
            "type": "object",
            "properties": {
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"}, "port": {"type": "integer"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set",
                    "items": {"type": "string"}},
                "args": {"type": "array", "x-kubernetes-list-type": "atomic",
                    "items": {"type": "string"}},
            },
        });
    });
    serve(&app, flavor, &crd).await;

    let alice = json!({"ports": [{"name": "http", "port": 80}], "tags": ["a"], "args": ["x", "y"]});
    let reply = apply_widget(&app, "w", "alice", alice).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    let bob = json!({"ports": [{"name": "dns", "port": 53}], "tags": ["b"]});
    let reply = apply_widget(&app, "w", "bob", bob).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let obj = reply.json();
    assert_eq!(
        obj["spec"],
        json!({"ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53}],
            "tags": ["a", "b"], "args": ["x", "y"]})
    );
    assert_eq!(
        fields_of(&obj, "bob"),
        json!({"f:spec": {
            "f:ports": {"k:{\"name\":\"dns\"}": {".": {}, "f:name": {}, "f:port": {}}},
            "f:tags": {"v:\"b\"": {}}
        }})
    );

    // Another manager's item field is a conflict on that field, and nothing changes.
    let steal = json!({"ports": [{"name": "dns", "port": 53}, {"name": "http", "port": 8080}],
        "tags": ["b"]});
    let reply = apply_widget(&app, "w", "bob", steal).await;
    let status = assert_status(&reply, 409, "Conflict");
    assert_eq!(
        status["message"],
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.ports[name=\"http\"].port"
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"",
            "field": ".spec.ports[name=\"http\"].port"}])
    );

    // The atomic list is replaced whole, and alice keeps what bob applied.
    let alice = json!({"ports": [{"name": "http", "port": 80}], "tags": ["a"], "args": ["z"]});
    let reply = apply_widget(&app, "w", "alice", alice).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(
        reply.json()["spec"],
        json!({"ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53}],
            "tags": ["a", "b"], "args": ["z"]})
    );
    assert_eq!(
        fields_of(&reply.json(), "alice"),
        json!({"f:spec": {
            "f:args": {},
            "f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}},
            "f:tags": {"v:\"a\"": {}}
        }})
    );
}

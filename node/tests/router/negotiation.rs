//! Content negotiation through the router (spec 000 "Media types and headers"): `Accept`
//! picks the response's format and view, 406 when nothing listed is served, YAML documents and
//! errors, and metadata-only answers for get, list and watch.

use serde_json::Value;
use serde_json::json;

use super::*;

const CM_PATH: &str = "/api/v1/namespaces/default/configmaps";

const META_OBJECT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const META_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

async fn with_config_map(flavor: Flavor) -> Router {
    let (app, _) = app_in(flavor).await;
    created(
        &app,
        CM_PATH,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"y"}},"data":{"k":"v"}}"#,
    )
    .await;
    app
}

// R-RES-137: nothing acceptable is 406 NotAcceptable, naming what is served.
#[tokio::test]
async fn unserved_media_types_are_406() {
    let app = with_config_map(Flavor::Kubernetes).await;
    for accept in ["text/html", "application/xml, text/plain;q=0.5"] {
        let r = get_with(&app, &format!("{CM_PATH}/a"), &[("accept", accept)]).await;
        let s = assert_status(&r, 406, "NotAcceptable");
        assert!(
            s["message"].as_str().is_some_and(|m| m.starts_with(
                "only the following media types are accepted: application/json, application/yaml"
            )),
            "{s}"
        );
    }
    // A range the server serves anywhere in the list is enough.
    let r = get_with(
        &app,
        &format!("{CM_PATH}/a"),
        &[("accept", "text/html, */*;q=0.1")],
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(content_type(&r), "application/json");
}

// R-RES-123: get, list and errors in YAML.
#[tokio::test]
async fn yaml_answers_gets_lists_and_errors() {
    let app = with_config_map(Flavor::Platform).await;
    let yaml = [("accept", "application/yaml")];
    let r = get_with(&app, &format!("{CM_PATH}/a"), &yaml).await;
    assert_eq!(r.status, 200);
    assert_eq!(content_type(&r), "application/yaml");
    let object: Value = serde_saphyr::from_str(&r.text()).expect("YAML");
    assert_eq!(object["data"], json!({"k": "v"}));
    assert!(object["metadata"]["resourceVersion"].is_string());

    let r = get_with(&app, CM_PATH, &yaml).await;
    let list: Value = serde_saphyr::from_str(&r.text()).expect("YAML");
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["items"][0]["metadata"]["name"], "a");

    let r = get_with(&app, &format!("{CM_PATH}/missing"), &yaml).await;
    assert_eq!(r.status, 404);
    assert_eq!(content_type(&r), "application/yaml");
    let status: Value = serde_saphyr::from_str(&r.text()).expect("YAML");
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "NotFound");
}

// R-RES-123 with the watch rule: YAML has no stream form, so a YAML-only watch is 406.
#[tokio::test]
async fn yaml_watches_are_refused() {
    let app = with_config_map(Flavor::Kubernetes).await;
    let r = get_with(
        &app,
        &format!("{CM_PATH}?watch=1"),
        &[("accept", "application/yaml")],
    )
    .await;
    assert_status(&r, 406, "NotAcceptable");
}

#[tokio::test]
async fn metadata_only_gets_and_lists() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let app = with_config_map(flavor).await;
        let meta = format!("meta.{}", flavor.group_domain());
        let object_accept = META_OBJECT.replace("meta.k8s.io", &meta);
        let r = get_with(&app, &format!("{CM_PATH}/a"), &[("accept", &object_accept)]).await;
        assert_eq!(r.status, 200);
        assert_eq!(
            content_type(&r),
            format!("application/json;as=PartialObjectMetadata;v=v1;g={meta}")
        );
        let partial = r.json();
        assert_eq!(partial["kind"], "PartialObjectMetadata");
        assert_eq!(partial["apiVersion"], format!("{meta}/v1"));
        assert_eq!(partial["metadata"]["labels"], json!({"x": "y"}));
        assert!(partial.get("data").is_none());

        let list_accept = META_LIST.replace("meta.k8s.io", &meta);
        let r = get_with(
            &app,
            &format!("{CM_PATH}?limit=1"),
            &[("accept", &list_accept)],
        )
        .await;
        let list = r.json();
        assert_eq!(list["kind"], "PartialObjectMetadataList");
        assert!(list["metadata"]["resourceVersion"].is_string());
        assert_eq!(list["items"][0]["kind"], "PartialObjectMetadata");
        assert_eq!(list["items"][0]["metadata"]["name"], "a");
        assert!(list["items"][0].get("data").is_none());

        // The list kind asked of one object (and the object kind of a list) is not served.
        let r = get_with(&app, &format!("{CM_PATH}/a"), &[("accept", &list_accept)]).await;
        assert_status(&r, 406, "NotAcceptable");
        // Errors stay Statuses.
        let r = get_with(&app, &format!("{CM_PATH}/b"), &[("accept", &object_accept)]).await;
        assert_status(&r, 404, "NotFound");
    }
}

#[tokio::test]
async fn metadata_only_watches() {
    let app = with_config_map(Flavor::Kubernetes).await;
    let r = get_with(
        &app,
        &format!("{CM_PATH}?watch=1&resourceVersion=0&timeoutSeconds=-1"),
        &[("accept", META_OBJECT)],
    )
    .await;
    assert_eq!(r.status, 200);
    let events: Vec<Value> = r
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one event per line"))
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ADDED", "{events:?}");
    assert_eq!(events[0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(events[0]["object"]["metadata"]["name"], "a");
    assert!(events[0]["object"].get("data").is_none());
}

// R-RES-123: errors before any handler (here authorization's 403) answer in the negotiated
// format too.
#[tokio::test]
async fn refusals_answer_in_the_negotiated_format() {
    let app = with_config_map(Flavor::Kubernetes).await;
    let mut req = Request::builder()
        .uri(format!("{CM_PATH}/a"))
        .header("accept", "application/yaml")
        .body(Body::empty())
        .expect("request");
    req.extensions_mut().insert(bob());
    let r = send(&app, req).await;
    assert_eq!(r.status, 403);
    assert_eq!(content_type(&r), "application/yaml");
    let status: Value = serde_saphyr::from_str(&r.text()).expect("YAML");
    assert_eq!(status["reason"], "Forbidden");
}

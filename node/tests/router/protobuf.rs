//! Protobuf through the router (spec 000 "Protobuf wrapper", "Media types and headers"): writes
//! with Protobuf bodies, reads, lists and watches answered in Protobuf, JSON and Protobuf
//! clients seeing the same objects, errors as Protobuf Status, and the fallbacks of `Accept`.

use apiary_api::codec::protobuf::PREFIX;
use apiary_api::codec::protobuf::decode_object;
use apiary_api::codec::protobuf::encode_object;
use apiary_api::codec::protobuf::wrap;
use prost::Message as _;
use serde_json::Value;
use serde_json::json;

use super::*;

const CM_PATH: &str = "/api/v1/namespaces/default/configmaps";

fn protobuf(flavor: Flavor) -> &'static str {
    flavor.protobuf_media_type()
}

/// `method path` as the admin with a Protobuf `body` (if any) and `accept`.
async fn pb_call(
    app: &Router,
    method: &str,
    path: &str,
    body: Option<Vec<u8>>,
    accept: &str,
    flavor: Flavor,
) -> Reply {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("accept", accept);
    if body.is_some() {
        req = req.header("content-type", protobuf(flavor));
    }
    let mut req = req
        .body(Body::from(body.unwrap_or_default()))
        .expect("request");
    req.extensions_mut().insert(admin());
    send(app, req).await
}

/// The object of a Protobuf reply.
fn object(reply: &Reply, flavor: Flavor) -> Value {
    assert_eq!(content_type(reply), protobuf(flavor), "{:?}", reply.body);
    assert_eq!(reply.body[..4], PREFIX);
    decode_object(flavor, &reply.body).expect("a Protobuf object")
}

fn config_map(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
        "data": {"k": value}})
}

// R-RES-121, R-RES-124, R-RES-056, R-RES-057: create, get, list, update and delete with
// Protobuf bodies and answers, and a JSON client sees what the Protobuf client wrote.
#[tokio::test]
async fn crud_in_protobuf_in_both_flavors() {
    for flavor in [Flavor::Platform, Flavor::Kubernetes] {
        let (app, _) = app_in(flavor).await;
        let pb = protobuf(flavor);
        let body = encode_object(flavor, &config_map("a", "1")).unwrap();
        let r = pb_call(&app, "POST", CM_PATH, Some(body), pb, flavor).await;
        assert_eq!(r.status, 201, "{}", r.text());
        let created = object(&r, flavor);
        assert_eq!(created["data"], json!({"k": "1"}));
        assert!(created["metadata"]["uid"].is_string(), "{created}");

        // A JSON client reads what the Protobuf client wrote.
        let json_view = fetched(&app, &format!("{CM_PATH}/a")).await;
        assert_eq!(json_view["metadata"]["uid"], created["metadata"]["uid"]);
        assert_eq!(json_view["data"], json!({"k": "1"}));

        // A Protobuf client reads what a JSON client wrote.
        created_json(&app, &config_map("b", "2")).await;
        let r = pb_call(&app, "GET", &format!("{CM_PATH}/b"), None, pb, flavor).await;
        assert_eq!(object(&r, flavor)["data"], json!({"k": "2"}));

        let r = pb_call(&app, "GET", CM_PATH, None, pb, flavor).await;
        let list = object(&r, flavor);
        assert_eq!(list["kind"], "ConfigMapList");
        let names: Vec<&str> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i["metadata"]["name"].as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert!(list["metadata"]["resourceVersion"].is_string(), "{list}");

        let mut update = created.clone();
        update["data"] = json!({"k": "3"});
        let body = encode_object(flavor, &update).unwrap();
        let r = pb_call(&app, "PUT", &format!("{CM_PATH}/a"), Some(body), pb, flavor).await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(object(&r, flavor)["data"], json!({"k": "3"}));

        let meta = flavor.meta_group();
        let options = json!({"apiVersion": format!("{meta}/v1"), "kind": "DeleteOptions",
            "preconditions": {"uid": "not-the-uid"}});
        let body = encode_object(flavor, &options).unwrap();
        let r = pb_call(
            &app,
            "DELETE",
            &format!("{CM_PATH}/a"),
            Some(body),
            pb,
            flavor,
        )
        .await;
        assert_eq!(r.status, 409, "a DeleteOptions body is read: {}", r.text());
        let r = pb_call(&app, "DELETE", &format!("{CM_PATH}/a"), None, pb, flavor).await;
        assert_eq!(r.status, 200);
        let done = object(&r, flavor);
        assert_eq!(
            (&done["status"], &done["details"]["name"]),
            (&json!("Success"), &json!("a"))
        );
    }
}

async fn created_json(app: &Router, object: &Value) {
    created(app, CM_PATH, &object.to_string()).await;
}

// R-RES-121: a body as client-go writes it (every non-pointer field, zeros included) goes
// through defaulting and validation as its JSON would.
#[tokio::test]
async fn go_client_bodies_are_defaulted_as_json_ones() {
    use k8s_pb::api::core::v1 as core;
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let service = core::Service {
        metadata: Some(meta::ObjectMeta {
            name: Some("web".into()),
            namespace: Some(String::new()),
            uid: Some(String::new()),
            resource_version: Some(String::new()),
            generation: Some(0),
            creation_timestamp: Some(meta::Time::default()),
            ..Default::default()
        }),
        spec: Some(core::ServiceSpec {
            ports: vec![core::ServicePort {
                name: Some(String::new()),
                protocol: Some(String::new()),
                port: Some(80),
                node_port: Some(0),
                ..Default::default()
            }],
            r#type: Some(String::new()),
            session_affinity: Some(String::new()),
            ..Default::default()
        }),
        status: Some(core::ServiceStatus::default()),
    };
    let body = wrap("v1", "Service", &service.encode_to_vec());
    let r = pb_call(
        &app,
        "POST",
        "/api/v1/namespaces/default/services",
        Some(body),
        "application/json",
        flavor,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    assert_eq!(created["spec"]["type"], "ClusterIP", "{created}");
    assert_eq!(created["spec"]["sessionAffinity"], "None");
    assert_eq!(created["spec"]["ports"][0]["protocol"], "TCP");
    assert!(
        created["metadata"]["uid"]
            .as_str()
            .is_some_and(|u| !u.is_empty())
    );
}

// R-RES-056, R-RES-124: errors are Protobuf Status when Protobuf was asked for; a body
// without the envelope prefix is a 400.
#[tokio::test]
async fn errors_are_protobuf_status() {
    for flavor in [Flavor::Platform, Flavor::Kubernetes] {
        let (app, _) = app_in(flavor).await;
        let pb = protobuf(flavor);
        let r = pb_call(&app, "GET", &format!("{CM_PATH}/missing"), None, pb, flavor).await;
        assert_eq!(r.status, 404);
        let status = object(&r, flavor);
        assert_eq!(status["kind"], "Status");
        assert_eq!(status["reason"], "NotFound");
        assert_eq!(status["code"], 404);

        let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#.to_vec();
        let r = pb_call(&app, "POST", CM_PATH, Some(body), pb, flavor).await;
        assert_eq!(r.status, 400);
        let status = object(&r, flavor);
        assert_eq!(status["reason"], "BadRequest");
        assert!(
            status["message"].as_str().unwrap().contains("6b 38 73 00"),
            "{status}"
        );

        // The same refusal in JSON to a JSON client.
        let body = b"k8s\x01garbage".to_vec();
        let r = pb_call(
            &app,
            "POST",
            CM_PATH,
            Some(body),
            "application/json",
            flavor,
        )
        .await;
        assert_status(&r, 400, "BadRequest");
    }
}

// R-RES-120: a kind without a Protobuf message answers JSON when JSON is listed too, and
// 406 when only Protobuf is acceptable.
#[tokio::test]
async fn kinds_without_a_message_fall_back_to_json() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    let path = "/apis/storagemigration.k8s.io/v1/storageversionmigrations";
    let pb = protobuf(flavor);
    let r = get_with(
        &app,
        path,
        &[("accept", &format!("{pb}, application/json"))],
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(content_type(&r), "application/json");
    let r = get_with(&app, path, &[("accept", pb)]).await;
    assert_status(&r, 406, "NotAcceptable");
    // A kind with one takes the first listed.
    let r = get_with(
        &app,
        CM_PATH,
        &[("accept", &format!("{pb}, application/json"))],
    )
    .await;
    assert_eq!(content_type(&r), pb);
}

/// The (type, object) of each length-prefixed WatchEvent frame of `body`.
fn frames(body: &[u8], flavor: Flavor) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut rest = body;
    while rest.len() >= 4 {
        let len = u32::from_be_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
        let event =
            k8s_pb::apimachinery::pkg::apis::meta::v1::WatchEvent::decode(&rest[4..4 + len])
                .expect("a WatchEvent");
        let raw = event.object.and_then(|o| o.raw).expect("an object");
        out.push((
            event.r#type.unwrap_or_default(),
            decode_object(flavor, &raw).expect("an enveloped object"),
        ));
        rest = &rest[4 + len..];
    }
    assert!(rest.is_empty(), "frames end where the body ends");
    out
}

// R-RES-056: watch events stream as length-prefixed WatchEvent frames with the enveloped
// object inside, and metadata-only views of them in Protobuf too.
#[tokio::test]
async fn watches_stream_protobuf_frames() {
    for flavor in [Flavor::Platform, Flavor::Kubernetes] {
        let (app, _) = app_in(flavor).await;
        created_json(&app, &config_map("a", "1")).await;
        created_json(&app, &config_map("b", "2")).await;
        let pb = protobuf(flavor);
        let watch = format!("{CM_PATH}?watch=1&resourceVersion=0&timeoutSeconds=-1");
        let r = get_with(&app, &watch, &[("accept", pb)]).await;
        assert_eq!(r.status, 200);
        assert_eq!(content_type(&r), format!("{pb};stream=watch"));
        let events = frames(&r.body, flavor);
        let seen: Vec<(&str, &str, &Value)> = events
            .iter()
            .map(|(t, o)| {
                (
                    t.as_str(),
                    o["metadata"]["name"].as_str().unwrap(),
                    &o["data"],
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("ADDED", "a", &json!({"k": "1"})),
                ("ADDED", "b", &json!({"k": "2"}))
            ]
        );

        let meta = flavor.meta_group();
        let accept = format!("{pb};as=PartialObjectMetadata;g={meta};v=v1");
        let r = get_with(&app, &watch, &[("accept", &accept)]).await;
        assert_eq!(r.status, 200);
        let events = frames(&r.body, flavor);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].1["kind"], "PartialObjectMetadata");
        assert_eq!(events[0].1["apiVersion"], format!("{meta}/v1"));
        assert!(events[0].1.get("data").is_none());
    }
}

// R-RES-056: metadata-only gets and lists in Protobuf.
#[tokio::test]
async fn metadata_only_answers_in_protobuf() {
    let flavor = Flavor::Kubernetes;
    let (app, _) = app_in(flavor).await;
    created_json(&app, &config_map("a", "1")).await;
    let pb = protobuf(flavor);
    let meta = flavor.meta_group();
    let accept = format!("{pb};as=PartialObjectMetadataList;g={meta};v=v1");
    let r = get_with(&app, CM_PATH, &[("accept", &accept)]).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        content_type(&r),
        format!("{pb};as=PartialObjectMetadataList;v=v1;g={meta}")
    );
    let list = decode_object(flavor, &r.body).unwrap();
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["items"][0]["metadata"]["name"], "a");
}

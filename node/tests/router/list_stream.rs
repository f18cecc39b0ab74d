//! Lists larger than one storage read and one body frame: whole lists read in chunks at one
//! revision and written while they are sent, selectors that skip whole chunks, and failures met
//! past the first chunk answered as a `Status` before any of the list is sent; the same in
//! Protobuf, whose streamed lists are the JSON lists encoded whole, byte for byte.

use std::io::Read;
use std::sync::Arc;

use bytes::Bytes;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use super::*;
use apiary_api::codec::protobuf::decode_object;
use apiary_api::codec::protobuf::encode_object;
use apiary_api::codec::protobuf::unwrap;
use apiary_api::registry::StoredJson;
use prost::Message as _;

const NS_CM: &str = "/api/v1/namespaces/default/configmaps";

/// More ConfigMaps than one chunk of a whole list's storage reads (1,000).
const MANY: usize = 2_500;

/// Stores `MANY` ConfigMaps `cm-0000`.. in `default` straight through storage (the router
/// writing them one by one would only slow the test), those numbered in `labelled` with the
/// label `pick=yes`. Answers the revision of each, in name order.
async fn fill(storage: &Backend, labelled: std::ops::Range<usize>) -> Vec<u64> {
    let mut revisions = Vec::with_capacity(MANY);
    for i in 0..MANY {
        let name = format!("cm-{i:04}");
        let labels = match labelled.contains(&i) {
            true => json!({"pick": "yes"}),
            false => json!({"pick": "no"}),
        };
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "uid": format!("u-{i}"),
                "labels": labels, "creationTimestamp": "2026-01-01T00:00:00Z"},
            "data": {"v": "x".repeat(100)}});
        let bytes = StoredJson::to_stored(&obj).expect("encodes");
        let key = format!("/registry/core/configmaps/default/{name}");
        let created = storage.create(&key, bytes).await.expect("create");
        revisions.push(created.mod_revision);
    }
    revisions
}

async fn app_with_many(labelled: std::ops::Range<usize>) -> (Router, Arc<Backend>, Vec<u64>) {
    let (app, storage) = app().await;
    let revisions = fill(&storage, labelled).await;
    (app, storage, revisions)
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().expect("name").to_owned())
        .collect()
}

// R-RES-033, R-RES-133: a whole list of more objects than one storage read and many times a
// body frame is every object once, in key order, each with its own `resourceVersion`, at the
// revision the list reports, without `continue`; gzip, asked for, carries the same list.
#[tokio::test]
async fn whole_lists_larger_than_a_chunk_are_one_snapshot() {
    let (app, storage, revisions) = app_with_many(0..0).await;
    let newest = storage.revision().await;
    let reply = get_with(&app, NS_CM, &[]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let list = reply.json();
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["metadata"]["resourceVersion"], newest.to_string());
    assert!(
        list["metadata"].get("continue").is_none(),
        "{}",
        list["metadata"]
    );
    assert!(list["metadata"].get("remainingItemCount").is_none());
    let expected: Vec<String> = (0..MANY).map(|i| format!("cm-{i:04}")).collect();
    assert_eq!(names(&list), expected);
    for (item, revision) in list["items"]
        .as_array()
        .expect("items")
        .iter()
        .zip(&revisions)
    {
        assert_eq!(item["metadata"]["resourceVersion"], revision.to_string());
        assert_eq!(item["data"]["v"].as_str().map(str::len), Some(100));
    }

    let zipped = get_with(&app, NS_CM, &[("accept-encoding", "gzip")]).await;
    assert_eq!(zipped.status, StatusCode::OK);
    assert_eq!(zipped.headers["content-encoding"], "gzip");
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&zipped.body[..])
        .read_to_end(&mut plain)
        .expect("gzip");
    assert_eq!(plain, reply.body);
}

// R-RES-110, R-RES-182, R-RES-036: a selector matching only objects past the first chunks
// reads on until it finds them; with `limit` its pages continue from the last key examined
// and never count what remains.
#[tokio::test]
async fn selectors_skip_whole_chunks() {
    let (app, _, _) = app_with_many(2_300..2_310).await;
    let picked: Vec<String> = (2_300..2_310).map(|i| format!("cm-{i:04}")).collect();
    let all = get_with(&app, &format!("{NS_CM}?labelSelector=pick%3Dyes"), &[]).await;
    assert_eq!(all.status, StatusCode::OK, "{}", all.text());
    assert_eq!(names(&all.json()), picked);

    let first = get_with(
        &app,
        &format!("{NS_CM}?labelSelector=pick%3Dyes&limit=4"),
        &[],
    )
    .await;
    let first = first.json();
    assert_eq!(names(&first), picked[..4]);
    assert!(first["metadata"].get("remainingItemCount").is_none());
    let token = first["metadata"]["continue"].as_str().expect("continue");
    let path = format!("{NS_CM}?labelSelector=pick%3Dyes&limit=100&continue={token}");
    let rest = get_with(&app, &path, &[]).await.json();
    assert_eq!(names(&rest), picked[4..]);
    assert_eq!(
        rest["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
}

// R-RES-236: an object that does not decode past the first chunk fails the whole list with a
// Status naming it, before any of the list is sent.
#[tokio::test]
async fn a_corrupt_object_past_the_first_chunk_is_a_status() {
    let (app, storage, revisions) = app_with_many(0..0).await;
    let key = "/registry/core/configmaps/default/cm-2222";
    let garbage = Bytes::from_static(b"\xff\xfe\x00 not an object");
    storage
        .update(key, garbage, revisions[2_222])
        .await
        .expect("the hook writes under the key");
    let reply = get_with(&app, NS_CM, &[]).await;
    let status = assert_status(&reply, 500, "InternalError");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(message.contains(key), "{status}");
}

/// The Protobuf media type of the router's flavor (Kubernetes).
const PB: &str = "application/vnd.kubernetes.protobuf";

/// `path` in JSON and in Protobuf: the Protobuf answer must be byte for byte the JSON answer
/// encoded whole, and k8s-pb must decode it to as many items. Answers the JSON list.
async fn same_in_protobuf(app: &Router, path: &str) -> Value {
    let json = get_with(app, path, &[]).await;
    assert_eq!(json.status, StatusCode::OK, "{}", json.text());
    let json = json.json();
    let pb = get_with(app, path, &[("accept", PB)]).await;
    assert_eq!(pb.status, StatusCode::OK);
    assert_eq!(content_type(&pb), PB);
    let whole = encode_object(Flavor::Kubernetes, &json).expect("the JSON list encodes");
    assert!(
        pb.body[..] == whole[..],
        "{path}: the streamed list differs"
    );
    let raw = unwrap(&pb.body).expect("an envelope").raw;
    let list = k8s_pb::api::core::v1::ConfigMapList::decode(raw).expect("k8s-pb decodes");
    assert_eq!(list.items.len(), names(&json).len());
    json
}

// R-RES-056, R-RES-057, R-RES-033, R-RES-133: a whole list in Protobuf of more objects than one
// storage read and many body frames is the JSON list encoded whole, byte for byte; gzip,
// asked for, carries the same bytes.
#[tokio::test]
async fn whole_protobuf_lists_are_the_json_list_encoded() {
    let (app, _, _) = app_with_many(0..0).await;
    let list = same_in_protobuf(&app, NS_CM).await;
    assert_eq!(names(&list).len(), MANY);
    let plain = get_with(&app, NS_CM, &[("accept", PB)]).await;
    let zipped = get_with(&app, NS_CM, &[("accept", PB), ("accept-encoding", "gzip")]).await;
    assert_eq!(zipped.headers["content-encoding"], "gzip");
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(&zipped.body[..])
        .read_to_end(&mut unzipped)
        .expect("gzip");
    assert!(unzipped[..] == plain.body[..]);
}

// R-RES-110, R-RES-182, R-RES-034, R-RES-036, R-RES-167: selectors, `limit` and `continue`
// select the same pages in Protobuf as in JSON, with the same list metadata.
#[tokio::test]
async fn protobuf_pages_and_selectors_are_the_json_ones() {
    let (app, _, _) = app_with_many(2_300..2_310).await;
    let selected = same_in_protobuf(&app, &format!("{NS_CM}?labelSelector=pick%3Dyes")).await;
    assert_eq!(names(&selected).len(), 10);
    let path = format!("{NS_CM}?labelSelector=pick%3Dyes&limit=4");
    let first = same_in_protobuf(&app, &path).await;
    let token = first["metadata"]["continue"].as_str().expect("continue");
    let rest = format!("{NS_CM}?labelSelector=pick%3Dyes&limit=100&continue={token}");
    assert_eq!(names(&same_in_protobuf(&app, &rest).await).len(), 6);
    let page = same_in_protobuf(&app, &format!("{NS_CM}?limit=1500")).await;
    assert_eq!(page["metadata"]["remainingItemCount"], MANY - 1500);
    let token = page["metadata"]["continue"].as_str().expect("continue");
    let rest = same_in_protobuf(&app, &format!("{NS_CM}?limit=1500&continue={token}")).await;
    assert_eq!(names(&rest).len(), MANY - 1500);
}

// R-RES-024, R-RES-031, R-RES-033: a Protobuf list at an older revision is that snapshot,
// its items at their revisions then, as the JSON list at that revision.
#[tokio::test]
async fn protobuf_lists_at_a_revision_are_that_snapshot() {
    let (app, storage, revisions) = app_with_many(0..0).await;
    let before = storage.revision().await;
    let key = "/registry/core/configmaps/default/cm-1500";
    let changed = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cm-1500", "namespace": "default", "uid": "u-1500",
            "creationTimestamp": "2026-01-01T00:00:00Z"},
        "data": {"v": "changed"}});
    let bytes = StoredJson::to_stored(&changed).expect("encodes");
    storage
        .update(key, bytes, revisions[1500])
        .await
        .expect("update");
    let path = format!("{NS_CM}?resourceVersionMatch=Exact&resourceVersion={before}");
    let old = same_in_protobuf(&app, &path).await;
    assert_eq!(old["metadata"]["resourceVersion"], before.to_string());
    assert_eq!(
        old["items"][1500]["data"]["v"].as_str().map(str::len),
        Some(100)
    );
    let new = same_in_protobuf(&app, NS_CM).await;
    assert_eq!(new["items"][1500]["data"]["v"], "changed");
}

// R-RES-236, R-RES-124: an object that does not decode past the first chunk fails a Protobuf
// list with a Protobuf Status naming it, before any of the list is sent.
#[tokio::test]
async fn a_corrupt_object_past_the_first_chunk_is_a_protobuf_status() {
    let (app, storage, revisions) = app_with_many(0..0).await;
    let key = "/registry/core/configmaps/default/cm-2222";
    let garbage = Bytes::from_static(b"\xff\xfe\x00 not an object");
    storage
        .update(key, garbage, revisions[2_222])
        .await
        .expect("the hook writes under the key");
    let reply = get_with(&app, NS_CM, &[("accept", PB)]).await;
    assert_eq!(reply.status.as_u16(), 500);
    let status = decode_object(Flavor::Kubernetes, &reply.body).expect("a Protobuf Status");
    assert_eq!(status["kind"], "Status", "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(message.contains(key), "{status}");
}

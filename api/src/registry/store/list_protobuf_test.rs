//! Unit tests of the streamed Protobuf list body: the bytes of the list encoded whole, their
//! announced length, frames bounded by the frame size, and items taken again from the cache.

use http_body::Body as _;
use serde_json::Value;
use serde_json::json;

use super::*;
use crate::codec::protobuf::MAX_CACHED_BYTES;
use crate::codec::protobuf::encode_object;

fn object(i: usize) -> Value {
    json!({"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": format!("cm-{i:03}"), "namespace": "default",
            "uid": format!("u-{i}")},
        "data": {"v": "x".repeat(1000 + i)}})
}

fn stored(i: usize) -> StoredJson {
    StoredJson::from_stored(StoredJson::to_stored(&object(i)).expect("encodes")).expect("decodes")
}

fn key(i: usize) -> String {
    format!("/registry/core/configmaps/default/cm-{i:03}")
}

/// Every frame of `body`, checking before each that the announced length is what follows.
fn frames(mut body: ProtobufListBody) -> Vec<Bytes> {
    let mut frames = Vec::new();
    while !body.is_end_stream() {
        let announced = body.size_hint().exact().expect("exact length");
        let frame = body.next_frame().expect("a frame").expect("written");
        assert!(announced >= frame.len() as u64);
        frames.push(frame);
    }
    assert_eq!(body.size_hint().exact(), Some(0));
    assert!(body.next_frame().is_none());
    frames
}

/// The items of a 300-object list, those from `again` on kept as stored handles.
fn items(layout: &ListLayout, cache: &EncodingCache, again: usize) -> Vec<Item> {
    (0..300)
        .map(|i| {
            let revision = 100 + i as u64;
            let json = || {
                let mut json = Vec::new();
                stored(i).write_with_resource_version(revision, &mut json);
                json
            };
            let message = layout
                .item(cache, &key(i), revision, json)
                .expect("encodes");
            match i < again {
                true => Item::Held(message),
                false => Item::Again {
                    key: key(i),
                    stored: stored(i),
                    revision,
                    len: message.len(),
                },
            }
        })
        .collect()
}

// R-RES-033, R-RES-056, R-RES-057: a list larger than a frame arrives in frames of about the
// frame size, announces its exact length first, and is byte for byte the enveloped list
// encoded whole, whether its items were held or taken from the cache again (or, evicted,
// encoded again) as their frames were written.
#[test]
fn a_protobuf_list_is_the_whole_list_in_bounded_frames() {
    let head = json!({"kind": "ConfigMapList", "apiVersion": "v1",
        "metadata": {"resourceVersion": "4242"}});
    let mut whole = head.clone();
    whole["items"] = (0..300)
        .map(|i| {
            let mut o = object(i);
            o["metadata"]["resourceVersion"] = json!((100 + i).to_string());
            o
        })
        .collect();
    let expected = encode_object(Flavor::Kubernetes, &whole).expect("encodes");
    for (again, cache_bytes) in [(300, MAX_CACHED_BYTES), (120, MAX_CACHED_BYTES), (0, 5_000)] {
        let cache = Arc::new(EncodingCache::new(cache_bytes));
        let layout = ListLayout::new(Flavor::Kubernetes, &head).expect("a list kind");
        let items = items(&layout, &cache, again);
        let body = ProtobufListBody::new(layout, cache, items);
        let announced = body.size_hint().exact().expect("exact length");
        let frames = frames(body);
        assert!(frames.len() >= 4, "{} frames", frames.len());
        let largest = frames.iter().map(Bytes::len).max().unwrap_or_default();
        assert!(largest < FRAME_BYTES + 2048, "a frame of {largest} bytes");
        let streamed = frames.concat();
        assert_eq!(streamed.len() as u64, announced);
        assert_eq!(streamed, expected, "items from {again} on taken again");
    }
}

// R-RES-056: an item whose message is no longer the length measured cuts the stream short
// with an error rather than writing a malformed list.
#[test]
fn an_item_of_another_length_is_an_error() {
    let head = json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {}});
    let layout = ListLayout::new(Flavor::Kubernetes, &head).expect("a list kind");
    let cache = Arc::new(EncodingCache::new(0));
    let items = vec![Item::Again {
        key: key(1),
        stored: stored(1),
        revision: 7,
        len: 3,
    }];
    let mut body = ProtobufListBody::new(layout, cache, items);
    assert!(body.next_frame().expect("a frame").is_err());
}

// R-RES-033: an empty list is one frame holding the envelope and the list metadata.
#[test]
fn an_empty_protobuf_list_is_one_frame() {
    let head = json!({"kind": "ConfigMapList", "apiVersion": "v1",
        "metadata": {"resourceVersion": "5"}});
    let layout = ListLayout::new(Flavor::Kubernetes, &head).expect("a list kind");
    let cache = Arc::new(EncodingCache::new(MAX_CACHED_BYTES));
    let frames = frames(ProtobufListBody::new(layout, cache, Vec::new()));
    assert_eq!(frames.len(), 1);
    let mut whole = head.clone();
    whole["items"] = json!([]);
    assert_eq!(
        frames[0],
        encode_object(Flavor::Kubernetes, &whole).expect("encodes")
    );
}

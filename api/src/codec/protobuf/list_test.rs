//! Lists written around their items' cached messages: the same bytes as the list encoded
//! whole, for many lists, decodable by k8s-pb, and each stored version encoded once.

use std::cell::Cell;

use prost::Message as _;
use serde_json::json;

use super::*;
use crate::codec::protobuf::MAX_CACHED_BYTES;
use crate::codec::protobuf::encode_object;
use crate::codec::protobuf::unwrap;

fn config_map(name: &str, rv: u64, value_bytes: usize) -> Value {
    json!({"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": rv.to_string(),
            "uid": format!("uid-{name}")},
        "data": {"k": "x".repeat(value_bytes)}})
}

/// The list `head` holding `objects`, written as the streamed list is: measured, opened,
/// each item's cached message, closed.
fn written(head: &Value, objects: &[Value], cache: &EncodingCache) -> Vec<u8> {
    let layout = ListLayout::new(Flavor::Kubernetes, head).expect("a list kind");
    let messages: Vec<Arc<[u8]>> = (objects.iter().enumerate())
        .map(|(i, o)| {
            let key = format!("/registry/core/configmaps/default/{i}");
            let rv = o["metadata"]["resourceVersion"].as_str().unwrap_or("0");
            let rv = rv.parse().expect("a revision");
            layout.item(cache, &key, rv, || o.to_string().into_bytes())
        })
        .collect::<Result<_, _>>()
        .expect("encodes");
    let items_len: usize = messages.iter().map(|m| layout.framed_len(m.len())).sum();
    let mut out = layout.open(items_len);
    let opened = out.len();
    for message in &messages {
        layout.put_item(&mut out, message);
    }
    assert_eq!(
        out.len() - opened,
        items_len,
        "the items take what was measured"
    );
    out.extend_from_slice(layout.close());
    out
}

// R-RES-056, R-RES-057: a list written around its items' messages is byte for byte the
// enveloped list encoded whole, for lists of every size (varint lengths of one to three
// bytes, empty lists, lists with and without `continue`), and k8s-pb decodes it.
#[test]
fn streamed_lists_equal_whole_lists() {
    let heads = [
        json!({"kind": "ConfigMapList", "apiVersion": "v1",
            "metadata": {"resourceVersion": "9"}}),
        json!({"kind": "ConfigMapList", "apiVersion": "v1",
            "metadata": {"resourceVersion": "12345", "continue": "next-token",
                "remainingItemCount": 7}}),
    ];
    let shapes: [(usize, usize); 8] = [
        (0, 0),
        (1, 0),
        (1, 60),
        (2, 120),
        (3, 16_300),
        (5, 20_000),
        (40, 1024),
        (300, 3),
    ];
    for head in &heads {
        for (count, value_bytes) in shapes {
            let objects: Vec<Value> = (0..count)
                .map(|i| config_map(&format!("cm-{i:03}"), 100 + i as u64, value_bytes + i))
                .collect();
            let cache = EncodingCache::new(MAX_CACHED_BYTES);
            let streamed = written(head, &objects, &cache);
            let mut whole = head.clone();
            whole["items"] = json!(objects);
            let expected = encode_object(Flavor::Kubernetes, &whole).expect("encodes");
            assert_eq!(streamed, expected, "{count} items of {value_bytes} bytes");
            let raw = unwrap(&streamed).expect("an envelope").raw;
            let list = k8s_pb::api::core::v1::ConfigMapList::decode(raw).expect("k8s-pb decodes");
            assert_eq!(list.items.len(), count);
            let meta = list.metadata.expect("list metadata");
            assert_eq!(
                meta.resource_version,
                head["metadata"]["resourceVersion"]
                    .as_str()
                    .map(str::to_owned)
            );
            for (i, item) in list.items.iter().enumerate() {
                let name = item.metadata.as_ref().and_then(|m| m.name.clone());
                assert_eq!(name, Some(format!("cm-{i:03}")));
            }
        }
    }
}

// R-RES-056: a cached version is not read again, an uncached unreadable one is an error.
#[test]
fn items_are_encoded_once_while_cached() {
    let head = json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {}});
    let layout = ListLayout::new(Flavor::Kubernetes, &head).expect("a list kind");
    let cache = EncodingCache::new(MAX_CACHED_BYTES);
    let reads = Cell::new(0);
    let object = config_map("a", 3, 10);
    for _ in 0..3 {
        layout
            .item(&cache, "/registry/core/configmaps/default/a", 3, || {
                reads.set(reads.get() + 1);
                object.to_string().into_bytes()
            })
            .expect("encodes");
    }
    assert_eq!(reads.get(), 1);
    let unreadable = layout.item(&cache, "/registry/core/configmaps/default/b", 4, || {
        b"not json".to_vec()
    });
    assert!(unreadable.is_err());
    assert!(
        ListLayout::new(
            Flavor::Kubernetes,
            &json!({"kind": "Nope", "apiVersion": "v1"})
        )
        .is_err()
    );
}

// The measured length of a varint is the length written, at every boundary.
#[test]
fn varint_lengths_are_exact() {
    for value in [
        0u64,
        1,
        127,
        128,
        16_383,
        16_384,
        (1 << 21) - 1,
        1 << 21,
        u64::MAX,
    ] {
        let mut out = Vec::new();
        wire::put_varint(&mut out, value);
        assert_eq!(varint_len(value), out.len(), "{value}");
    }
}

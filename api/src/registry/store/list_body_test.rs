//! Unit tests of the streamed list body: the bytes, their announced length, and frames bounded
//! by the frame size rather than by the list.

use http_body::Body as _;
use serde_json::Value;
use serde_json::json;

use super::*;

fn stored(name: &str, value_bytes: usize) -> StoredJson {
    let obj = json!({
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"v": "x".repeat(value_bytes)},
    });
    StoredJson::from_stored(StoredJson::to_stored(&obj).expect("encodes")).expect("decodes")
}

/// Every frame of `body`, checking before each that the announced length is what follows.
fn frames(mut body: ListBody) -> Vec<Bytes> {
    let mut frames = Vec::new();
    while !body.is_end_stream() {
        let announced = body.size_hint().exact().expect("exact length");
        let frame = body.next_frame().expect("a frame before the end");
        assert!(announced >= frame.len() as u64);
        frames.push(frame);
    }
    assert_eq!(body.size_hint().exact(), Some(0));
    assert!(body.next_frame().is_none());
    frames
}

const HEAD: &[u8] =
    br#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42"}}"#;

// R-RES-033, R-RES-024: a list larger than a frame arrives in frames of about the frame size,
// announces its exact length first, and is the list head with every item carrying its own
// `resourceVersion`.
#[test]
fn a_list_larger_than_a_frame_is_written_in_bounded_frames() {
    let items: Vec<BodyItem> = (0..300)
        .map(|i| BodyItem::Stored(stored(&format!("cm-{i:03}"), 1024), 100 + i))
        .collect();
    let body = ListBody::new(HEAD, items);
    let announced = body.size_hint().exact().expect("exact length");
    let frames = frames(body);
    assert!(frames.len() >= 4, "{} frames", frames.len());
    let largest = frames.iter().map(Bytes::len).max().unwrap_or_default();
    assert!(largest < FRAME_BYTES + 2048, "a frame of {largest} bytes");
    let whole: Vec<u8> = frames.concat();
    assert_eq!(whole.len() as u64, announced);
    let list: Value = serde_json::from_slice(&whole).expect("one JSON document");
    assert_eq!(list["metadata"]["resourceVersion"], "42");
    assert_eq!(list["kind"], "ConfigMapList");
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 300);
    for (i, item) in items.iter().enumerate() {
        assert_eq!(item["metadata"]["name"], format!("cm-{i:03}"));
        assert_eq!(item["metadata"]["resourceVersion"], (100 + i).to_string());
    }
}

// R-RES-033: an empty list is one frame, `items` empty; converted items are written as given.
#[test]
fn empty_and_encoded_lists_are_whole_documents() {
    let empty = frames(ListBody::new(HEAD, Vec::new()));
    assert_eq!(empty.len(), 1);
    let list: Value = serde_json::from_slice(&empty[0]).expect("JSON");
    assert_eq!(list["items"], json!([]));
    let encoded = vec![
        BodyItem::Encoded(Bytes::from_static(br#"{"a":1}"#)),
        BodyItem::Stored(stored("b", 3), 7),
    ];
    let body = ListBody::new(HEAD, encoded);
    let announced = body.size_hint().exact();
    let whole = frames(body).concat();
    assert_eq!(Some(whole.len() as u64), announced);
    let list: Value = serde_json::from_slice(&whole).expect("JSON");
    assert_eq!(list["items"][0], json!({"a": 1}));
    assert_eq!(list["items"][1]["metadata"]["resourceVersion"], "7");
}

//! The JSON Patch engine against RFC 6902 and upstream's wording, and its budgets: the
//! operation count, the bytes copied, the shifts, and the nesting depth of what it builds.

use serde_json::Value;
use serde_json::json;

use super::JSON_PATCH_MAX_COPY_BYTES;
use super::JSON_PATCH_MAX_SHIFTS;
use super::MAX_JSON_PATCH_OPERATIONS;
use super::PatchError;
use super::PatchType;
use super::Shape;
use super::apply;
use crate::limits::MAX_NESTING_DEPTH;
use crate::limits::nesting_depth;

fn patch(current: Value, ops: Value) -> Result<Value, PatchError> {
    apply(
        PatchType::Json,
        current,
        ops.to_string().as_bytes(),
        Shape::untyped(),
    )
}

fn refused(got: &Result<Value, PatchError>) -> &str {
    match got {
        Err(PatchError::NotApplicable(message)) => message,
        other => panic!("expected a 422, got {other:?}"),
    }
}

/// `{"a": {"a": ... "leaf"}}`, `depth` maps deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!("leaf"), |inner, _| json!({ "a": inner }))
}

// R-RES-114
#[test]
fn operations_apply_in_order() {
    let got = patch(
        json!({"metadata": {"labels": {"a": "1"}}, "data": {"x": "1"}}),
        json!([
            {"op": "add", "path": "/metadata/labels/b", "value": "2"},
            {"op": "replace", "path": "/data/x", "value": "9"},
            {"op": "remove", "path": "/metadata/labels/a"},
            {"op": "copy", "from": "/data/x", "path": "/data/y"},
        ]),
    );
    assert_eq!(
        got,
        Ok(json!({"metadata": {"labels": {"b": "2"}}, "data": {"x": "9", "y": "9"}}))
    );
}

// R-RES-114: lists by index and `-`, escaped keys, moves, the whole document.
#[test]
fn lists_escapes_moves_and_the_root() {
    let got = patch(
        json!({"l": [1, 2, 3], "a/b": {"c~d": 1}}),
        json!([
            {"op": "add", "path": "/l/0", "value": 0},
            {"op": "add", "path": "/l/-", "value": 4},
            {"op": "remove", "path": "/l/1"},
            {"op": "move", "from": "/a~1b/c~0d", "path": "/l/1"},
            {"op": "move", "from": "/l/0", "path": "/first"},
            {"op": "test", "path": "/l", "value": [1, 2, 3, 4]},
        ]),
    );
    assert_eq!(got, Ok(json!({"l": [1, 2, 3, 4], "a/b": {}, "first": 0})));
    assert_eq!(
        patch(
            json!({"a": 1}),
            json!([{"op": "replace", "path": "", "value": {"b": 2}}])
        ),
        Ok(json!({"b": 2}))
    );
}

// R-RES-115: a failing `test` fails the whole patch with upstream's words, naming the path.
#[test]
fn a_failing_test_fails_the_whole_patch() {
    let got = patch(
        json!({"data": {"x": "1"}}),
        json!([
            {"op": "replace", "path": "/data/x", "value": "2"},
            {"op": "test", "path": "/data/x", "value": "1"},
        ]),
    );
    assert_eq!(refused(&got), "testing value /data/x failed: test failed");
}

// Operations that do not apply are 422 naming the operation and its path.
#[test]
fn operations_that_do_not_apply_name_their_path() {
    let current = json!({"a": {"b": 1}, "l": [1]});
    for (op, want) in [
        (
            json!({"op": "add", "path": "/x/y", "value": 1}),
            r#"add operation does not apply: doc is missing path: "/x/y""#,
        ),
        (
            json!({"op": "remove", "path": "/a/c"}),
            "error in remove for path: '/a/c': Unable to remove nonexistent key: c: missing value",
        ),
        (
            json!({"op": "replace", "path": "/a/c", "value": 1}),
            r#"replace operation does not apply: doc is missing key: "/a/c""#,
        ),
        (
            json!({"op": "add", "path": "/l/5", "value": 1}),
            "error in add for path: '/l/5': Unable to access invalid index: 5: invalid index referenced",
        ),
        (
            json!({"op": "move", "from": "/a", "path": "/a/b/c"}),
            r#"move operation does not apply: "/a" cannot be moved into itself ("/a/b/c")"#,
        ),
        (
            json!({"op": "copy", "from": "/a", "path": "/x/y"}),
            r#"copy operation does not apply: doc is missing destination path: "/x/y""#,
        ),
        (
            json!({"op": "copy", "from": "/nope", "path": "/b"}),
            r#"copy operation does not apply: doc is missing from path: "/nope""#,
        ),
        (
            json!({"op": "test", "path": "/nope", "value": 1}),
            "test operation does not apply: is missing path: /nope",
        ),
        (
            json!({"op": "add", "path": "/b"}),
            "add operation failed to decode value: missing value",
        ),
        (
            json!({"op": "copy", "path": "/b"}),
            "copy operation failed to decode from",
        ),
        (json!({"op": "frob", "path": "/a"}), "Unexpected kind: frob"),
        (json!({"path": "/a"}), "Unexpected kind: unknown"),
    ] {
        let got = patch(current.clone(), json!([op]));
        assert_eq!(refused(&got), want, "{op}");
    }
}

// A path quoted in an error is cut to an excerpt.
#[test]
fn long_paths_are_quoted_in_part() {
    let path = format!("/{}", "x".repeat(100_000));
    let got = patch(json!({}), json!([{"op": "test", "path": path, "value": 1}]));
    let message = refused(&got);
    assert!(message.len() < 1200, "{}", message.len());
}

#[test]
fn a_body_that_is_not_a_list_of_operations_is_malformed() {
    for (body, want) in [
        (
            &b"{\"op\":\"add\"}"[..],
            Some("json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        ),
        (
            b"[{\"op\":\"add\"}, 3]",
            Some("json: cannot unmarshal number into Go value of type jsonpatch.Operation"),
        ),
        (b"[", None),
        (b"", None),
    ] {
        let got = apply(PatchType::Json, json!({}), body, Shape::untyped());
        match (&got, want) {
            (Err(PatchError::Malformed(message)), Some(want)) => assert_eq!(message, want),
            (Err(PatchError::Malformed(_)), None) => {}
            _ => panic!("{body:?}: {got:?}"),
        }
    }
    assert_eq!(patch(json!({"a": 1}), json!(null)), Ok(json!({"a": 1})));
}

// More than 10,000 operations are refused before any applies, in Kubernetes' words.
#[test]
fn too_many_operations_are_refused_before_any_applies() {
    let op = json!({"op": "test", "path": "/nope", "value": 1});
    let at_limit = Value::Array(vec![json!({"op": "add", "path": "/a", "value": 1}); 10_000]);
    assert_eq!(patch(json!({}), at_limit), Ok(json!({"a": 1})));
    let past = Value::Array(vec![op; MAX_JSON_PATCH_OPERATIONS + 1]);
    let got = patch(json!({}), past);
    assert_eq!(got, Err(PatchError::TooManyOperations(10_001)));
    assert_eq!(
        got.expect_err("refused").to_string(),
        "The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
}

// Copies of a value into itself double it; the accumulated copy size is bounded by
// Kubernetes' 3 MiB and answered in upstream's words.
#[test]
fn self_copies_stop_at_the_copy_budget() {
    let mut ops = vec![json!({"op": "add", "path": "/metadata/annotations",
        "value": {"a": "x".repeat(1000)}})];
    for i in 0..30 {
        ops.push(json!({"op": "copy", "from": "/metadata/annotations",
            "path": format!("/metadata/annotations/c{i}")}));
    }
    let got = patch(json!({"metadata": {}}), Value::Array(ops));
    let message = refused(&got);
    assert!(
        message
            .starts_with("Unable to complete the copy, the accumulated size increase of copy is ")
            && message.ends_with(&format!("exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}")),
        "{message}"
    );
    // Copies below the budget are fine, however many.
    let mut ops = vec![json!({"op": "add", "path": "/s", "value": "x".repeat(100)})];
    for i in 0..1000 {
        ops.push(json!({"op": "copy", "from": "/s", "path": format!("/c{i}")}));
    }
    let got = patch(json!({}), Value::Array(ops)).expect("copied");
    assert_eq!(got.as_object().expect("object").len(), 1001);
}

// Copying a chain into its own leaf doubles its depth; the copy that would pass the
// nesting limit is refused, with and without lists on the way.
#[test]
fn nesting_built_by_copies_stops_at_the_limit() {
    let mut ops = vec![json!({"op": "add", "path": "/zz", "value": nested(100)})];
    let mut depth = 100;
    for _ in 0..7 {
        ops.push(
            json!({"op": "copy", "from": "/zz", "path": format!("/zz{}", "/a".repeat(depth))}),
        );
        depth *= 2;
    }
    let got = patch(json!({}), Value::Array(ops));
    assert!(refused(&got).contains("nesting depth"), "{got:?}");
    let lists = json!([
        {"op": "add", "path": "/l", "value": [[[]]]},
        {"op": "copy", "from": "/l", "path": "/l/0/0/0"},
        {"op": "copy", "from": "/l", "path": "/l/0/0/0/0/0/0"},
    ]);
    let got = patch(json!({}), lists).expect("shallow enough");
    assert_eq!(nesting_depth(&got), 13);
    let ten = (0..9).fold(json!([]), |inner, _| json!([inner]));
    let mut ops = vec![json!({"op": "add", "path": "/l", "value": ten})];
    let mut depth = 10;
    for _ in 0..4 {
        let leaf = format!("/l{}", "/0".repeat(depth));
        ops.push(json!({"op": "copy", "from": "/l", "path": leaf}));
        depth *= 2;
    }
    let got = patch(json!({}), Value::Array(ops));
    assert!(refused(&got).contains("nesting depth"), "{got:?}");
}

// An add, replace, copy or move whose value would pass the limit is refused; at the
// limit it is applied. (A value in a patch nests at most 125 deep: the list of operations
// and the operation take two of the parser's levels.)
#[test]
fn every_inserting_operation_keeps_the_nesting_limit() {
    let body_most = MAX_NESTING_DEPTH - 2;
    let fits = patch(
        json!({"a": {}}),
        json!([{"op": "add", "path": "/a/b", "value": nested(body_most)}]),
    )
    .expect("at the limit");
    assert_eq!(nesting_depth(&fits), MAX_NESTING_DEPTH);
    let current = json!({"x": nested(MAX_NESTING_DEPTH - 1), "a": {"b": {"c": 1}}});
    for op in [
        json!({"op": "add", "path": "/a/b/d", "value": nested(body_most)}),
        json!({"op": "replace", "path": "/a/b/c", "value": nested(body_most)}),
        json!({"op": "copy", "from": "/x", "path": "/a/y"}),
        json!({"op": "move", "from": "/x", "path": "/a/y"}),
    ] {
        let got = patch(current.clone(), json!([op]));
        let message = refused(&got);
        assert!(
            message.contains("would exceed the maximum nesting depth of 127"),
            "{op}: {message}"
        );
    }
    for op in [
        json!({"op": "copy", "from": "/x", "path": "/y"}),
        json!({"op": "move", "from": "/x", "path": "/a"}),
    ] {
        let got = patch(current.clone(), json!([op])).expect("within the limit");
        assert_eq!(nesting_depth(&got), MAX_NESTING_DEPTH, "{op}");
    }
}

// Insertions and removals shift what follows them (a map's removals are counted as the
// whole map); the budget stops a patch whose operations would shift more than it allows.
#[test]
fn shifting_long_lists_and_maps_is_budgeted() {
    let len = 100_000;
    let keys: serde_json::Map<String, Value> =
        (0..len).map(|i| (format!("k{i}"), json!(0))).collect();
    let mut ops = vec![json!({"op": "add", "path": "/m", "value": keys})];
    for _ in 0..=JSON_PATCH_MAX_SHIFTS / len {
        ops.push(json!({"op": "add", "path": "/m/z", "value": 1}));
        ops.push(json!({"op": "remove", "path": "/m/z"}));
    }
    let got = patch(json!({}), Value::Array(ops));
    assert!(
        refused(&got).contains("list items and map entries"),
        "{got:?}"
    );
    let mut ops = vec![json!({"op": "add", "path": "/l", "value": vec![0; 1000]})];
    for _ in 0..MAX_JSON_PATCH_OPERATIONS - 1 {
        ops.push(json!({"op": "move", "from": "/l/999", "path": "/l/0"}));
    }
    assert!(patch(json!({}), Value::Array(ops)).is_ok());
}

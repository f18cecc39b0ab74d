//! The apply merge against structured-merge-diff's own merge cases (`typed/merge_test.go`,
//! transcribed onto built-in fields with the same list types) and the rules of spec 000.

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;
use serde_json::json;

use super::merge::merge;
use crate::patch::Shape;
use crate::schema::Schema;

fn pod() -> std::sync::Arc<Schema> {
    crate::schema::of::<Pod>().expect("schema")
}

fn finalizers(items: &[&str]) -> Value {
    json!({"metadata": {"finalizers": items}})
}

// R-RES-216: a set merges by value, in structured-merge-diff's order (the `setStr` cases).
#[test]
fn sets_merge_by_value_in_structured_merge_diff_order() {
    let schema = pod();
    let cases: &[(&[&str], &[&str], &[&str])] = &[
        (&["a", "b", "c"], &["a", "b"], &["a", "b", "c"]),
        (&["a", "b"], &["a", "b", "c"], &["a", "b", "c"]),
        (&["a", "b", "c"], &[], &["a", "b", "c"]),
        (&[], &["a", "b", "c"], &["a", "b", "c"]),
        (&["a", "b"], &["b", "a"], &["b", "a"]),
        (
            &["a", "b", "c"],
            &["d", "e", "f"],
            &["a", "b", "c", "d", "e", "f"],
        ),
        (
            &["a", "b", "c"],
            &["c", "d", "e", "f"],
            &["a", "b", "c", "d", "e", "f"],
        ),
        (
            &["a", "b", "c", "g", "f"],
            &["c", "d", "e", "f"],
            &["a", "b", "c", "g", "d", "e", "f"],
        ),
        (
            &["c", "d", "e", "f"],
            &["a", "c", "e"],
            &["a", "c", "d", "e", "f"],
        ),
        (
            &["a", "b", "c", "x", "y", "z"],
            &["d", "e", "f", "x", "y", "z"],
            &["a", "b", "c", "d", "e", "f", "x", "y", "z"],
        ),
        (
            &["c", "a", "g", "f"],
            &["c", "f", "a", "g"],
            &["c", "f", "a", "g"],
        ),
        (
            &["a", "b", "c", "d"],
            &["d", "e", "f", "a"],
            &["b", "c", "d", "e", "f", "a"],
        ),
        (
            &["c", "d", "e", "f", "g", "h", "i", "j"],
            &["2", "h", "3", "e", "4", "k", "l"],
            &[
                "c", "d", "f", "g", "2", "h", "i", "j", "3", "e", "4", "k", "l",
            ],
        ),
        (
            &["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
            &["1", "b", "2", "h", "3", "e", "4", "k", "l"],
            &[
                "a", "1", "b", "c", "d", "f", "g", "2", "h", "i", "j", "3", "e", "4", "k", "l",
            ],
        ),
        // Duplicates in the live list: kept unless the configuration has the value.
        (&["a", "b", "b"], &["c"], &["a", "b", "b", "c"]),
        (&["a", "b", "b"], &["b"], &["a", "b"]),
        (&["a", "b", "b"], &["a"], &["a", "b", "b"]),
        (
            &["a", "b", "c", "d", "e", "c"],
            &["1", "b", "2", "e", "d"],
            &["a", "1", "b", "c", "2", "e", "c", "d"],
        ),
        (
            &["a", "b", "c", "d", "e", "c"],
            &["1", "b", "2", "c", "e", "d"],
            &["a", "1", "b", "2", "c", "e", "d"],
        ),
        (
            &["a", "a", "b", "b"],
            &["b", "c", "d"],
            &["a", "a", "b", "c", "d"],
        ),
        (&["a", "a", "b", "b"], &[], &["a", "a", "b", "b"]),
        (
            &["c", "a", "g", "f", "c", "a"],
            &["c", "f", "a", "g"],
            &["c", "f", "a", "g"],
        ),
    ];
    for (live, config, want) in cases {
        let got = merge(&finalizers(live), &finalizers(config), Shape::of(&schema))
            .unwrap_or_else(|e| panic!("{live:?} + {config:?}: {e}"));
        assert_eq!(got, finalizers(want), "{live:?} + {config:?}");
    }
}

/// A pod whose one container has `ports` made of `(key, id, extra fields)`: the list map
/// keys `protocol` and `containerPort` stand for structured-merge-diff's `key` and `id`.
fn ports(items: &[(&str, i64, Value)]) -> Value {
    let items: Vec<Value> = items
        .iter()
        .map(|(key, id, extra)| {
            let mut item = json!({"protocol": key, "containerPort": id});
            if let (Value::Object(item), Value::Object(extra)) = (&mut item, extra) {
                item.extend(extra.clone());
            }
            item
        })
        .collect();
    json!({"spec": {"containers": [{"name": "c", "ports": items}]}})
}

// R-RES-217: a map list merges items by their list map keys, in structured-merge-diff's
// order (the "associative list" cases).
#[test]
fn map_lists_merge_items_by_their_keys() {
    let schema = pod();
    let none = || json!({});
    type Items = Vec<(&'static str, i64, Value)>;
    let cases: Vec<(Items, Items, Items)> = vec![
        (
            vec![("a", 1, json!({"hostPort": 5}))],
            vec![("a", 1, json!({"hostPort": 5}))],
            vec![("a", 1, json!({"hostPort": 5}))],
        ),
        (
            vec![("a", 1, json!({"hostPort": 5}))],
            vec![("a", 2, json!({"hostPort": 5}))],
            vec![
                ("a", 1, json!({"hostPort": 5})),
                ("a", 2, json!({"hostPort": 5})),
            ],
        ),
        (
            vec![("a", 1, none()), ("b", 1, none())],
            vec![("a", 1, none()), ("a", 2, none())],
            vec![("a", 1, none()), ("b", 1, none()), ("a", 2, none())],
        ),
        (
            vec![("b", 2, none())],
            vec![("a", 1, none()), ("b", 2, none()), ("c", 3, none())],
            vec![("a", 1, none()), ("b", 2, none()), ("c", 3, none())],
        ),
        (
            vec![("a", 1, none()), ("b", 2, none()), ("c", 3, none())],
            vec![("c", 3, none()), ("b", 2, none())],
            vec![("a", 1, none()), ("c", 3, none()), ("b", 2, none())],
        ),
        (
            vec![("a", 1, none()), ("b", 2, none()), ("c", 3, none())],
            vec![("c", 3, none()), ("a", 1, none())],
            vec![("b", 2, none()), ("c", 3, none()), ("a", 1, none())],
        ),
        // A duplicate live item is not merged: the configuration's item replaces both.
        (
            vec![
                ("a", 1, json!({"name": "t"})),
                ("b", 2, none()),
                ("a", 1, json!({"name": "f", "hostPort": 2})),
            ],
            vec![
                ("a", 1, json!({"hostPort": 3})),
                ("c", 3, none()),
                ("b", 2, none()),
            ],
            vec![
                ("a", 1, json!({"hostPort": 3})),
                ("c", 3, none()),
                ("b", 2, none()),
            ],
        ),
        (
            vec![
                ("a", 1, json!({"hostPort": 1})),
                ("a", 1, json!({"hostPort": 2})),
            ],
            vec![],
            vec![
                ("a", 1, json!({"hostPort": 1})),
                ("a", 1, json!({"hostPort": 2})),
            ],
        ),
    ];
    for (live, config, want) in cases {
        let got = merge(&ports(&live), &ports(&config), Shape::of(&schema))
            .unwrap_or_else(|e| panic!("{live:?} + {config:?}: {e}"));
        assert_eq!(got, ports(&want), "{live:?} + {config:?}");
    }
    // An item's fields merge: the configuration wins on the fields it sets.
    let got = merge(
        &ports(&[("a", 1, json!({"hostPort": 5, "name": "web"}))]),
        &ports(&[("a", 1, json!({"hostPort": 6}))]),
        Shape::of(&schema),
    )
    .expect("merges");
    assert_eq!(
        got,
        ports(&[("a", 1, json!({"hostPort": 6, "name": "web"}))])
    );
}

// R-RES-215, R-RES-218, R-RES-219: granular structs and maps merge per field or key (the
// configuration wins on scalars); atomic maps, atomic structs and atomic lists are replaced.
#[test]
fn granular_values_merge_and_atomic_ones_are_replaced() {
    let schema = pod();
    let live = json!({
        "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
        "spec": {
            "nodeSelector": {"disk": "ssd", "zone": "a"},
            "containers": [{"name": "c", "image": "old", "args": ["x", "y"],
                "env": [{"name": "E", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "a"}}}]}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchFields": [{"key": "k", "operator": "In"}]}]}}}
        }
    });
    let config = json!({
        "metadata": {"labels": {"b": "3", "c": "4"}},
        "spec": {
            "nodeSelector": {"zone": "b"},
            "containers": [{"name": "c", "args": ["z"],
                "env": [{"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "b"}}}]}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": []}}}
        }
    });
    let got = merge(&live, &config, Shape::of(&schema)).expect("merges");
    assert_eq!(
        got,
        json!({
            "metadata": {"name": "p", "labels": {"a": "1", "b": "3", "c": "4"}},
            "spec": {
                "nodeSelector": {"zone": "b"},
                "containers": [{"name": "c", "image": "old", "args": ["z"],
                    "env": [{"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "b"}}}]}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": []}}}
            }
        })
    );
}

// R-RES-221: without a schema, every object merges key by key and every list is replaced.
#[test]
fn untyped_objects_merge_and_their_lists_are_replaced() {
    let live = json!({"spec": {"a": 1, "list": [1, 2, 3], "deep": {"x": {"y": 1}}}});
    let config = json!({"spec": {"b": 2, "list": [4], "deep": {"x": {"z": 2}}}});
    let got = merge(&live, &config, Shape::untyped()).expect("merges");
    assert_eq!(
        got,
        json!({"spec": {"a": 1, "list": [4], "deep": {"x": {"y": 1, "z": 2}}, "b": 2}})
    );
}

// A field the configuration sets to null is cleared; one it leaves out is kept.
#[test]
fn null_clears_a_field() {
    let live = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
    let config = json!({"metadata": {"labels": {"a": null}}});
    let got = merge(&live, &config, Shape::untyped()).expect("merges");
    assert_eq!(got, json!({"metadata": {"labels": {"b": "2"}}}));
}

// Duplicate keys in the configuration, or an item without its keys, are refused with the
// path, as structured-merge-diff words them.
#[test]
fn duplicates_in_the_configuration_are_refused_with_their_path() {
    let schema = pod();
    let config = json!({"spec": {"containers": [{"name": "a"}, {"name": "a", "image": "x"}]}});
    let err = merge(&json!({}), &config, Shape::of(&schema)).expect_err("duplicate");
    assert_eq!(
        err,
        r#".spec.containers: duplicate entries for key [name="a"]"#
    );
    let config = json!({"metadata": {"finalizers": ["x", "x"]}});
    let err = merge(&json!({}), &config, Shape::of(&schema)).expect_err("duplicate");
    assert_eq!(
        err,
        r#".metadata.finalizers: duplicate entries for key [="x"]"#
    );
    let config = json!({"spec": {"containers": [{"image": "x"}]}});
    let err = merge(&json!({}), &config, Shape::of(&schema)).expect_err("no key");
    assert_eq!(
        err,
        r#".spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn't have default value)"#
    );
}

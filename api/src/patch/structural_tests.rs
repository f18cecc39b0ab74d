//! Server-side apply over a custom resource's structural schema: the merge, the field sets
//! and the field manager follow its `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`
//! and `x-kubernetes-map-type` markers as kube-apiserver's type converter for CRDs does.

use serde_json::Value;
use serde_json::json;

use super::Shape;
use super::Structure;
use super::apply::FieldManager;
use super::apply::Manager;
use super::apply::merge::merge;
use super::fieldpath;
use super::fieldpath::fields_v1;
use crate::flavor::Flavor;
use crate::schema::structural::StructuralSchema;

const T0: &str = "2024-01-01T00:00:00Z";

/// A widget's schema: every kind of list and map, an embedded resource, a free-form field.
fn widget() -> StructuralSchema {
    let item = json!({"type": "object", "properties": {
        "name": {"type": "string"},
        "protocol": {"type": "string", "default": "TCP"},
        "value": {"type": "string"},
        "extra": {"type": "string"}
    }});
    StructuralSchema::compile(&json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name", "protocol"], "items": item},
            "tags": {"type": "array", "x-kubernetes-list-type": "set",
                "items": {"type": "string"}},
            "args": {"type": "array", "x-kubernetes-list-type": "atomic",
                "items": {"type": "string"}},
            "plain": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                "additionalProperties": {"type": "string"}},
            "target": {"type": "object", "x-kubernetes-map-type": "atomic",
                "properties": {"kind": {"type": "string"}, "name": {"type": "string"}}},
            "size": {"x-kubernetes-int-or-string": true},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                "properties": {"spec": {"type": "object",
                    "properties": {"x": {"type": "string"}}}}}
        }}}
    }))
    .expect("compiles")
}

fn spec(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": spec})
}

/// The FieldsV1 of `value`'s fields at the widget's root.
fn fields(schema: &StructuralSchema, value: &Value) -> Value {
    let set = fieldpath::of_value(value, Shape::structural(schema)).expect("fields");
    fields_v1::encode(&set)
}

// R-RES-215, R-RES-216, R-RES-217, R-RES-218, R-RES-219
#[test]
fn nodes_take_the_structure_of_their_markers() {
    let schema = widget();
    let root = Shape::structural(&schema);
    assert_eq!(
        root.structure(None, &json!({})),
        Structure::Struct { atomic: false }
    );
    let spec = root.field("spec").0;
    let at = |name: &str, value: Value| spec.field(name).0.structure(None, &value);
    assert!(matches!(
        at("ports", json!([])),
        Structure::List(super::ListKind::Map(_))
    ));
    assert_eq!(at("tags", json!([])), Structure::List(super::ListKind::Set));
    assert_eq!(
        at("args", json!([])),
        Structure::List(super::ListKind::Atomic)
    );
    assert_eq!(
        at("plain", json!([])),
        Structure::List(super::ListKind::Atomic)
    );
    assert_eq!(at("labels", json!({})), Structure::Map { atomic: false });
    assert_eq!(at("selector", json!({})), Structure::Map { atomic: true });
    assert_eq!(at("target", json!({})), Structure::Struct { atomic: true });
    assert_eq!(at("size", json!("50%")), Structure::Scalar);
    assert_eq!(
        at("free", json!({"a": [1]})),
        Structure::Map { atomic: false }
    );
    assert_eq!(
        at("template", json!({})),
        Structure::Struct { atomic: false }
    );
    assert!(spec.field("template").0.declares("metadata"));
    assert!(spec.field("template").0.declares("kind"));
    assert!(!spec.field("labels").0.declares("a"));
    assert!(root.declares("metadata") && root.declares("apiVersion"));
    let keys: Vec<&str> = match at("ports", json!([])) {
        Structure::List(super::ListKind::Map(keys)) => keys.names().collect(),
        other => panic!("{other:?}"),
    };
    assert_eq!(keys, ["name", "protocol"]);
}

// R-RES-215, R-RES-216, R-RES-217: map-list items are named by their keys (a missing key by
// its default), set items by value, an atomic list as a whole.
#[test]
fn field_sets_name_items_as_kubernetes_does() {
    let schema = widget();
    let obj = spec(json!({
        "ports": [{"name": "http", "value": "80"}, {"name": "dns", "protocol": "UDP"}],
        "tags": ["a", "b"],
        "args": ["x"],
        "selector": {"app": "w"},
        "target": {"kind": "K"},
        "labels": {"l": "v"}
    }));
    let got = fields(&schema, &obj);
    let want = json!({
        "f:apiVersion": {}, "f:kind": {},
        "f:metadata": {"f:name": {}},
        "f:spec": {
            "f:args": {},
            "f:labels": {"f:l": {}},
            "f:ports": {
                "k:{\"name\":\"dns\",\"protocol\":\"UDP\"}": {".": {}, "f:name": {}, "f:protocol": {}},
                "k:{\"name\":\"http\",\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:value": {}}
            },
            "f:selector": {},
            "f:tags": {"v:\"a\"": {}, "v:\"b\"": {}},
            "f:target": {}
        }
    });
    assert_eq!(got, want, "{got:#}");
}

// R-RES-215, R-RES-216, R-RES-217, R-RES-218, R-RES-219
#[test]
fn merge_follows_the_markers() {
    let schema = widget();
    let live = spec(json!({
        "ports": [{"name": "http", "value": "80", "extra": "kept"}, {"name": "dns", "protocol": "UDP"}],
        "tags": ["a", "b"],
        "args": ["x", "y"],
        "plain": ["p", "q"],
        "labels": {"a": "1"},
        "selector": {"a": "1"},
        "target": {"kind": "K", "name": "n"}
    }));
    let config = spec(json!({
        "ports": [{"name": "http", "value": "8080"}, {"name": "grpc"}],
        "tags": ["c", "a"],
        "args": ["z"],
        "plain": ["r"],
        "labels": {"b": "2"},
        "selector": {"b": "2"},
        "target": {"name": "m"}
    }));
    let got = merge(&live, &config, Shape::structural(&schema)).expect("merges");
    assert_eq!(
        got["spec"],
        json!({
            "ports": [
                {"name": "http", "value": "8080", "extra": "kept"},
                {"name": "dns", "protocol": "UDP"},
                {"name": "grpc"}
            ],
            "tags": ["c", "a", "b"],
            "args": ["z"],
            "plain": ["r"],
            "labels": {"a": "1", "b": "2"},
            "selector": {"b": "2"},
            "target": {"name": "m"}
        }),
        "{:#}",
        got["spec"]
    );
}

// A map-list item is identified by its keys with their defaults, so an item that omits a
// defaulted key is the item holding the default; a key without a default is an error.
#[test]
fn map_list_keys_take_their_defaults() {
    let schema = widget();
    let live = spec(json!({"ports": [{"name": "http", "protocol": "TCP", "value": "80"}]}));
    let config = spec(json!({"ports": [{"name": "http", "value": "81"}]}));
    let got = merge(&live, &config, Shape::structural(&schema)).expect("merges");
    assert_eq!(
        got["spec"]["ports"],
        json!([{"name": "http", "protocol": "TCP", "value": "81"}])
    );
    let err = merge(
        &live,
        &spec(json!({"ports": [{"value": "1"}]})),
        Shape::structural(&schema),
    )
    .expect_err("no name");
    assert!(
        err.contains(r#"omits key field "name" (and doesn't have default value)"#),
        "{err}"
    );
    let err = merge(
        &live,
        &spec(json!({"ports": [{"name": "a"}, {"name": "a", "protocol": "TCP"}]})),
        Shape::structural(&schema),
    )
    .expect_err("duplicate");
    assert!(err.contains("duplicate entries for key"), "{err}");
}

// The metadata of the object and of an embedded resource is ObjectMeta: finalizers merge as
// a set; an embedded object's spec is granular.
#[test]
fn metadata_is_object_meta() {
    let schema = widget();
    let mut live = spec(json!({"template": {"metadata": {"finalizers": ["a/x"]},
        "spec": {"x": "1"}}}));
    live["metadata"]["finalizers"] = json!(["a/x"]);
    let mut config = spec(json!({"template": {"metadata": {"finalizers": ["b/y"]}}}));
    config["metadata"]["finalizers"] = json!(["b/y"]);
    let got = merge(&live, &config, Shape::structural(&schema)).expect("merges");
    assert_eq!(got["metadata"]["finalizers"], json!(["a/x", "b/y"]));
    assert_eq!(
        got["spec"]["template"],
        json!({"metadata": {"finalizers": ["a/x", "b/y"]}, "spec": {"x": "1"}})
    );
}

fn manager(name: &str) -> Manager<'_> {
    Manager {
        name,
        api_version: "example.com/v1",
        subresource: "",
    }
}

// R-RES-217, R-RES-204, R-RES-211: two managers applying items of one map list keep each
// other's items; changing a field of another manager's item is a conflict on that field.
#[test]
fn managers_own_map_list_items() {
    let schema = widget();
    let fm = FieldManager {
        shape: Shape::structural(&schema),
        flavor: Flavor::Kubernetes,
        now: T0,
    };
    let a = spec(json!({"ports": [{"name": "http", "value": "80"}]}));
    let b = spec(json!({"ports": [{"name": "dns", "value": "53"}]}));
    let obj = fm.apply(None, &a, manager("a"), false).expect("a applies");
    let obj = fm
        .apply(Some(&obj), &b, manager("b"), false)
        .expect("b applies");
    let obj = fm
        .apply(Some(&obj), &a, manager("a"), false)
        .expect("a applies again");
    assert_eq!(
        obj["spec"]["ports"],
        json!([{"name": "http", "value": "80"}, {"name": "dns", "value": "53"}])
    );
    let entry = |name: &str| {
        obj["metadata"]["managedFields"]
            .as_array()
            .and_then(|m| m.iter().find(|e| e["manager"] == name))
            .map(|e| e["fieldsV1"].clone())
    };
    assert_eq!(
        entry("b"),
        Some(json!({"f:spec": {"f:ports": {
            "k:{\"name\":\"dns\",\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:value": {}}
        }}}))
    );
    let steal = spec(json!({"ports": [{"name": "dns", "value": "5353"}]}));
    let err = fm
        .apply(Some(&obj), &steal, manager("a"), false)
        .expect_err("conflict");
    assert_eq!(
        err.to_string(),
        r#"Apply failed with 1 conflict: conflict with "b": .spec.ports[name="dns",protocol="TCP"].value"#
    );
}

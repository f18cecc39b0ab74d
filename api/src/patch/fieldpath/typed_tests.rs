//! Field sets of objects, comparisons and removals, against the managedFields kube-apiserver
//! writes (Kubernetes' "Server-Side Apply" documentation and structured-merge-diff's tests).

use serde_json::Value;
use serde_json::json;

use super::*;
use crate::patch::Shape;
use crate::schema::Schema;

fn schema_of<K: schemars::JsonSchema>() -> std::sync::Arc<Schema> {
    crate::schema::of::<K>().expect("schema")
}

fn f(name: &str) -> PathElement {
    PathElement::Field(name.to_owned())
}

fn encoded(set: &Set) -> Value {
    fields_v1::encode(set)
}

// The documentation's ConfigMap applied by `kubectl apply --server-side`: its Apply entry owns
// the label and the data key, struct fields without `.` (R-RES-047, R-RES-203).
#[test]
fn an_applied_configuration_owns_its_leaves_and_map_entries() {
    let schema = schema_of::<k8s_openapi::api::core::v1::ConfigMap>();
    let config = json!({
        "metadata": {"labels": {"test-label": "test"}},
        "data": {"key": "some value"}
    });
    let set = of_value(&config, Shape::of(&schema)).expect("set");
    assert_eq!(
        encoded(&set),
        json!({"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:test-label": {}}}})
    );
}

// A Deployment's containers are a map list keyed by name, ports by containerPort and protocol
// (defaulted to TCP when omitted); the selector is atomic (R-RES-215, R-RES-217, R-RES-219).
#[test]
fn map_lists_own_items_by_key_and_atomic_structs_whole() {
    let schema = schema_of::<k8s_openapi::api::apps::v1::Deployment>();
    let config = json!({"spec": {
        "selector": {"matchLabels": {"app": "nginx"}},
        "template": {"spec": {"containers": [
            {"name": "nginx", "image": "nginx:1.14.2", "ports": [{"containerPort": 80}]}
        ]}}
    }});
    let set = of_value(&config, Shape::of(&schema)).expect("set");
    assert_eq!(
        encoded(&set),
        json!({"f:spec": {
            "f:selector": {},
            "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {
                ".": {}, "f:image": {}, "f:name": {},
                "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                    ".": {}, "f:containerPort": {}}}
            }}}}
        }})
    );
    let missing = json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}});
    let error = of_value(&missing, Shape::of(&schema)).expect_err("no key");
    assert!(error.contains("omits key field \"name\""), "{error}");
}

// Finalizers are a set: items are owned by value, a declared list field not itself
// (R-RES-216); an object without a schema is unstructured: every key is owned as a map entry,
// lists are atomic (R-RES-221).
#[test]
fn sets_own_values_and_unstructured_lists_are_atomic() {
    let schema = schema_of::<k8s_openapi::api::core::v1::ConfigMap>();
    let config = json!({"metadata": {"finalizers": ["a/b", "c/d"]}});
    let set = of_value(&config, Shape::of(&schema)).expect("set");
    assert_eq!(
        encoded(&set),
        json!({"f:metadata": {"f:finalizers": {"v:\"a/b\"": {}, "v:\"c/d\"": {}}}})
    );
    let set = of_value(
        &json!({"spec": {"list": [1, 2], "m": {"k": 1}}}),
        Shape::untyped(),
    )
    .expect("set");
    assert_eq!(
        encoded(&set),
        json!({"f:spec": {".": {}, "f:list": {}, "f:m": {".": {}, "f:k": {}}}})
    );
}

// The Update entry of `kubectl create configmap` with a label: what was added, a new map with
// `.` (kube-apiserver compares against the empty object, whose metadata exists).
#[test]
fn a_comparison_lists_new_maps_with_themselves() {
    let schema = schema_of::<k8s_openapi::api::core::v1::ConfigMap>();
    let old = json!({"metadata": {}});
    let new = json!({"metadata": {"labels": {"app": "x"}}, "data": {"a": "b"}});
    let comparison = compare(&old, &new, Shape::of(&schema));
    assert_eq!(
        encoded(&comparison.added),
        json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
    );
    assert!(comparison.modified.is_empty() && comparison.removed.is_empty());

    let newer = json!({"metadata": {"labels": {"app": "y"}}, "data": {"c": "d"}});
    let comparison = compare(&new, &newer, Shape::of(&schema));
    assert_eq!(encoded(&comparison.added), json!({"f:data": {"f:c": {}}}));
    assert_eq!(
        encoded(&comparison.modified),
        json!({"f:metadata": {"f:labels": {"f:app": {}}}})
    );
    assert_eq!(encoded(&comparison.removed), json!({"f:data": {"f:a": {}}}));
    assert!(compare(&newer, &newer, Shape::of(&schema)).is_same());
}

// Removing a set's paths takes what is below them along and drops what is left empty;
// extracting keeps only them.
#[test]
fn remove_and_extract_follow_the_set() {
    let schema = schema_of::<k8s_openapi::api::apps::v1::Deployment>();
    let object = json!({"spec": {
        "replicas": 3,
        "template": {"spec": {"containers": [
            {"name": "a", "image": "a:1"},
            {"name": "b", "image": "b:1", "args": ["x"]}
        ]}}
    }});
    let mut set = Set::new();
    let b = PathElement::Key(vec![("name".into(), json!("b"))]);
    let containers = [f("spec"), f("template"), f("spec"), f("containers")];
    set.insert(&[containers.as_slice(), &[b.clone(), f("args")]].concat());
    set.insert(&[f("spec"), f("replicas")]);
    let shape = Shape::of(&schema);
    assert_eq!(
        remove(object.clone(), &set, shape),
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}
        ]}}}})
    );
    assert_eq!(
        extract(&object, &set, shape),
        json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [{"args": ["x"]}]}}}})
    );
    set.insert(&[containers.as_slice(), &[b]].concat());
    let removed = remove(object, &set, shape);
    assert_eq!(
        removed["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "a:1"}])
    );
}

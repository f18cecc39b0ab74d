//! One mutation's result applied to an object: the apply configuration's merge and atomic
//! check, the JSON Patch operations, and the reinvocation memory.

use serde_json::Value;
use serde_json::json;

use super::Reinvocation;
use super::apply_configuration;
use super::json_patch;
use crate::cel::to_cel;
use crate::patch::Shape;

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "nginx", "args": ["x"]},
            {"name": "b", "image": "busybox"}]}}}})
}

// Issue 22 item 3: the merge is server-side apply's, list items matched by their keys.
#[test]
fn apply_configurations_merge_by_list_map_keys() {
    let schema = crate::schema::of::<k8s_openapi::api::apps::v1::Deployment>().expect("schema");
    let config = json!({"metadata": {"labels": {"t": "1"}}, "spec": {"template": {"spec": {
        "containers": [{"name": "b", "image": "patched"}, {"name": "c", "image": "new"}]}}}});
    let merged = apply_configuration::apply(&deployment(), &to_cel(&config), Shape::of(&schema))
        .expect("merges");
    let containers = &merged["spec"]["template"]["spec"]["containers"];
    assert_eq!(
        containers,
        &json!([{"name": "a", "image": "nginx", "args": ["x"]},
            {"name": "b", "image": "patched"}, {"name": "c", "image": "new"}])
    );
    assert_eq!(merged["metadata"]["labels"]["t"], "1");
}

#[test]
fn apply_configurations_may_not_set_atomic_values_or_be_other_than_objects() {
    let schema = crate::schema::of::<k8s_openapi::api::apps::v1::Deployment>().expect("schema");
    let config =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "args": ["y"]}]}}}});
    assert_eq!(
        apply_configuration::apply(&deployment(), &to_cel(&config), Shape::of(&schema)),
        Err("error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.template.spec.containers[0].args".to_owned())
    );
    assert_eq!(
        apply_configuration::apply(&deployment(), &to_cel(&json!([1])), Shape::of(&schema)),
        Err("unsupported return type from ApplyConfiguration expression: list".to_owned())
    );
}

#[test]
fn json_patches_apply_and_a_failed_test_changes_nothing() {
    let object = json!({"data": {"a": "1"}});
    let ops = json!([{"op": "add", "path": "/data/b", "value": "2"},
        {"op": "replace", "path": "/data/a", "value": "3"}]);
    assert_eq!(
        json_patch::apply(&object, &to_cel(&ops)),
        Ok(json!({"data": {"a": "3", "b": "2"}}))
    );
    let failing = json!([{"op": "test", "path": "/data/a", "value": "9"},
        {"op": "add", "path": "/data/b", "value": "2"}]);
    assert_eq!(
        json_patch::apply(&object, &to_cel(&failing)),
        Ok(object.clone())
    );
    let missing = json!([{"op": "replace", "path": "/data/zz/y", "value": "2"}]);
    let error = json_patch::apply(&object, &to_cel(&missing)).expect_err("fails");
    assert!(error.starts_with("JSON Patch: "), "{error}");
    assert_eq!(
        json_patch::apply(&object, &to_cel(&json!({"op": "add"}))),
        Err("type mismatch: JSONPatchType.expression should evaluate to array".to_owned())
    );
    assert_eq!(
        json_patch::apply(&object, &to_cel(&json!(["x"]))),
        Err("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of string".to_owned())
    );
}

#[test]
fn reinvocation_remembers_if_needed_invocations_until_the_object_changes() {
    let key = ("p".to_owned(), "b".to_owned(), None);
    let mut memory = Reinvocation::default();
    memory.invoked(key.clone());
    assert!(!memory.should_reinvoke(&key));
    memory.require_reinvoking();
    assert!(memory.should_reinvoke(&key));
    let object = json!({"a": 1});
    memory.leave(&object);
    assert!(!memory.changed_since_last_pass(&object));
    assert!(memory.changed_since_last_pass(&json!({"a": 2})));
}

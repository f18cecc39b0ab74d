//! The strategic merge rules against upstream's behaviour, on real schemas (Deployment, Pod)
//! so the markers table decides which lists merge.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;
use serde_json::json;

use super::PatchError;
use super::PatchType;
use super::Shape;
use super::apply;
use crate::schema;

fn pod_patch(current: Value, patch: Value) -> Result<Value, PatchError> {
    let schema = schema::of::<Pod>().expect("compiles");
    apply(
        PatchType::Strategic,
        current,
        patch.to_string().as_bytes(),
        Shape::of(&schema),
    )
}

fn pod(containers: Value) -> Value {
    json!({"metadata": {"name": "p"}, "spec": {"containers": containers}})
}

fn names(obj: &Value) -> Vec<&str> {
    obj["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect()
}

// R-RES-117
#[test]
fn containers_merge_by_name_and_new_ones_come_first_without_an_order() {
    let current = pod(json!([{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]));
    let got = pod_patch(
        current,
        json!({"spec": {"containers": [{"name": "b", "image": "2"}, {"name": "c", "image": "3"}]}}),
    )
    .expect("patched");
    // Upstream's mergeSortedSlice: patch items in patch order; a server-only item goes
    // before a patch item only when both are in the server's list.
    assert_eq!(names(&got), ["a", "b", "c"]);
    assert_eq!(got["spec"]["containers"][1]["image"], "2");
    let got = pod_patch(
        pod(json!([{"name": "a"}])),
        json!({"spec": {"containers": [{"name": "z"}]}}),
    )
    .expect("patched");
    assert_eq!(names(&got), ["z", "a"]);
}

// R-RES-117
#[test]
fn set_element_order_orders_the_merged_list() {
    let current = pod(json!([{"name": "a"}, {"name": "b"}, {"name": "c"}]));
    let got = pod_patch(
        current,
        json!({"spec": {
            "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "d"}],
            "containers": [{"name": "d"}]}}),
    )
    .expect("patched");
    // `b` is server-only: it goes before `c`, which follows it in the server's list.
    assert_eq!(names(&got), ["b", "c", "a", "d"]);
}

// R-RES-117
#[test]
fn item_directives_delete_and_replace() {
    let current = pod(json!([{"name": "a"}, {"name": "b"}]));
    let got = pod_patch(
        current.clone(),
        json!({"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}),
    )
    .expect("patched");
    assert_eq!(names(&got), ["b"]);
    let got = pod_patch(
        current.clone(),
        json!({"spec": {"containers": [{"$patch": "replace"}, {"name": "x", "image": "i"}]}}),
    )
    .expect("patched");
    assert_eq!(
        got["spec"]["containers"],
        json!([{"name": "x", "image": "i"}])
    );
    let merge = pod_patch(
        current,
        json!({"spec": {"containers": [{"name": "a", "$patch": "merge"}]}}),
    );
    assert!(matches!(merge, Err(PatchError::Malformed(_))), "{merge:?}");
}

// R-RES-117
#[test]
fn map_directives_replace_and_delete() {
    let current = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {}});
    let got = pod_patch(
        current.clone(),
        json!({"metadata": {"labels": {"$patch": "replace", "c": "3"}}}),
    )
    .expect("patched");
    assert_eq!(got["metadata"]["labels"], json!({"c": "3"}));
    let got = pod_patch(
        current.clone(),
        json!({"metadata": {"labels": {"$patch": "delete"}}}),
    )
    .expect("patched");
    assert_eq!(got["metadata"]["labels"], json!({}));
    let bad = pod_patch(current, json!({"metadata": {"$patch": "frob"}}));
    assert!(matches!(bad, Err(PatchError::Malformed(_))), "{bad:?}");
}

// R-RES-117: nulls remove, unmarked lists are replaced, marked scalar lists are unioned and
// `$deleteFromPrimitiveList` removes from them.
#[test]
fn scalar_lists_and_nulls() {
    let current = json!({
        "metadata": {"finalizers": ["x", "y"], "labels": {"a": "1"}},
        "spec": {"containers": [{"name": "a", "args": ["1", "2"]}]}});
    let got = pod_patch(
        current,
        json!({
            "metadata": {"finalizers": ["z", "x"], "$deleteFromPrimitiveList/finalizers": ["y"],
                         "labels": {"a": null}},
            "spec": {"containers": [{"name": "a", "args": ["3"]}]}}),
    )
    .expect("patched");
    assert_eq!(got["metadata"]["finalizers"], json!(["z", "x"]));
    assert_eq!(got["metadata"]["labels"], json!({}));
    assert_eq!(got["spec"]["containers"][0]["args"], json!(["3"]));
}

// R-RES-117: `$retainKeys` on the Deployment strategy (patchStrategy=retainKeys) clears the
// union member the patch leaves out.
#[test]
fn retain_keys_clears_the_other_members() {
    let schema = schema::of::<Deployment>().expect("compiles");
    let current = json!({"spec": {"strategy": {
        "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    let got = apply(
        PatchType::Strategic,
        current.clone(),
        patch.to_string().as_bytes(),
        Shape::of(&schema),
    )
    .expect("patched");
    assert_eq!(got["spec"]["strategy"], json!({"type": "Recreate"}));
    let outside = json!({"spec": {"strategy": {"$retainKeys": [], "type": "Recreate"}}});
    let bad = apply(
        PatchType::Strategic,
        current,
        outside.to_string().as_bytes(),
        Shape::of(&schema),
    );
    assert_eq!(
        bad,
        Err(PatchError::Malformed(
            "invalid patch format of retainKeys".into()
        ))
    );
}

#[test]
fn merged_items_need_their_merge_key() {
    let got = pod_patch(
        pod(json!([{"name": "a"}])),
        json!({"spec": {"containers": [{"image": "i"}]}}),
    );
    assert!(
        matches!(&got, Err(PatchError::Malformed(m)) if m.contains("does not contain declared merge key: name")),
        "{got:?}"
    );
}

// Without a schema (untyped), objects merge and every list is replaced.
#[test]
fn untyped_lists_are_replaced() {
    let got = apply(
        PatchType::Strategic,
        json!({"a": {"b": 1, "c": [1, 2]}}),
        br#"{"a": {"d": 2, "c": [3]}}"#,
        Shape::untyped(),
    );
    assert_eq!(got, Ok(json!({"a": {"b": 1, "c": [3], "d": 2}})));
}

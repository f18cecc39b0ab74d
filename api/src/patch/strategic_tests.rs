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

// R-RES-117 on long lists and maps: 40,000 containers merged by name (deleted, updated,
// added, reordered), 40,000 finalizers unioned and deleted from, 20,000 labels removed. Each
// list is indexed by merge key once, so this is quick; a search per item would take tens of
// seconds.
#[test]
fn long_lists_merge_by_index() {
    let n = 40_000;
    let containers: Vec<Value> = (0..n)
        .map(|i| json!({"name": format!("c{i}"), "image": "1"}))
        .collect();
    let current = json!({
        "metadata": {
            "name": "p",
            "finalizers": (0..n).map(|i| format!("f{i}")).collect::<Vec<_>>(),
            "labels": (0..n).map(|i| (format!("l{i}"), json!("v"))).collect::<serde_json::Map<_, _>>(),
        },
        "spec": {"containers": containers}});
    let mut patched = Vec::new();
    let mut order = Vec::new();
    for i in (0..n).rev() {
        let name = format!("c{i}");
        match i % 4 {
            0 => patched.push(json!({"name": name, "$patch": "delete"})),
            1 => patched.push(json!({"name": name, "image": "2"})),
            _ => {}
        }
        if i % 4 != 0 {
            order.push(json!({"name": name}));
        }
    }
    for j in 0..100 {
        patched.push(json!({"name": format!("new{j}"), "image": "3"}));
        order.push(json!({"name": format!("new{j}")}));
    }
    let patch = json!({
        "metadata": {
            "finalizers": (0..n).map(|i| format!("g{i}")).collect::<Vec<_>>(),
            "$deleteFromPrimitiveList/finalizers":
                (0..n).step_by(2).map(|i| format!("f{i}")).collect::<Vec<_>>(),
            "labels": (0..n).step_by(2).map(|i| (format!("l{i}"), Value::Null))
                .collect::<serde_json::Map<_, _>>(),
        },
        "spec": {"$setElementOrder/containers": order.clone(), "containers": patched}});
    let got = pod_patch(current, patch).expect("patched");
    let want: Vec<&str> = order
        .iter()
        .map(|o| o["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names(&got), want);
    let containers = got["spec"]["containers"].as_array().expect("list");
    assert_eq!(
        containers[0],
        json!({"name": format!("c{}", n - 1), "image": "1"})
    );
    assert_eq!(
        containers[2],
        json!({"name": format!("c{}", n - 3), "image": "2"})
    );
    assert_eq!(containers[containers.len() - 1]["image"], "3");
    let finalizers = got["metadata"]["finalizers"].as_array().expect("list");
    assert_eq!(finalizers.len(), n + n / 2);
    assert_eq!(finalizers[0], "g0");
    assert_eq!(finalizers[n], "f1");
    assert_eq!(finalizers[finalizers.len() - 1], format!("f{}", n - 1));
    let labels = got["metadata"]["labels"].as_object().expect("map");
    assert_eq!(labels.len(), n / 2);
    assert_eq!(labels.keys().next().map(String::as_str), Some("l1"));
}

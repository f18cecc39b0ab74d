//! The field manager's Update and Apply against the rules of spec 000 "Field management"
//! and the managedFields kube-apiserver writes for the same requests.

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;
use serde_json::json;

use super::FieldManager;
use super::Manager;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::patch::Shape;
use crate::schema::Schema;

const T0: &str = "2010-10-10T00:00:00Z";
const T1: &str = "2020-01-01T00:00:00Z";
const T2: &str = "2021-01-01T00:00:00Z";

fn config_map() -> std::sync::Arc<Schema> {
    crate::schema::of::<ConfigMap>().expect("schema")
}

fn at<'a>(schema: &'a Schema, now: &'a str) -> FieldManager<'a> {
    FieldManager {
        shape: Shape::of(schema),
        flavor: Flavor::Kubernetes,
        now,
    }
}

fn by(name: &str) -> Manager<'_> {
    Manager {
        name,
        api_version: "v1",
        subresource: "",
    }
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "test-cm", "namespace": "default"}, "data": data})
}

/// `(manager, operation)` of each managedFields entry, in order.
fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    let text = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
                    (text("manager"), text("operation"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The `fieldsV1` of `manager`'s entry (null when it has none).
fn fields_of(object: &Value, manager: &str) -> Value {
    object["metadata"]["managedFields"]
        .as_array()
        .and_then(|entries| entries.iter().find(|e| e["manager"] == manager))
        .map_or(Value::Null, |e| e["fieldsV1"].clone())
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

fn conflict_message(err: ApiError) -> String {
    assert!(
        matches!(err, ApiError::ApplyConflict { .. }),
        "not a conflict: {err:?}"
    );
    err.to_string()
}

// R-RES-203, R-RES-042, R-RES-043, R-RES-044, R-RES-045, R-RES-046, R-RES-047: the ConfigMap
// of Kubernetes' "Server-Side Apply" documentation, created by kubectl's apply, gets exactly
// the managedFields entry the documentation shows (name and namespace are nobody's).
#[test]
fn an_apply_records_the_documented_entry() {
    let schema = config_map();
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "test-cm", "namespace": "default", "labels": {"test-label": "test"}},
        "data": {"key": "some value"}});
    let got = at(&schema, T0)
        .apply(None, &config, by("kubectl"), false)
        .expect("applies");
    let mut want = config.clone();
    want["metadata"]["managedFields"] = json!([{
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": "v1",
        "time": T0,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:test-label": {}}}}
    }]);
    assert_eq!(got.to_string(), want.to_string());
}

// R-RES-205, R-RES-043: an Update takes the fields it changes, from appliers too, without
// conflict; its entry is an Update entry with the write's time.
#[test]
fn an_update_takes_what_it_changes_without_conflict() {
    let schema = config_map();
    let live = at(&schema, T0)
        .apply(None, &cm(json!({"a": "1", "b": "2"})), by("kubectl"), false)
        .expect("applies");
    let mut new = live.clone();
    new["data"]["a"] = json!("changed");
    new["data"]["c"] = json!("3");
    at(&schema, T1)
        .update(Some(&live), &mut new, by("controller"))
        .expect("never fails on ownership");
    assert_eq!(
        managers(&new),
        pairs(&[("kubectl", "Apply"), ("controller", "Update")])
    );
    assert_eq!(fields_of(&new, "kubectl"), json!({"f:data": {"f:b": {}}}));
    assert_eq!(
        fields_of(&new, "controller"),
        json!({"f:data": {"f:a": {}, "f:c": {}}})
    );
    assert_eq!(new["metadata"]["managedFields"][1]["time"], T1);
}

// R-RES-204, R-RES-206, R-RES-237: an apply that changes a field another manager owns is
// refused with Kubernetes' 409, and nothing is returned to store; with force it sets the
// value and the other manager loses the field (and its entry, left empty).
#[test]
fn a_conflicting_apply_fails_unless_forced() {
    let schema = config_map();
    let live = at(&schema, T0)
        .apply(None, &cm(json!({"key": "v1"})), by("kubectl"), false)
        .expect("applies");
    let mut updated = live.clone();
    updated["data"]["key"] = json!("controller's");
    at(&schema, T1)
        .update(Some(&live), &mut updated, by("controller"))
        .expect("updates");
    let err = at(&schema, T2)
        .apply(
            Some(&updated),
            &cm(json!({"key": "v2"})),
            by("kubectl"),
            false,
        )
        .expect_err("conflicts");
    let status = err.status();
    assert_eq!(
        conflict_message(err),
        format!(
            r#"Apply failed with 1 conflict: conflict with "controller" using v1 at {T1}: .data.key"#
        )
    );
    assert_eq!(status["code"], 409);
    assert_eq!(status["reason"], "Conflict");
    assert_eq!(
        status["details"],
        json!({"causes": [{"reason": "FieldManagerConflict",
            "message": format!(r#"conflict with "controller" using v1 at {T1}"#),
            "field": ".data.key"}]})
    );
    let forced = at(&schema, T2)
        .apply(
            Some(&updated),
            &cm(json!({"key": "v2"})),
            by("kubectl"),
            true,
        )
        .expect("forced");
    assert_eq!(forced["data"]["key"], "v2");
    assert_eq!(managers(&forced), pairs(&[("kubectl", "Apply")]));
    assert_eq!(
        fields_of(&forced, "kubectl"),
        json!({"f:data": {"f:key": {}}})
    );
}

// R-RES-207: re-applying without the conflicting field gives it up: no conflict, and the
// other manager keeps the field and its value.
#[test]
fn leaving_out_a_conflicting_field_gives_up_the_claim() {
    let schema = config_map();
    let live = at(&schema, T0)
        .apply(
            None,
            &cm(json!({"key": "v1", "other": "x"})),
            by("kubectl"),
            false,
        )
        .expect("applies");
    let mut updated = live.clone();
    updated["data"]["key"] = json!("controller's");
    at(&schema, T1)
        .update(Some(&live), &mut updated, by("controller"))
        .expect("updates");
    let got = at(&schema, T2)
        .apply(
            Some(&updated),
            &cm(json!({"other": "x"})),
            by("kubectl"),
            false,
        )
        .expect("no conflict");
    assert_eq!(got["data"], json!({"key": "controller's", "other": "x"}));
    assert_eq!(
        fields_of(&got, "controller"),
        json!({"f:data": {"f:key": {}}})
    );
    assert_eq!(
        fields_of(&got, "kubectl"),
        json!({"f:data": {"f:other": {}}})
    );
}

// R-RES-208, R-RES-209: applying the value the server holds shares the field (both list
// it); a later change by one sharer without force conflicts with the other.
#[test]
fn equal_values_share_and_a_later_change_conflicts() {
    let schema = config_map();
    let live = at(&schema, T0)
        .apply(None, &cm(json!({"key": "same"})), by("a"), false)
        .expect("applies");
    let shared = at(&schema, T1)
        .apply(Some(&live), &cm(json!({"key": "same"})), by("b"), false)
        .expect("shares");
    assert_eq!(fields_of(&shared, "a"), json!({"f:data": {"f:key": {}}}));
    assert_eq!(fields_of(&shared, "b"), json!({"f:data": {"f:key": {}}}));
    let err = at(&schema, T2)
        .apply(Some(&shared), &cm(json!({"key": "new"})), by("b"), false)
        .expect_err("conflicts");
    assert_eq!(
        conflict_message(err),
        r#"Apply failed with 1 conflict: conflict with "a": .data.key"#
    );
}

// R-RES-210, R-RES-211: a field the applier applied before and now leaves out is removed
// when nobody else owns it, and keeps its value when another manager owns it too.
#[test]
fn omitted_fields_are_removed_unless_someone_else_owns_them() {
    let schema = config_map();
    let live = at(&schema, T0)
        .apply(
            None,
            &cm(json!({"mine": "1", "ours": "2", "keep": "3"})),
            by("a"),
            false,
        )
        .expect("applies");
    let shared = at(&schema, T1)
        .apply(Some(&live), &cm(json!({"ours": "2"})), by("b"), false)
        .expect("shares");
    let got = at(&schema, T2)
        .apply(Some(&shared), &cm(json!({"keep": "3"})), by("a"), false)
        .expect("applies");
    assert_eq!(got["data"], json!({"ours": "2", "keep": "3"}));
    assert_eq!(fields_of(&got, "a"), json!({"f:data": {"f:keep": {}}}));
    assert_eq!(fields_of(&got, "b"), json!({"f:data": {"f:ours": {}}}));
    // Leaving out every field of a struct removes the struct.
    let pod = crate::schema::of::<Pod>().expect("schema");
    let config = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}],
            "securityContext": {"runAsUser": 1}}});
    let live = at(&pod, T0)
        .apply(None, &config, by("a"), false)
        .expect("applies");
    let mut config = config;
    config["spec"]
        .as_object_mut()
        .expect("spec")
        .remove("securityContext");
    let got = at(&pod, T1)
        .apply(Some(&live), &config, by("a"), false)
        .expect("applies");
    assert_eq!(
        got["spec"],
        json!({"containers": [{"name": "c", "image": "i"}]})
    );
}

// R-RES-224, R-RES-226: an Update that sets managedFields to `[{}]` strips every entry
// first, and the writer then owns what it changed in the same request.
#[test]
fn a_reset_strips_entries_before_the_update_is_recorded() {
    let schema = config_map();
    let live = at(&schema, T0)
        .apply(None, &cm(json!({"a": "1"})), by("kubectl"), false)
        .expect("applies");
    let mut reset = live.clone();
    reset["metadata"]["managedFields"] = json!([{}]);
    at(&schema, T1)
        .update(Some(&live), &mut reset, by("writer"))
        .expect("updates");
    assert_eq!(managers(&reset), Vec::<(String, String)>::new());
    assert!(reset["metadata"].get("managedFields").is_none());
    let mut reset_and_change = live.clone();
    reset_and_change["metadata"]["managedFields"] = json!([{}]);
    reset_and_change["data"]["b"] = json!("2");
    at(&schema, T1)
        .update(Some(&live), &mut reset_and_change, by("writer"))
        .expect("updates");
    assert_eq!(managers(&reset_and_change), pairs(&[("writer", "Update")]));
    assert_eq!(
        fields_of(&reset_and_change, "writer"),
        json!({"f:data": {"f:b": {}}})
    );
}

// R-RES-225: managedFields set to an empty list (or to entries that do not decode) keep the
// live object's entries.
#[test]
fn an_empty_or_invalid_list_keeps_the_live_entries() {
    let schema = config_map();
    let live = at(&schema, T0)
        .apply(None, &cm(json!({"a": "1"})), by("kubectl"), false)
        .expect("applies");
    for sent in [
        json!([]),
        json!([{"manager": "x", "operation": "Bogus"}]),
        Value::Null,
    ] {
        let mut new = live.clone();
        new["metadata"]["managedFields"] = sent.clone();
        at(&schema, T1)
            .update(Some(&live), &mut new, by("writer"))
            .expect("updates");
        assert_eq!(
            new["metadata"]["managedFields"], live["metadata"]["managedFields"],
            "{sent}"
        );
    }
}

// R-RES-203: entries sent with an Update replace the live ones (managedFields can be written
// directly); a write through a subresource cannot.
#[test]
fn sent_entries_replace_the_live_ones_except_through_a_subresource() {
    let schema = config_map();
    let live = at(&schema, T0)
        .apply(None, &cm(json!({"a": "1"})), by("kubectl"), false)
        .expect("applies");
    let entries = json!([{"manager": "other", "operation": "Update", "apiVersion": "v1",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}]);
    let mut new = live.clone();
    new["metadata"]["managedFields"] = entries.clone();
    at(&schema, T1)
        .update(Some(&live), &mut new, by("writer"))
        .expect("updates");
    assert_eq!(new["metadata"]["managedFields"], entries);
    let mut through_status = live.clone();
    through_status["metadata"]["managedFields"] = entries;
    let status = Manager {
        subresource: "status",
        ..by("writer")
    };
    at(&schema, T1)
        .update(Some(&live), &mut through_status, status)
        .expect("updates");
    assert_eq!(
        through_status["metadata"]["managedFields"],
        live["metadata"]["managedFields"]
    );
}

// At most ten Update managers: the oldest are folded into `ancient-changes`.
#[test]
fn update_managers_are_capped_at_ten() {
    let schema = config_map();
    let mut live = cm(json!({}));
    for i in 0..12 {
        let mut new = live.clone();
        new["data"][format!("k{i}")] = json!("v");
        let now = format!("2020-01-01T00:00:{i:02}Z");
        at(&schema, &now)
            .update(Some(&live), &mut new, by(&format!("m{i}")))
            .expect("updates");
        live = new;
    }
    let names: Vec<String> = managers(&live).into_iter().map(|(m, _)| m).collect();
    assert_eq!(names.len(), 10);
    assert_eq!(names[0], "ancient-changes");
    assert_eq!(
        fields_of(&live, "ancient-changes"),
        json!({"f:data": {"f:k0": {}, "f:k1": {}, "f:k2": {}}})
    );
    assert_eq!(
        names[1..],
        ["m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11"]
    );
}

// The first apply to an object without managedFields gives its existing fields to
// `before-first-apply`, an Update manager the applier then conflicts with.
#[test]
fn the_first_apply_records_the_fields_before_it() {
    let schema = config_map();
    let live = cm(json!({"old": "1", "shared": "x"}));
    let got = at(&schema, T1)
        .apply(Some(&live), &cm(json!({"new": "2"})), by("a"), false)
        .expect("applies");
    assert_eq!(
        managers(&got),
        pairs(&[("a", "Apply"), ("before-first-apply", "Update")])
    );
    assert_eq!(
        fields_of(&got, "before-first-apply"),
        json!({"f:data": {".": {}, "f:old": {}, "f:shared": {}}})
    );
    let err = at(&schema, T1)
        .apply(Some(&live), &cm(json!({"shared": "y"})), by("a"), false)
        .expect_err("conflicts");
    assert_eq!(
        conflict_message(err),
        format!(
            r#"Apply failed with 1 conflict: conflict with "before-first-apply" using v1 at {T1}: .data.shared"#
        )
    );
}

// kubectl moving from client-side apply: a conflict on a field whose live value is the one
// in the last-applied annotation is taken over, and the annotation keeps the configuration;
// a field someone else changed since still conflicts.
#[test]
fn kubectl_takes_over_its_client_side_fields() {
    let schema = config_map();
    let key = "kubectl.kubernetes.io/last-applied-configuration";
    let last = r#"{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"test-cm","namespace":"default"}}"#;
    let mut live = cm(json!({"a": "1", "b": "2"}));
    live["metadata"]["annotations"] = json!({ key: last });
    let config = cm(json!({"a": "10", "b": "2"}));
    let got = at(&schema, T1)
        .apply(Some(&live), &config, by("kubectl"), false)
        .expect("taken over");
    assert_eq!(got["data"], json!({"a": "10", "b": "2"}));
    let annotation = got["metadata"]["annotations"][key].as_str().expect("kept");
    assert_eq!(
        annotation,
        "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"10\",\"b\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"test-cm\",\"namespace\":\"default\"}}\n"
    );
    let mut drifted = live.clone();
    drifted["data"]["a"] = json!("changed by hand");
    let err = at(&schema, T1)
        .apply(Some(&drifted), &config, by("kubectl"), false)
        .expect_err("conflicts");
    assert!(conflict_message(err).ends_with(": .data.a"));
    let err = at(&schema, T1)
        .apply(Some(&live), &config, by("someone"), false)
        .expect_err("only kubectl takes over");
    assert!(conflict_message(err).ends_with(": .data.a"));
}

// R-RES-222: a set that became atomic is owned whole by the owners of its items, so another
// manager's change conflicts. R-RES-223: an atomic list that became a set gives its owner no
// items, so a change of them does not conflict.
#[test]
fn atomic_and_granular_changes_follow_the_schema() {
    let pod = crate::schema::of::<Pod>().expect("schema");
    let with = |items: &[&str]| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "finalizers": items}});
    let granular = |now| at(&pod, now);
    let atomic = |now| FieldManager {
        shape: Shape::untyped(),
        ..at(&pod, now)
    };
    let live = granular(T0)
        .apply(None, &with(&["a"]), by("one"), false)
        .expect("applies");
    assert_eq!(
        fields_of(&live, "one"),
        json!({"f:metadata": {"f:finalizers": {"v:\"a\"": {}}}})
    );
    let err = atomic(T1)
        .apply(Some(&live), &with(&["a", "b"]), by("two"), false)
        .expect_err("the owner of an item owns the atomic list");
    assert!(conflict_message(err).ends_with(": .metadata.finalizers"));

    let live = atomic(T0)
        .apply(None, &with(&["a"]), by("one"), false)
        .expect("applies");
    assert_eq!(
        fields_of(&live, "one"),
        json!({"f:metadata": {"f:finalizers": {}}})
    );
    let got = granular(T1)
        .apply(Some(&live), &with(&["a", "b"]), by("two"), false)
        .expect("no conflict");
    assert_eq!(got["metadata"]["finalizers"], json!(["a", "b"]));
}

// R-RES-237: several conflicts are grouped by manager as Kubernetes words them, one cause
// per field.
#[test]
fn several_conflicts_are_grouped_by_manager() {
    let schema = config_map();
    let live = at(&schema, T0)
        .apply(None, &cm(json!({"a": "1", "b": "2"})), by("x"), false)
        .expect("applies");
    let mut updated = live.clone();
    updated["data"]["c"] = json!("3");
    at(&schema, T1)
        .update(Some(&live), &mut updated, by("y"))
        .expect("updates");
    let err = at(&schema, T2)
        .apply(
            Some(&updated),
            &cm(json!({"a": "9", "b": "9", "c": "9"})),
            by("z"),
            false,
        )
        .expect_err("conflicts");
    let status = err.status();
    assert_eq!(
        conflict_message(err),
        format!(
            "Apply failed with 3 conflicts: conflicts with \"x\":\n- .data.a\n- .data.b\nconflicts with \"y\" using v1 at {T1}:\n- .data.c"
        )
    );
    assert_eq!(
        status["details"]["causes"].as_array().map(Vec::len),
        Some(3)
    );
}

// Duplicates in an apply configuration are refused (422), managedFields in it too (400).
#[test]
fn bad_configurations_are_refused() {
    let schema = config_map();
    let pod = crate::schema::of::<Pod>().expect("schema");
    let config = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c"}, {"name": "c"}]}});
    let err = at(&pod, T0)
        .apply(None, &config, by("a"), false)
        .expect_err("duplicates");
    assert_eq!(err.code(), http::StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        err.to_string()
            .contains("duplicate entries for key [name=\"c\"]"),
        "{err}"
    );
    let mut config = cm(json!({}));
    config["metadata"]["managedFields"] = json!([]);
    let err = at(&schema, T0)
        .apply(None, &config, by("a"), false)
        .expect_err("managedFields");
    assert_eq!(
        err,
        ApiError::BadRequest("metadata.managedFields must be nil".to_owned())
    );
}

// R-RES-237: a conflict names its manager as Kubernetes prints it (with the subresource it
// wrote through, and for an Update manager its API version and time); the details name no
// object, as Kubernetes' apply conflict does.
#[test]
fn conflicts_name_their_manager_as_kubernetes_prints_it() {
    use super::Conflict;
    use super::Operation;
    use super::conflict_error;
    use crate::group::GroupKind;
    use crate::patch::fieldpath::PathElement;

    let replicas = vec![
        PathElement::Field("spec".to_owned()),
        PathElement::Field("replicas".to_owned()),
    ];
    let kind = GroupKind {
        group: "apps".to_owned(),
        kind: "Deployment".to_owned(),
    };
    let scaler = Conflict {
        manager: "scaler".to_owned(),
        operation: Operation::Update,
        api_version: "autoscaling/v1".to_owned(),
        time: Some(T1.to_owned()),
        subresource: "scale".to_owned(),
        path: replicas.clone(),
    };
    let err = conflict_error(kind.clone(), "d", std::slice::from_ref(&scaler));
    assert_eq!(
        err.to_string(),
        format!(
            r#"Apply failed with 1 conflict: conflict with "scaler" with subresource "scale" using autoscaling/v1 at {T1}: .spec.replicas"#
        )
    );
    assert_eq!(
        err.status()["details"],
        json!({"causes": [{"reason": "FieldManagerConflict",
            "message": format!(r#"conflict with "scaler" with subresource "scale" using autoscaling/v1 at {T1}"#),
            "field": ".spec.replicas"}]})
    );
    let applier = Conflict {
        manager: "kubectl".to_owned(),
        operation: Operation::Apply,
        api_version: "apps/v1".to_owned(),
        time: Some(T1.to_owned()),
        subresource: String::new(),
        path: replicas,
    };
    let err = conflict_error(kind, "d", &[applier]);
    assert_eq!(
        err.to_string(),
        r#"Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas"#
    );
}

// R-RES-217, R-RES-219, R-RES-210: map-list items are owned one by one, so two appliers each
// keep their own container, and one that leaves its item out removes only that item; an
// atomic struct (`fieldRef`) is owned whole.
#[test]
fn list_items_are_owned_one_by_one() {
    let pod = crate::schema::of::<Pod>().expect("schema");
    let with = |containers: Value| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": containers}})
    };
    let a = with(json!([{"name": "a", "image": "ia",
        "env": [{"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]}]));
    let live = at(&pod, T0)
        .apply(None, &a, by("one"), false)
        .expect("applies");
    assert_eq!(
        fields_of(&live, "one"),
        json!({"f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {
            ".": {}, "f:env": {"k:{\"name\":\"E\"}": {
                ".": {}, "f:name": {}, "f:valueFrom": {"f:fieldRef": {}}}},
            "f:image": {}, "f:name": {}}}}})
    );
    let both = at(&pod, T1)
        .apply(
            Some(&live),
            &with(json!([{"name": "b", "image": "ib"}])),
            by("two"),
            false,
        )
        .expect("no conflict on another item");
    assert_eq!(
        both["spec"]["containers"],
        json!([{"name": "a", "image": "ia",
            "env": [{"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]},
            {"name": "b", "image": "ib"}])
    );
    let got = at(&pod, T2)
        .apply(Some(&both), &with(json!([])), by("one"), false)
        .expect("applies");
    assert_eq!(
        got["spec"]["containers"],
        json!([{"name": "b", "image": "ib"}])
    );
    // An empty list owns nothing, and an applier that owns nothing has no entry.
    assert_eq!(managers(&got), pairs(&[("two", "Apply")]));
}

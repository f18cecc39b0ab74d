//! managedFields entries against the ones kube-apiserver writes.

use serde_json::json;

use super::Operation;
use super::managed_fields::Identity;
use super::managed_fields::decode;
use super::managed_fields::encode;
use super::managed_fields::is_reset;

// R-RES-042, R-RES-043, R-RES-044, R-RES-045, R-RES-046, R-RES-047: the entry of Kubernetes'
// "Server-Side Apply" documentation (a ConfigMap applied by kubectl), with an Update entry
// and a status subresource entry of the same form, decodes and encodes back byte for byte,
// in Kubernetes' order whatever the order sent.
#[test]
fn entries_round_trip_as_kubernetes_writes_them() {
    let written = json!([
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": "2010-10-10T00:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:test-label": {}}}}
        },
        {
            "manager": "kube-controller-manager",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2019-03-30T16:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:key": {}}}
        },
        {
            "manager": "kubelet",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2019-03-30T16:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:phase": {}}},
            "subresource": "status"
        }
    ]);
    let managers = decode(Some(&written)).expect("decodes");
    assert_eq!(managers.len(), 3);
    let applier = Identity::new("kubectl", Operation::Apply, "v1", "");
    assert_eq!(
        applier.api_version, "",
        "an applier is known without its version"
    );
    assert!(managers.contains_key(&applier));
    let mut shuffled = written.as_array().expect("list").clone();
    shuffled.reverse();
    let managers = decode(Some(&json!(shuffled))).expect("decodes");
    assert_eq!(
        encode(&managers).expect("entries").to_string(),
        written.to_string()
    );
}

// R-RES-043: entries sort as Kubernetes sorts them: operation, time, manager, apiVersion,
// subresource; an entry without a time sorts as the epoch.
#[test]
fn entries_sort_by_operation_time_manager_version_subresource() {
    let entry = |manager: &str, op: &str, version: &str, time: Option<&str>, sub: &str| {
        let mut e = json!({"manager": manager, "operation": op, "apiVersion": version,
            "fieldsType": "FieldsV1", "fieldsV1": {"f:a": {}}});
        if let Some(time) = time {
            e["time"] = json!(time);
        }
        if !sub.is_empty() {
            e["subresource"] = json!(sub);
        }
        e
    };
    let t1 = Some("2020-01-01T00:00:00Z");
    let t2 = Some("2021-01-01T00:00:00Z");
    let sent = json!([
        entry("b", "Update", "v1", t1, ""),
        entry("a", "Update", "v2", t1, ""),
        entry("a", "Update", "v1", t1, "status"),
        entry("a", "Update", "v1", t1, ""),
        entry("z", "Update", "v1", None, ""),
        entry("a", "Update", "v1", t2, "scale"),
        entry("z", "Apply", "v1", t2, ""),
    ]);
    let managers = decode(Some(&sent)).expect("decodes");
    let order: Vec<(String, String, String)> = encode(&managers)
        .expect("entries")
        .as_array()
        .expect("list")
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_owned(),
                e["apiVersion"].as_str().unwrap_or_default().to_owned(),
                e["subresource"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let want = [
        ("z", "v1", ""),
        ("z", "v1", ""),
        ("a", "v1", ""),
        ("a", "v1", "status"),
        ("a", "v2", ""),
        ("b", "v1", ""),
        ("a", "v1", "scale"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(m, v, s)| ((*m).to_owned(), (*v).to_owned(), (*s).to_owned()))
        .collect();
    assert_eq!(order, want);
}

// Malformed entries refuse the whole list (the caller falls back as Kubernetes does).
#[test]
fn malformed_entries_are_refused() {
    let good = json!({"manager": "m", "operation": "Update", "apiVersion": "v1",
        "fieldsType": "FieldsV1", "fieldsV1": {}});
    for (change, why) in [
        (
            json!({"operation": "Replace"}),
            "operation must be `Apply` or `Update`",
        ),
        (json!({"apiVersion": ""}), "apiVersion must not be empty"),
        (json!({"fieldsType": null}), "missing fieldsType"),
        (
            json!({"fieldsType": "FieldsV2"}),
            "invalid fieldsType \"FieldsV2\"",
        ),
        (json!({"fieldsV1": {"x:y": {}}}), "invalid field key"),
        (json!({"time": "yesterday"}), "invalid time"),
    ] {
        let mut entry = good.clone();
        if let (Some(entry), Some(change)) = (entry.as_object_mut(), change.as_object()) {
            entry.extend(change.clone());
        }
        let err = decode(Some(&json!([good.clone(), entry]))).expect_err(why);
        assert!(err.contains("entry 1") && err.contains(why), "{err}");
    }
    assert!(decode(Some(&json!({"a": 1}))).is_err());
    assert_eq!(decode(None).expect("none").len(), 0);
    assert_eq!(encode(&decode(Some(&json!([]))).expect("empty")), None);
}

// R-RES-224, R-RES-225: only a list of one empty entry is a reset; an empty list is not.
#[test]
fn only_one_empty_entry_resets() {
    assert!(is_reset(Some(&json!([{}]))));
    assert!(is_reset(Some(&json!([{"manager": ""}]))));
    assert!(!is_reset(Some(&json!([]))));
    assert!(!is_reset(Some(&json!([{}, {}]))));
    assert!(!is_reset(Some(&json!([{"manager": "m"}]))));
    assert!(!is_reset(None));
}

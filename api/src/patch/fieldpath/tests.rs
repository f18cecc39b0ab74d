//! The set operations and the `fieldsV1` form, against the managedFields Kubernetes writes.

use serde_json::json;

use super::fields_v1;
use super::*;

fn field(name: &str) -> PathElement {
    PathElement::Field(name.to_owned())
}

// A Deployment's managedFields entry as kube-apiserver writes it for `kubectl create`
// (Kubernetes' documentation, "Server-Side Apply", field management example).
#[test]
fn fields_v1_round_trips_in_kubernetes_order() {
    let written = json!({
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:containers": {
                "k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {},
                    "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                        ".": {}, "f:containerPort": {}, "f:protocol": {}}}}
            },
            "f:finalizers": {"v:\"a\"": {}, "v:1": {}},
            "f:args": {"i:0": {}, "i:10": {}, "i:2": {}}
        }
    });
    let set = fields_v1::decode(&written).expect("decodes");
    assert!(set.has(&[field("metadata"), field("labels")]));
    assert!(set.has(&[field("metadata"), field("labels"), field("app")]));
    assert!(!set.has(&[field("metadata")]));
    let mut expected = written.clone();
    // Indices are ordered as numbers, values by type (numbers first).
    expected["f:spec"]["f:args"] = json!({"i:0": {}, "i:2": {}, "i:10": {}});
    expected["f:spec"]["f:finalizers"] = json!({"v:1": {}, "v:\"a\"": {}});
    // Fields come in name order: f:args, f:containers, f:finalizers.
    let encoded = fields_v1::encode(&set);
    assert_eq!(encoded.to_string(), reorder(&expected).to_string());
}

/// `value` with every object's keys in the order [`fields_v1::encode`] writes them.
fn reorder(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|(a, _), (b, _)| match (a.as_str(), b.as_str()) {
                (".", _) => std::cmp::Ordering::Less,
                (_, ".") => std::cmp::Ordering::Greater,
                _ => fields_v1::element_of(a)
                    .expect("key")
                    .cmp(&fields_v1::element_of(b).expect("key")),
            });
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), reorder(v)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

use serde_json::Value;

#[test]
fn set_algebra() {
    let mut a = Set::new();
    a.insert(&[field("spec"), field("replicas")]);
    a.insert(&[field("spec"), field("paused")]);
    let mut b = Set::new();
    b.insert(&[field("spec"), field("replicas")]);
    b.insert(&[field("metadata")]);
    let both = a.intersection(&b);
    assert_eq!(both.paths(), vec![vec![field("spec"), field("replicas")]]);
    assert_eq!(
        a.difference(&b).paths(),
        vec![vec![field("spec"), field("paused")]]
    );
    assert_eq!(a.union(&b).paths().len(), 3);
    assert!(a.difference(&a).is_empty());
    assert!(a.has_prefix(&[field("spec")]));
    assert!(!a.has(&[field("spec")]));
}

#[test]
fn in_place_union_and_difference_equal_the_copying_ones() {
    let mut a = Set::new();
    a.insert(&[field("spec"), field("replicas")]);
    a.insert(&[field("spec"), field("template"), field("labels")]);
    a.insert(&[field("metadata"), field("labels"), field("app")]);
    a.insert(&[field("data")]);
    let mut b = Set::new();
    b.insert(&[field("spec"), field("replicas")]);
    b.insert(&[field("spec"), field("paused")]);
    b.insert(&[field("metadata"), field("labels"), field("app")]);
    b.insert(&[field("metadata")]);
    for (x, y) in [
        (&a, &b),
        (&b, &a),
        (&a, &a),
        (&a, &Set::new()),
        (&Set::new(), &a),
    ] {
        let mut absorbed = x.clone();
        absorbed.absorb(y.clone());
        assert_eq!(x.union(y), absorbed);
        let mut subtracted = x.clone();
        subtracted.subtract(y);
        assert_eq!(x.difference(y), subtracted);
    }
    let mut emptied = a.clone();
    emptied.subtract(&a);
    assert_eq!(Set::new(), emptied, "no empty subtree is left behind");
}

#[test]
fn paths_print_as_structured_merge_diff_prints_them() {
    let path = [
        field("spec"),
        field("containers"),
        PathElement::Key(vec![("name".into(), json!("nginx"))]),
        field("image"),
    ];
    assert_eq!(
        DisplayPath(&path).to_string(),
        ".spec.containers[name=\"nginx\"].image"
    );
    let path = [
        field("f"),
        PathElement::Value(json!(1)),
        PathElement::Index(2),
    ];
    assert_eq!(DisplayPath(&path).to_string(), ".f[=1][2]");
}

#[test]
fn malformed_fields_v1_is_refused() {
    for bad in [
        json!([]),
        json!({"x:1": {}}),
        json!({"f:a": 1}),
        json!({"k:[1]": {}}),
        json!({"i:x": {}}),
        json!({".": {}}),
    ] {
        assert!(fields_v1::decode(&bad).is_err(), "{bad}");
    }
}

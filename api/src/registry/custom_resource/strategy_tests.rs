//! The custom resource strategy's validation of creates, main-resource updates and status
//! writes, and its finalizer warnings.

use serde_json::json;

use super::*;

/// A strategy with a `status` subresource over `schema` (its rules too), and `scale`.
fn strategy(schema: &Value, scale: Option<ScalePaths>) -> CustomResourceStrategy {
    let rules = ValidationRules::compile(schema).expect("rules");
    CustomResourceStrategy {
        status: true,
        scale,
        selectable: Arc::new([]),
        structural: Some(Arc::new(StructuralSchema::compile(schema).expect("schema"))),
        rules: (!rules.is_empty()).then(|| Arc::new(rules)),
        namespace_finalizer: "kubernetes",
    }
}

fn texts(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

/// A schema whose spec's `size` is at most 10 (also by a rule) and whose status has an
/// enumerated `phase`, a `count` of at least 0 and a rule of its own.
fn widget_schema() -> Value {
    json!({"type": "object", "properties": {
        "spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self.size <= 10", "message": "at most ten"}],
            "properties": {"size": {"type": "integer", "maximum": 10}}},
        "status": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "!has(self.count) || self.count < 100", "message": "too many"}],
            "properties": {
                "phase": {"type": "string", "enum": ["Ready", "Pending"]},
                "count": {"type": "integer", "minimum": 0},
                "tags": {"type": "array", "x-kubernetes-list-type": "set",
                    "items": {"type": "string"}}}},
    }})
}

fn widget(size: i64, status: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"size": size}, "status": status})
}

// apiextensions' scale checks: a negative, oversized or non-integer replica count at the
// definition's paths, or a path through a non-object, is refused with its path; missing
// counts are fine.
#[test]
fn replicas_at_the_scale_paths_must_fit_a_scale() {
    let strategy = CustomResourceStrategy {
        status: true,
        scale: Some(ScalePaths::new(".spec.replicas", ".status.replicas", None)),
        selectable: Arc::new([]),
        structural: None,
        rules: None,
        namespace_finalizer: "kubernetes",
    };
    let errs = |obj: Value| texts(&strategy.validate_create(&obj));
    assert!(errs(json!({"spec": {}})).is_empty());
    assert_eq!(
        errs(json!({"spec": {"replicas": -1}})),
        [".spec.replicas: Invalid value: -1: should be a non-negative integer"]
    );
    assert_eq!(
        errs(json!({"status": {"replicas": 2147483648_i64}})),
        [".status.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647"]
    );
    assert!(errs(json!({"spec": null})).is_empty());
    assert_eq!(
        errs(json!({"spec": "big"})),
        [
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: big is of the type string, expected map[string]interface{}"
        ]
    );
    assert_eq!(
        errs(json!({"spec": {"replicas": "3"}})),
        [
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 3 is of the type string, expected int64"
        ]
    );
}

// A status write is validated as Kubernetes' status strategy does: a spec a stricter schema
// now refuses (spec rules and value checks alike) does not block it; its status is checked
// against the status schema, under `status`, with the rules; an unchanged invalid status is
// ratcheted.
// CHECKLIST: R-VER-003 (rules of a status write, with `oldSelf`'s ratcheting).
#[test]
fn a_status_write_checks_the_status_not_the_spec() {
    let strategy = strategy(&widget_schema(), None);
    let old = widget(20, json!({"phase": "Pending"}));
    assert!(strategy.validate_status_update(&old, &old).is_empty());
    let ready = widget(20, json!({"phase": "Ready", "count": 3}));
    assert!(texts(&strategy.validate_status_update(&ready, &old)).is_empty());

    let bad = widget(
        20,
        json!({"phase": "Gone", "count": -1, "tags": ["a", "a"]}),
    );
    let errs = strategy.validate_status_update(&bad, &old);
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        ["status.count", "status.phase", "status.tags[1]", "<nil>"],
        "{errs:?}"
    );
    assert_eq!(
        errs.first().map(ToString::to_string).as_deref(),
        Some("status.count: Invalid value: -1: count in body should be greater than or equal to 0")
    );

    let many = widget(20, json!({"phase": "Ready", "count": 100}));
    assert_eq!(
        texts(&strategy.validate_status_update(&many, &old)),
        ["status: Invalid value: \"object\": too many"]
    );
    // Unchanged, the invalid status no longer blocks the next status write's other fields.
    let stuck = widget(20, json!({"phase": "Gone", "count": 100}));
    let next = widget(20, json!({"phase": "Gone", "count": 100, "tags": ["b"]}));
    assert_eq!(
        texts(&strategy.validate_status_update(&next, &stuck)),
        ["status: Invalid value: \"object\": too many"]
    );
}

// A main-resource write still validates the whole object: a changed spec is checked (the
// value check and the rule), and so is an unchanged invalid spec once the labels change only
// where the schema says something of the root; the unchanged spec itself is ratcheted.
#[test]
fn a_main_write_checks_the_whole_object() {
    let strategy = strategy(&widget_schema(), None);
    let old = widget(5, json!({"phase": "Ready"}));
    let grown = widget(20, json!({"phase": "Ready"}));
    assert_eq!(
        texts(&strategy.validate_update(&grown, &old)),
        [
            "spec.size: Invalid value: 20: spec.size in body should be less than or equal to 10",
            "spec: Invalid value: \"object\": at most ten",
        ]
    );
    let mut labelled = grown.clone();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    assert!(strategy.validate_update(&labelled, &grown).is_empty());
    assert_eq!(strategy.validate_create(&grown).len(), 2);
}

// apiextensions' `hasBlockingErr`: a missing required field, a too long string and too many
// items keep the rules from running, as a wrong type does.
#[test]
fn required_and_size_errors_block_the_rules() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "required": ["name"],
        "x-kubernetes-validations": [{"rule": "self.name != 'x'"}],
        "properties": {"name": {"type": "string", "maxLength": 3}}}}});
    let strategy = strategy(&schema, None);
    let blocked = |spec: Value| {
        let obj = json!({"metadata": {"name": "w"}, "spec": spec});
        texts(&strategy.validate_create(&obj))
            .last()
            .is_some_and(|e| e.contains("some validation rules were not checked"))
    };
    assert!(blocked(json!({})));
    assert!(blocked(json!({"name": "long"})));
    assert!(!blocked(json!({"name": "x"})));
}

// A status write checks the scale's status paths (replicas, label selector), not its spec
// replicas.
#[test]
fn a_status_write_checks_the_scales_status_paths() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    let scale = ScalePaths::new(
        ".spec.replicas",
        ".status.replicas",
        Some(".status.selector"),
    );
    let strategy = strategy(&schema, Some(scale));
    let old = json!({"metadata": {"name": "w"}, "spec": {"replicas": -1}, "status": {}});
    let mut new = old.clone();
    new["status"] = json!({"replicas": 2, "selector": "a=b"});
    assert!(strategy.validate_status_update(&new, &old).is_empty());
    new["status"] = json!({"replicas": -2, "selector": 5});
    assert_eq!(
        texts(&strategy.validate_status_update(&new, &old)),
        [
            ".status.replicas: Invalid value: -2: should be a non-negative integer",
            ".status.selector: Invalid value: \"\": .status.selector accessor error: 5 is of the type int64, expected string",
        ]
    );
}

// apiextensions' `generateWarningsFromObj`: each newly added finalizer once, in name order,
// warned about when it has no domain (or no path), or is not a qualified name; the
// standard finalizers and names with a domain and path are not.
#[test]
fn new_finalizers_without_a_domain_are_warned_about() {
    let strategy = strategy(&widget_schema(), None);
    let mut obj = widget(1, json!({}));
    obj["metadata"]["finalizers"] = json!([
        "example.com/hold",
        "hold",
        "example.com",
        "orphan",
        "kubernetes",
        "hold"
    ]);
    assert_eq!(
        strategy.warnings_on_create(&obj),
        [
            "metadata.finalizers: \"example.com\": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers",
            "metadata.finalizers: \"hold\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers",
        ]
    );
    let mut new = obj.clone();
    new["metadata"]["finalizers"] = json!(["hold", "bad name", "example.com/x"]);
    let warnings = strategy.warnings_on_update(&new, &obj);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .all(|w| w.starts_with("metadata.finalizers: \"bad name\": ")),
        "{warnings:?}"
    );
}

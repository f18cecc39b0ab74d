//! Tests of `ValidationRules`: Kubernetes' type mapping, correlation, messages, reasons,
//! field paths, error texts, cost budgets and ratcheting.

use serde_json::Value;
use serde_json::json;

use super::ValidationRules;

/// A custom resource schema whose `spec` has `spec` as its properties and `rules` as its
/// `x-kubernetes-validations`.
fn schema(spec: Value, rules: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": spec, "x-kubernetes-validations": rules}
        }
    })
}

fn object(spec: Value) -> Value {
    json!({"apiVersion": "x.io/v1", "kind": "W", "metadata": {"name": "w1", "labels": {"a": "b"}}, "spec": spec})
}

fn errors(rules: &ValidationRules, obj: &Value, old: Option<&Value>) -> Vec<String> {
    rules
        .validate(obj, old)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn compile(schema: &Value) -> ValidationRules {
    ValidationRules::compile(schema).expect("compiles")
}

#[test]
fn rules_are_send_and_sync_and_empty_without_rules() {
    fn shared<T: Send + Sync>() {}
    shared::<ValidationRules>();
    let none = compile(&schema(json!({"n": {"type": "integer"}}), json!([])));
    assert!(none.is_empty());
    assert!(none.validate(&object(json!({"n": 1})), None).is_empty());
}

#[test]
fn a_false_rule_reports_its_message_or_the_rule_at_the_node() {
    // R-VER-003, R-VER-005, R-VER-016
    let rules = compile(&schema(
        json!({"min": {"type": "integer"}, "max": {"type": "integer"}}),
        json!([
            {"rule": "self.min <= self.max", "message": "min must not exceed max"},
            {"rule": "self.max < 100"}
        ]),
    ));
    assert!(!rules.is_empty());
    assert!(errors(&rules, &object(json!({"min": 1, "max": 5})), None).is_empty());
    assert_eq!(
        errors(&rules, &object(json!({"min": 700, "max": 500})), None),
        vec![
            "spec: Invalid value: \"object\": min must not exceed max",
            "spec: Invalid value: \"object\": failed rule: self.max < 100",
        ]
    );
}

#[test]
fn scalar_rules_report_the_value_and_run_for_every_item_and_entry() {
    // R-VER-006, R-VER-010, R-VER-018
    let rules = compile(&schema(
        json!({
            "names": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('a')"}]}},
            "sizes": {"type": "object", "additionalProperties": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0", "message": "positive"}]}}
        }),
        json!([]),
    ));
    let errs = errors(
        &rules,
        &object(json!({"names": ["ab", "bc"], "sizes": {"x": 1, "y": -2}})),
        None,
    );
    assert_eq!(
        errs,
        vec![
            "spec.names[1]: Invalid value: \"bc\": failed rule: self.startsWith('a')",
            "spec.sizes[y]: Invalid value: -2: positive",
        ]
    );
}

#[test]
fn property_names_are_escaped_and_metadata_is_name_and_generate_name() {
    // R-VER-007, R-VER-023, R-VER-024
    let rules = compile(&json!({
        "type": "object",
        "properties": {
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": {
                "x-y": {"type": "integer"}, "namespace": {"type": "string"}, "a.b": {"type": "integer"}
            }}
        },
        "x-kubernetes-validations": [
            {"rule": "self.spec.x__dash__y == self.spec.a__dot__b", "message": "escaped"},
            {"rule": "self.spec.__namespace__ == 'ns'", "message": "keyword"},
            {"rule": "self.metadata.name == 'w1'", "message": "name"},
            {"rule": "!has(self.metadata.labels)", "message": "labels are not visible"},
            {"rule": "self.kind == 'W'", "message": "kind is implied"}
        ]
    }));
    let obj = object(json!({"x-y": 1, "a.b": 1, "namespace": "ns"}));
    assert!(
        errors(&rules, &obj, None).is_empty(),
        "{:?}",
        errors(&rules, &obj, None)
    );
    let obj = object(json!({"x-y": 1, "a.b": 2, "namespace": "other"}));
    assert_eq!(
        errors(&rules, &obj, None),
        vec![
            "<nil>: Invalid value: \"object\": escaped",
            "<nil>: Invalid value: \"object\": keyword",
        ]
    );
}

#[test]
fn formats_and_numbers_map_to_their_cel_types() {
    // R-VER-009, R-VER-015, R-VER-019, R-VER-020, R-VER-021
    let rules = compile(&schema(
        json!({
            "timeout": {"type": "string", "format": "duration"},
            "start": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "data": {"type": "string", "format": "byte"},
            "ratio": {"type": "number"},
            "port": {"x-kubernetes-int-or-string": true}
        }),
        json!([
            {"rule": "self.timeout < duration('1h')", "message": "duration"},
            {"rule": "self.start > timestamp('2020-01-01T00:00:00Z')", "message": "timestamp"},
            {"rule": "self.day.getFullYear() == 2024", "message": "date"},
            {"rule": "self.data == b'hello'", "message": "bytes"},
            {"rule": "type(self.ratio) == double", "message": "double"},
            {"rule": "type(self.port) == string ? self.port.endsWith('%') : self.port > 0", "message": "int-or-string"}
        ]),
    ));
    let good = object(json!({
        "timeout": "30m", "start": "2024-05-01T10:00:00Z", "day": "2024-02-03",
        "data": "aGVsbG8=", "ratio": 2, "port": "50%"
    }));
    assert!(
        errors(&rules, &good, None).is_empty(),
        "{:?}",
        errors(&rules, &good, None)
    );
    let bad = object(json!({
        "timeout": "2h", "start": "2019-05-01T10:00:00Z", "day": "2023-02-03",
        "data": "eA==", "ratio": 2.5, "port": 0
    }));
    assert_eq!(errors(&rules, &bad, None).len(), 5);
}

#[test]
fn transition_rules_run_only_when_an_old_value_correlates() {
    // R-VER-003
    let rules = compile(&schema(
        json!({"mode": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self == oldSelf", "message": "mode is immutable"}
        ]}}),
        json!([{"rule": "!has(oldSelf.mode) || has(self.mode)", "message": "mode cannot be unset"}]),
    ));
    let old = object(json!({"mode": "a"}));
    assert!(errors(&rules, &object(json!({"mode": "b"})), None).is_empty());
    assert_eq!(
        errors(&rules, &object(json!({"mode": "b"})), Some(&old)),
        vec!["spec.mode: Invalid value: \"b\": mode is immutable"]
    );
    assert_eq!(
        errors(&rules, &object(json!({})), Some(&old)),
        vec!["spec: Invalid value: \"object\": mode cannot be unset"]
    );
}

#[test]
fn optional_old_self_runs_on_create_with_an_empty_optional() {
    let rules = compile(&schema(
        json!({"n": {"type": "integer"}}),
        json!([{
            "rule": "oldSelf.hasValue() ? self.n >= oldSelf.value().n : self.n == 0",
            "message": "starts at zero and grows", "optionalOldSelf": true
        }]),
    ));
    assert!(errors(&rules, &object(json!({"n": 0})), None).is_empty());
    assert_eq!(errors(&rules, &object(json!({"n": 3})), None).len(), 1);
    let old = object(json!({"n": 3}));
    assert!(errors(&rules, &object(json!({"n": 4})), Some(&old)).is_empty());
    assert_eq!(
        errors(&rules, &object(json!({"n": 2})), Some(&old)).len(),
        1
    );
}

#[test]
fn map_list_items_correlate_by_their_keys() {
    let rules = compile(&schema(
        json!({"ports": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port", "message": "port is immutable"}]}
        }}),
        json!([]),
    ));
    let old = object(json!({"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]}));
    let reordered = object(
        json!({"ports": [{"name": "b", "port": 2}, {"name": "a", "port": 1}, {"name": "c", "port": 9}]}),
    );
    assert!(errors(&rules, &reordered, Some(&old)).is_empty());
    let changed = object(json!({"ports": [{"name": "b", "port": 5}]}));
    assert_eq!(
        errors(&rules, &changed, Some(&old)),
        vec!["spec.ports[0]: Invalid value: \"object\": port is immutable"]
    );
}

#[test]
fn message_expression_reason_and_field_path_shape_the_error() {
    let rules = compile(&schema(
        json!({"replicas": {"type": "integer"}, "labels": {"type": "object", "additionalProperties": {"type": "string"}}}),
        json!([
            {"rule": "self.replicas < 10", "messageExpression": "'replicas is ' + string(self.replicas)", "fieldPath": ".replicas"},
            {"rule": "self.replicas != 7", "message": "seven", "messageExpression": "self.missing", "reason": "FieldValueForbidden"},
            {"rule": "has(self.labels)", "message": "labels", "reason": "FieldValueRequired", "fieldPath": ".labels"},
            {"rule": "self.replicas != 7", "reason": "FieldValueDuplicate", "fieldPath": ".labels['a.b']"},
            {"rule": "self.replicas != 7", "message": "blank", "messageExpression": "' '"}
        ]),
    ));
    assert_eq!(
        errors(&rules, &object(json!({"replicas": 12, "labels": {}})), None),
        vec!["spec.replicas: Invalid value: \"object\": replicas is 12"]
    );
    assert_eq!(
        errors(&rules, &object(json!({"replicas": 7})), None),
        vec![
            "spec: Forbidden: seven",
            "spec.labels: Required value: labels",
            "spec.labels[a.b]: Duplicate value: \"object\"",
            "spec: Invalid value: \"object\": blank",
        ]
    );
}

#[test]
fn evaluation_errors_are_worded_as_kubernetes_words_them() {
    let rules = compile(&schema(
        json!({"a": {"type": "integer"}, "b": {"x-kubernetes-int-or-string": true}}),
        json!([
            {"rule": "self.a > 0"},
            {"rule": "self.b + 1 > 0", "message": "b must be positive"}
        ]),
    ));
    assert_eq!(
        errors(&rules, &object(json!({"b": "x"})), None),
        vec![
            "spec: Invalid value: \"object\": no such key: a evaluating rule: self.a > 0",
            "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: b must be positive",
        ]
    );
}

#[test]
fn the_per_call_limit_halts_a_rule_and_every_rule_after_it() {
    // R-VER-056
    let rules = compile(&schema(
        json!({"l": {"type": "array", "items": {"type": "integer"}}}),
        json!([
            {"rule": "self.l.all(a, self.l.all(b, a + b >= 0))"},
            {"rule": "false", "message": "never reached"}
        ]),
    ));
    let big: Vec<i64> = (0..2000).collect();
    assert_eq!(
        errors(&rules, &object(json!({"l": big})), None),
        vec![
            "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.l.all(a, self.l.all(b, a + b >= 0))"
        ]
    );
    let small: Vec<i64> = (0..20).collect();
    assert_eq!(
        errors(&rules, &object(json!({"l": small})), None),
        vec!["spec: Invalid value: \"object\": never reached"]
    );
}

#[test]
fn all_rules_of_an_object_share_one_budget() {
    // R-VER-057
    let rules = compile(&schema(
        json!({"items": {"type": "array", "items": {"type": "string",
            "x-kubernetes-validations": [{"rule": "self.size() < 100"}]}}}),
        json!([]),
    ));
    let obj = object(json!({"items": ["a", "b", "c", "d", "e"]}));
    assert!(rules.validate_with_budget(&obj, None, 1_000).is_empty());
    let errs: Vec<String> = rules
        .validate_with_budget(&obj, None, 8)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs.last().map(String::as_str),
        Some(
            "spec.items[2]: Invalid value: \"string\": validation failed due to running out of cost budget, no further validation rules will be run"
        )
    );
}

#[test]
fn unchanged_values_do_not_fail_an_update_by_rules_without_old_self() {
    let rules = compile(&schema(
        json!({"a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 5", "message": "small"}]},
               "b": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 5", "message": "small"}]}}),
        json!([]),
    ));
    let old = object(json!({"a": 9, "b": 1}));
    assert_eq!(
        errors(&rules, &object(json!({"a": 9, "b": 8})), Some(&old)),
        vec!["spec.b: Invalid value: 8: small"]
    );
}

#[test]
fn rules_that_do_not_compile_report_it_per_object() {
    let rules = compile(&schema(json!({}), json!([{"rule": "self.a +"}])));
    let errs = errors(&rules, &object(json!({})), None);
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].contains("rule compile error: compilation failed"),
        "{errs:?}"
    );
}

#[test]
fn embedded_resources_expose_their_type_and_object_meta() {
    // R-VER-007
    let rules = compile(&schema(
        json!({"template": {
            "type": "object",
            "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true,
            "x-kubernetes-validations": [
                {"rule": "self.kind == 'Pod' && self.metadata.name.startsWith('p')", "message": "a pod named p..."},
                {"rule": "!has(self.spec)", "message": "unknown fields are not readable"}
            ]
        }}),
        json!([]),
    ));
    let pod = object(
        json!({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"}, "spec": {}}}),
    );
    assert!(
        errors(&rules, &pod, None).is_empty(),
        "{:?}",
        errors(&rules, &pod, None)
    );
    let job = object(
        json!({"template": {"apiVersion": "v1", "kind": "Job", "metadata": {"name": "p1"}}}),
    );
    assert_eq!(
        errors(&rules, &job, None),
        vec!["spec.template: Invalid value: \"object\": a pod named p..."]
    );
}

#[test]
fn set_and_map_lists_compare_by_their_list_type() {
    // R-VER-011
    let spec = json!({
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {
                "name": {"type": "string"},
                "port": {"type": "integer"},
                "hosts": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
            }}
        },
        "order": {"type": "array", "items": {"type": "string"}}
    });
    let rules = compile(&schema(
        spec,
        json!([
            {"rule": "self.tags == oldSelf.tags", "message": "tags changed"},
            {"rule": "self.ports == oldSelf.ports", "message": "ports changed"},
            {"rule": "!(self != oldSelf)", "message": "spec changed"},
            {"rule": "self.order == oldSelf.order", "message": "order changed"},
            {"rule": "self.tags[0] == oldSelf.tags[0]", "message": "first tag changed"}
        ]),
    ));
    let old = object(json!({
        "tags": ["a", "b", "c"],
        "ports": [
            {"name": "http", "port": 80, "hosts": ["x", "y"]},
            {"name": "https", "port": 443}
        ],
        "order": ["a", "b"]
    }));
    let reordered = object(json!({
        "tags": ["c", "a", "b"],
        "ports": [
            {"name": "https", "port": 443},
            {"name": "http", "port": 80, "hosts": ["y", "x"]}
        ],
        "order": ["b", "a"]
    }));
    assert_eq!(
        errors(&rules, &reordered, Some(&old)),
        vec![
            "spec: Invalid value: \"object\": spec changed",
            "spec: Invalid value: \"object\": order changed",
            "spec: Invalid value: \"object\": first tag changed"
        ]
    );
    let mut sets_reordered = reordered.clone();
    sets_reordered["spec"]["order"] = json!(["a", "b"]);
    assert_eq!(
        errors(&rules, &sets_reordered, Some(&old)),
        vec!["spec: Invalid value: \"object\": first tag changed"]
    );
    let changed = object(json!({
        "tags": ["a", "b", "d"],
        "ports": [
            {"name": "http", "port": 81, "hosts": ["x", "y"]},
            {"name": "https", "port": 443}
        ],
        "order": ["a", "b"]
    }));
    assert_eq!(
        errors(&rules, &changed, Some(&old)),
        vec![
            "spec: Invalid value: \"object\": tags changed",
            "spec: Invalid value: \"object\": ports changed",
            "spec: Invalid value: \"object\": spec changed"
        ]
    );
}

#[test]
fn concatenating_sets_and_map_lists_follows_their_list_type() {
    // R-VER-012, R-VER-013
    let spec = json!({
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "port": {"type": "integer"}}}
        },
        "order": {"type": "array", "items": {"type": "string"}}
    });
    let rules = compile(&schema(
        spec,
        json!([
            {"rule": "self.tags + ['b', 'c', 'c'] == ['a', 'b', 'c']", "message": "not a union"},
            {"rule": "size(self.tags + ['b']) == 2", "message": "union grew"},
            {"rule": "(self.ports + [{'name': 'http', 'port': 8080}, {'name': 'dns', 'port': 53}]).map(p, p.port) == [8080, 443, 53]",
             "message": "not merged"},
            {"rule": "size(self.order + ['a']) == 3", "message": "a plain list concatenates"}
        ]),
    ));
    let obj = object(json!({
        "tags": ["a", "b"],
        "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
        "order": ["a", "b"]
    }));
    assert_eq!(errors(&rules, &obj, None), Vec::<String>::new());
}

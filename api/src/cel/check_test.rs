//! The type checker against small hand-written schemas: what it reports, where, and what it
//! lets pass.

use serde_json::Value;
use serde_json::json;

use super::Program;
use super::check::Components;
use super::check::Type;
use super::check::check;

fn components() -> Components {
    let schemas = json!({
        "Spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "ratio": {"type": "number"},
                "port": {"x-kubernetes-int-or-string": true},
                "x-y": {"type": "string"},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "containers": {"type": "array", "items": {"$ref": "#/components/schemas/Container"}},
                "since": {"type": "string", "format": "date-time"}
            }
        },
        "Container": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "image": {"type": "string"}}
        },
        "Thing": {
            "type": "object",
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "spec": {"allOf": [{"$ref": "#/components/schemas/Spec"}], "default": {}}
            }
        }
    });
    match schemas {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

/// The issues of `source` with `object` typed as a Thing.
fn issues(source: &str) -> Vec<String> {
    let components = components();
    let object = Type::of_schema(&components, &components["Thing"]);
    let program = Program::compile(source, &["object"]).expect("compiles");
    check(&program, &[("object", object)]).1
}

#[test]
fn an_undefined_field_is_reported_at_its_selection() {
    assert_eq!(
        issues("object.spec.replicaz > 1"),
        [
            "ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz > 1\n | ...........^"
        ]
    );
    assert_eq!(
        issues("has(object.spec.replicaz)"),
        [
            "ERROR: <input>:1:16: undefined field 'replicaz'\n | has(object.spec.replicaz)\n | ...............^"
        ]
    );
}

#[test]
fn an_operator_without_an_overload_for_its_operands_is_reported() {
    assert_eq!(
        issues("object.spec.replicas > 'a'"),
        [
            "ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > 'a'\n | .....................^"
        ]
    );
    assert_eq!(
        issues("object.spec.replicas + 1u == 2"),
        [
            "ERROR: <input>:1:22: found no matching overload for '_+_' applied to '(int, uint)'\n | object.spec.replicas + 1u == 2\n | .....................^"
        ]
    );
    assert_eq!(
        issues("object.spec.since + 1 > object.spec.since"),
        [
            "ERROR: <input>:1:19: found no matching overload for '_+_' applied to '(google.protobuf.Timestamp, int)'\n | object.spec.since + 1 > object.spec.since\n | ..................^"
        ]
    );
}

#[test]
fn a_field_of_a_scalar_or_a_list_is_reported() {
    assert_eq!(
        issues("object.spec.replicas.value == 1"),
        [
            "ERROR: <input>:1:21: type 'int' does not support field selection\n | object.spec.replicas.value == 1\n | ....................^"
        ]
    );
    let listed = issues("object.spec.containers.name == 'a'");
    assert!(
        listed[0].contains("type 'list(object)' does not support field selection"),
        "{listed:?}"
    );
}

#[test]
fn comprehensions_bind_their_elements_types() {
    assert_eq!(
        issues("object.spec.containers.all(c, c.name.startsWith('a'))"),
        Vec::<String>::new()
    );
    let found = issues("object.spec.containers.exists(c, c.nam == 'a')");
    assert!(found[0].contains("undefined field 'nam'"), "{found:?}");
    let found = issues("object.spec.labels.all(k, k > 1)");
    assert!(
        found[0].contains("'_>_' applied to '(string, int)'"),
        "{found:?}"
    );
}

#[test]
fn what_might_work_passes() {
    for fine in [
        "object.spec.replicas > 1.5",
        "object.spec.replicas == 2.0 || object.spec.ratio < 3",
        "object.spec.port == 'http' || object.spec.port == 80",
        "object.spec.extra.anything.deeper > 'a'",
        "object.spec.labels.app == 'web' && object.spec.labels['tier'] != ''",
        "object.spec.x__dash__y.startsWith('a')",
        "object.spec.since > timestamp('2020-01-01T00:00:00Z')",
        "object.spec.replicas == null",
        "object.kind + '/' + object.apiVersion != ''",
        "size(object.spec.containers) + 1 > 0",
        "object.spec.containers.map(c, c.image).all(i, i != '')",
        "object.?spec.?replicaz.orValue(1) > 0",
    ] {
        assert_eq!(issues(fine), Vec::<String>::new(), "{fine}");
    }
}

#[test]
fn an_issue_whose_place_the_source_does_not_show_once_has_no_caret() {
    assert_eq!(
        issues("object.spec.nope == 1 || object.spec.nope == 2"),
        [
            "ERROR: <input>: undefined field 'nope'",
            "ERROR: <input>: undefined field 'nope'"
        ]
    );
}

#[test]
fn string_literals_and_numbers_do_not_count_as_tokens() {
    assert_eq!(
        issues("object.spec.replicaz > 1.5 || 'object.spec.replicaz' == '.replicaz'"),
        [
            "ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz > 1.5 || 'object.spec.replicaz' == '.replicaz'\n | ...........^"
        ]
    );
}

#[test]
fn a_self_referring_list_schema_is_typed_to_a_bounded_depth() {
    let components: Components = match json!({
        "Nested": {"type": "array", "items": {"$ref": "#/components/schemas/Nested"}}
    }) {
        Value::Object(map) => map,
        _ => unreachable!(),
    };
    let nested = Type::of_schema(&components, &components["Nested"]);
    let mut depth = 0;
    let mut at = &nested;
    while let Type::List(items) = at {
        depth += 1;
        at = items;
    }
    assert_eq!(depth, 16, "{nested}");
}

#[test]
fn string_methods_size_and_comprehensions_on_the_wrong_type_are_reported() {
    assert_eq!(
        issues("object.spec.replicas.startsWith('1')"),
        [
            "ERROR: <input>:1:22: found no matching overload for 'startsWith' applied to 'int.(string)'\n | object.spec.replicas.startsWith('1')\n | .....................^"
        ]
    );
    let sized = issues("size(object.spec.replicas) > 0");
    assert!(
        sized[0].contains("found no matching overload for 'size' applied to '(int)'"),
        "{sized:?}"
    );
    assert_eq!(
        issues("object.spec.replicas.all(r, r > 0)"),
        [
            "ERROR: <input>: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)"
        ]
    );
    for fine in [
        "object.spec.labels.app.startsWith('a') && size(object.spec.labels) > 0",
        "object.spec.extra.name.startsWith('a') && object.spec.containers.size() > 0",
        "object.spec.labels.exists(k, k.contains('x'))",
    ] {
        assert_eq!(issues(fine), Vec::<String>::new(), "{fine}");
    }
}

//! Unit tests of custom resources' structural schemas: decoding and pruning, defaulting,
//! value validation with Kubernetes' messages, list types, embedded resources, ratcheting
//! and the budgets. Cases follow apiextensions' and kube-openapi's own tests, rewritten.

use serde_json::Value;
use serde_json::json;

use super::*;
use crate::schema::Decoded;
use crate::schema::Finding;
use crate::schema::Format;
use crate::schema::decode;
use crate::schema::decode_partial;

fn compile(schema: Value) -> StructuralSchema {
    StructuralSchema::compile(&schema).expect("compiles")
}

fn decoded(s: &StructuralSchema, body: &str, format: Format) -> Decoded {
    decode(&s.decode_schema(), body.as_bytes(), format).expect("parses")
}

fn unknown(paths: &[&str]) -> Vec<Finding> {
    paths
        .iter()
        .map(|p| Finding::Unknown((*p).to_owned()))
        .collect()
}

/// The errors as Kubernetes prints them (`field: body`).
fn messages(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

/// A schema whose `spec` has the properties `spec`.
fn with_spec(spec: Value) -> StructuralSchema {
    compile(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": spec}}
    }))
}

fn widget() -> StructuralSchema {
    compile(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "items": {"type": "array", "items": {
                        "type": "object", "properties": {"name": {"type": "string"}}
                    }},
                    "labels": {"type": "object", "additionalProperties": {
                        "type": "object", "properties": {"value": {"type": "string"}}
                    }},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        "properties": {"inner": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                    "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                        "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}},
                    "port": {"x-kubernetes-int-or-string": true},
                    "note": {"type": "string", "nullable": true},
                    "count": {"type": "integer"}
                }
            },
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
        }
    }))
}

// R-RES-188: unknown fields of a custom resource are dropped and reported with Kubernetes'
// paths, in objects, list items and map values, sorted as Kubernetes sorts pruned fields;
// root apiVersion, kind and metadata are kept.
#[test]
fn decode_drops_and_reports_unknown_fields() {
    let body = r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},
        "spec":{"foo":1,"replicas":2,"items":[{"name":"a","bar":true}],
        "labels":{"k":{"value":"v","baz":null}}},"extra":{"deep":1}}"#;
    let d = decoded(&widget(), body, Format::Json);
    assert_eq!(
        d.findings,
        unknown(&[
            "extra",
            "spec.foo",
            "spec.items[0].bar",
            "spec.labels.k.baz"
        ])
    );
    assert_eq!(d.type_error, None);
    assert_eq!(
        d.value,
        json!({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},
            "spec":{"replicas":2,"items":[{"name":"a"}],"labels":{"k":{"value":"v"}}}})
    );
}

// R-RES-189: a repeated field is reported once as a duplicate and keeps its last value;
// duplicates come before unknown fields, as Kubernetes' decoder finds them first.
#[test]
fn decode_reports_duplicates() {
    let body = r#"{"spec":{"replicas":1,"replicas":2,"foo":1,"foo":2}}"#;
    let d = decoded(&widget(), body, Format::Json);
    assert_eq!(
        d.findings,
        vec![
            Finding::Duplicate("spec.replicas".into()),
            Finding::Duplicate("spec.foo".into()),
            Finding::Unknown("spec.foo".into()),
        ]
    );
    assert_eq!(d.value, json!({"spec": {"replicas": 2}}));
}

// R-RES-188, R-RES-189: a YAML body is decoded alike; its repeated keys are reported by line.
#[test]
fn decode_yaml() {
    let body = "spec:\n  replicas: 1\n  zeta: 1\n  replicas: 2\n  alpha: [1]\n";
    let d = decoded(&widget(), body, Format::Yaml);
    assert_eq!(
        d.findings,
        vec![
            Finding::YamlDuplicate {
                line: 4,
                key: "replicas".into()
            },
            Finding::Unknown("spec.alpha".into()),
            Finding::Unknown("spec.zeta".into()),
        ]
    );
    assert_eq!(d.value, json!({"spec": {"replicas": 2}}));
}

// Values, nulls and field order are kept as sent; types are not checked and required fields
// are not filled at decode (validation answers those).
#[test]
fn decode_keeps_values_as_sent() {
    let s = compile(json!({
        "type": "object", "required": ["spec"],
        "properties": {"spec": {"type": "object", "required": ["b"], "properties": {
            "b": {"type": "integer"}, "a": {"type": "string"}, "c": {"type": "object"}
        }}}
    }));
    let body = r#"{"spec":{"c":null,"a":5,"b":"seven"}}"#;
    let d = decoded(&s, body, Format::Json);
    assert!(d.findings.is_empty());
    assert_eq!(d.type_error, None);
    assert_eq!(
        serde_json::to_string(&d.value).expect("json"),
        r#"{"spec":{"c":null,"a":5,"b":"seven"}}"#
    );
    let d = decoded(&s, "{}", Format::Json);
    assert_eq!(d.value, json!({}));
    let d = decode_partial(&s.decode_schema(), b"spec:\n  a: x\n", Format::Yaml).expect("parses");
    assert_eq!(d.value, json!({"spec": {"a": "x"}}));
}

// A value of another kind than the schema's is kept; its object fields have no schema and
// are dropped, as Kubernetes' pruning does.
#[test]
fn decode_prunes_objects_where_scalars_belong() {
    let d = decoded(
        &widget(),
        r#"{"spec":{"replicas":{"x":1},"count":[1,{"y":2}]}}"#,
        Format::Json,
    );
    assert_eq!(d.findings, unknown(&["spec.count[1].y", "spec.replicas.x"]));
    assert_eq!(d.value, json!({"spec": {"replicas": {}, "count": [1, {}]}}));
}

// R-RES-188: x-kubernetes-preserve-unknown-fields keeps unknown fields, but the properties it
// specifies are still pruned inside.
#[test]
fn preserve_unknown_fields_keeps_unknown_but_prunes_specified() {
    let body = r#"{"spec":{"free":{"any":{"thing":[1,{"x":null}]},"inner":{"a":"1","b":2}}}}"#;
    let d = decoded(&widget(), body, Format::Json);
    assert_eq!(d.findings, unknown(&["spec.free.inner.b"]));
    assert_eq!(
        d.value,
        json!({"spec":{"free":{"any":{"thing":[1,{"x":null}]},"inner":{"a":"1"}}}})
    );
    let mut obj: Value = serde_json::from_str(body).expect("json");
    assert_eq!(widget().prune(&mut obj), vec!["spec.free.inner.b"]);
    assert_eq!(obj, d.value);
}

// R-RES-188: a list that preserves unknown fields keeps them in its items too, pruning only
// what the items specify.
#[test]
fn preserve_unknown_fields_reaches_list_items() {
    let s = with_spec(
        json!({"list": {"type": "array", "x-kubernetes-preserve-unknown-fields": true,
        "items": {"type": "object", "properties": {"o": {"type": "object", "properties": {}}}}}}),
    );
    let body = r#"{"spec":{"list":[{"kept":1,"o":{"gone":2}}]}}"#;
    let d = decoded(&s, body, Format::Json);
    assert_eq!(d.findings, unknown(&["spec.list[0].o.gone"]));
    let expected = json!({"spec":{"list":[{"kept":1,"o":{}}]}});
    assert_eq!(d.value, expected);
    let mut obj: Value = serde_json::from_str(body).expect("json");
    assert_eq!(s.prune(&mut obj), vec!["spec.list[0].o.gone"]);
    assert_eq!(obj, expected);
}

// R-RES-188: `additionalProperties: true` beside properties keeps other keys, without a
// schema below them.
#[test]
fn additional_properties_true_keeps_keys_without_schema() {
    let s = with_spec(json!({"m": {"type": "object", "additionalProperties": true,
        "properties": {"a": {"type": "string"}}}}));
    let mut obj = json!({"spec": {"m": {"a": "x", "b": 1, "c": {"d": 2}}}});
    assert_eq!(s.prune(&mut obj), vec!["spec.m.c.d"]);
    assert_eq!(obj, json!({"spec": {"m": {"a": "x", "b": 1, "c": {}}}}));
    let d = decoded(
        &s,
        r#"{"spec":{"m":{"a":"x","b":1,"c":{"d":2}}}}"#,
        Format::Json,
    );
    assert_eq!(d.findings, unknown(&["spec.m.c.d"]));
}

// R-RES-188: x-kubernetes-embedded-resource keeps apiVersion, kind and metadata; metadata is coerced
// to ObjectMeta (its unknown fields dropped and reported), the rest is pruned.
#[test]
fn embedded_resources_keep_type_and_metadata() {
    let body = r#"{"metadata":{"name":"w","bogus":1},"spec":{"template":{"apiVersion":"v1",
        "kind":"Pod","metadata":{"labels":{"a":"b"},"what":true},"spec":{"x":"y","z":1},"other":2}}}"#;
    let d = decoded(&widget(), body, Format::Json);
    assert_eq!(
        d.findings,
        unknown(&[
            "metadata.bogus",
            "spec.template.other",
            "spec.template.spec.z",
            "spec.template.metadata.what"
        ])
    );
    let expected = json!({"metadata":{"name":"w"},"spec":{"template":{"apiVersion":"v1",
        "kind":"Pod","metadata":{"labels":{"a":"b"}},"spec":{"x":"y"}}}});
    assert_eq!(d.value, expected);
    let mut obj: Value = serde_json::from_str(body).expect("json");
    assert_eq!(
        widget().prune(&mut obj),
        vec![
            "metadata.bogus",
            "spec.template.other",
            "spec.template.spec.z",
            "spec.template.metadata.what"
        ]
    );
    assert_eq!(obj, expected);
}

// A metadata field of the wrong type fails decoding as ObjectMeta's own decoder says.
#[test]
fn root_metadata_is_typed() {
    let d = decoded(&widget(), r#"{"metadata":{"labels":5}}"#, Format::Json);
    assert_eq!(
        d.type_error.map(|e| e.0),
        Some(
            "json: cannot unmarshal number into Go struct field ObjectMeta.labels of type map[string]string"
                .to_owned()
        )
    );
}

// R-RES-188: pruning a stored or patched object: unknown fields at every level, sorted as Kubernetes
// sorts them, nothing else touched.
#[test]
fn prune_whole_objects() {
    let s = widget();
    let mut obj = json!({"apiVersion":"example.com/v1","kind":"Widget",
        "spec":{"zeta":1,"items":[{"name":"a","q":1},{"r":2}],"alpha":{"b":1},"note":null},
        "status":{"ready":true,"phase":"x"}});
    assert_eq!(
        s.prune(&mut obj),
        vec![
            "spec.alpha",
            "spec.items[0].q",
            "spec.items[1].r",
            "spec.zeta",
            "status.phase"
        ]
    );
    assert_eq!(
        obj,
        json!({"apiVersion":"example.com/v1","kind":"Widget",
            "spec":{"items":[{"name":"a"},{}],"note":null},"status":{"ready":true}})
    );
}

// Defaults fill unset properties, in nested objects, list items and map values; a null of
// a non-nullable field takes the default or is dropped; a nullable null stays.
#[test]
fn defaults_fill_and_nulls_drop() {
    let s = compile(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "default": {}, "properties": {
            "replicas": {"type": "integer", "default": 1},
            "mode": {"type": "string", "default": "auto"},
            "keep": {"type": "string", "nullable": true, "default": "k"},
            "gone": {"type": "string"},
            "items": {"type": "array", "items": {"type": "object", "default": {"w": 1},
                "properties": {"w": {"type": "integer", "default": 5}, "n": {"type": "string"}}}},
            "byName": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"on": {"type": "boolean", "default": true}}}},
            "nested": {"type": "object", "properties": {"deep": {"type": "object",
                "default": {"x": "y", "dropped": 1}, "properties": {"x": {"type": "string"}}}}}
        }}}
    }));
    let mut obj = json!({"spec": {"mode": null, "keep": null, "gone": null,
        "items": [{"n": "a"}, null], "byName": {"a": {}, "b": {"on": false}}, "nested": {}}});
    s.apply_defaults(&mut obj);
    assert_eq!(
        obj,
        json!({"spec": {"mode": "auto", "keep": null,
            "items": [{"n": "a", "w": 5}, {"w": 1}], "byName": {"a": {"on": true}, "b": {"on": false}},
            "nested": {"deep": {"x": "y"}}, "replicas": 1}})
    );
    let mut empty = json!({});
    s.apply_defaults(&mut empty);
    assert_eq!(
        empty,
        json!({"spec": {"mode": "auto", "keep": "k", "replicas": 1}})
    );
}

fn errors_of(spec: Value, value: Value) -> Vec<String> {
    let s = with_spec(json!({"f": spec}));
    messages(&s.validate(&json!({"spec": {"f": value}}), None))
}

// Type errors as kube-openapi words them and apiextensions reports them (FieldValueTypeInvalid).
#[test]
fn types() {
    let s = with_spec(json!({"replicas": {"type": "integer"}}));
    let errs = s.validate(&json!({"spec": {"replicas": "string"}}), None);
    assert_eq!(
        messages(&errs),
        vec![
            r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
        ]
    );
    assert_eq!(errs[0].reason(), "FieldValueTypeInvalid");
    assert_eq!(
        errors_of(json!({"type": "object"}), json!([1])),
        vec![r#"spec.f: Invalid value: "array": spec.f in body must be of type object: "array""#]
    );
    assert_eq!(
        errors_of(json!({"type": "string"}), json!(null)),
        vec![r#"spec.f: Invalid value: "null": spec.f in body must be of type string: "null""#]
    );
    assert!(errors_of(json!({"type": "string", "nullable": true}), json!(null)).is_empty());
    assert!(errors_of(json!({"type": "integer"}), json!(2.0)).is_empty());
    assert!(errors_of(json!({"type": "number"}), json!(2)).is_empty());
    assert_eq!(
        errors_of(json!({"type": "boolean"}), json!(1.5)),
        vec![
            r#"spec.f: Invalid value: "number": spec.f in body must be of type boolean: "number""#
        ]
    );
}

// x-kubernetes-int-or-string takes an integer or a string, nothing else.
#[test]
fn int_or_string() {
    let schema = json!({"x-kubernetes-int-or-string": true});
    assert!(errors_of(schema.clone(), json!(80)).is_empty());
    assert!(errors_of(schema.clone(), json!("http")).is_empty());
    assert_eq!(
        errors_of(schema, json!(true)),
        vec![
            r#"spec.f: Invalid value: "boolean": spec.f in body must be of type integer,string: "boolean""#
        ]
    );
}

// Formats of kube-openapi's registry; unknown formats are ignored, as Kubernetes strips them.
#[test]
fn formats() {
    let bad =
        |format: &str, value: Value| errors_of(json!({"type": "string", "format": format}), value);
    assert_eq!(
        bad("uuid", json!("abc")),
        vec![r#"spec.f: Invalid value: "abc": spec.f in body must be of type uuid: "abc""#]
    );
    assert_eq!(
        bad("date-time", json!("yesterday")),
        vec![
            r#"spec.f: Invalid value: "yesterday": spec.f in body must be of type date-time: "yesterday""#
        ]
    );
    for (format, good, wrong) in [
        ("uuid", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6ba7b810"),
        ("date", "2024-02-29", "2023-02-29"),
        ("date-time", "2024-01-02T03:04:05Z", "2024-01-02"),
        (
            "datetime",
            "2024-01-02T03:04:05.123+02:00",
            "2024-13-02T03:04:05Z",
        ),
        ("ipv4", "10.0.0.1", "10.0.0"),
        ("ipv6", "::1", "10.0.0.1"),
        ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
        ("mac", "00:1a:2b:3c:4d:5e", "00:1a:2b"),
        ("byte", "aGVsbG8=", "not base64!"),
        ("hostname", "example.com", "-bad-.com"),
        ("email", "a@example.com", "nobody"),
        ("uri", "https://example.com/x", "example"),
        ("duration", "1h30m", "soon"),
        ("bsonobjectid", "507f1f77bcf86cd799439011", "507f"),
        ("hexcolor", "#fff", "#ggg"),
        ("isbn10", "0321751043", "0321751044"),
        ("k8s-short-name", "my-name", "My_Name"),
        ("k8s-long-name", "a.b-c", "a..b"),
    ] {
        assert!(bad(format, json!(good)).is_empty(), "{format} {good}");
        assert_eq!(bad(format, json!(wrong)).len(), 1, "{format} {wrong}");
    }
    assert!(bad("no-such-format", json!("anything")).is_empty());
    assert!(bad("password", json!("anything")).is_empty());
    assert_eq!(
        errors_of(
            json!({"type": "integer", "format": "int32"}),
            json!(3_000_000_000_i64)
        ),
        vec![
            r#": Invalid value: "": Checked value must be of type integer with format int32 in spec.f"#
        ]
    );
    assert_eq!(
        errors_of(json!({"type": "integer", "format": "int32"}), json!(1.5)),
        vec![
            r#"spec.f: Invalid value: "float64": spec.f in body must be of type int32: "float64""#,
            r#": Invalid value: "": Checked value must be of type integer with format int32 in spec.f"#
        ]
    );
}

// enum: Unsupported value with the supported values, non-strings as JSON.
#[test]
fn enumeration() {
    assert_eq!(
        errors_of(json!({"type": "string", "enum": ["a", "b"]}), json!("c")),
        vec![r#"spec.f: Unsupported value: "c": supported values: "a", "b""#]
    );
    assert_eq!(
        errors_of(json!({"type": "integer", "enum": [1, 2.5]}), json!(3)),
        vec![r#"spec.f: Unsupported value: 3: supported values: "1", "2.5""#]
    );
    assert!(errors_of(json!({"type": "integer", "enum": [1.0, 2]}), json!(1)).is_empty());
}

// minimum, maximum (exclusive or not) and multipleOf, integers and floats.
#[test]
fn numbers() {
    let check = |schema: Value, value: Value| errors_of(schema, value);
    assert_eq!(
        check(json!({"type": "integer", "minimum": 1}), json!(0)),
        vec!["spec.f: Invalid value: 0: spec.f in body should be greater than or equal to 1"]
    );
    assert_eq!(
        check(
            json!({"type": "integer", "maximum": 10, "exclusiveMaximum": true}),
            json!(10)
        ),
        vec!["spec.f: Invalid value: 10: spec.f in body should be less than 10"]
    );
    assert_eq!(
        check(
            json!({"type": "number", "minimum": 0.5, "exclusiveMinimum": true}),
            json!(0.5)
        ),
        vec!["spec.f: Invalid value: 0.5: spec.f in body should be greater than 0.5"]
    );
    assert_eq!(
        check(json!({"type": "number", "maximum": 1500000}), json!(2e6)),
        vec![
            "spec.f: Invalid value: 2e+06: spec.f in body should be less than or equal to 1.5e+06"
        ]
    );
    assert_eq!(
        check(json!({"type": "integer", "multipleOf": 3}), json!(7)),
        vec!["spec.f: Invalid value: 7: spec.f in body should be a multiple of 3"]
    );
    assert_eq!(
        check(json!({"type": "number", "multipleOf": 0.5}), json!(1.25)),
        vec!["spec.f: Invalid value: 1.25: spec.f in body should be a multiple of 0.5"]
    );
    assert!(check(json!({"type": "number", "multipleOf": 0.5}), json!(1.5)).is_empty());
    assert!(
        check(
            json!({"type": "integer", "minimum": 1, "maximum": 3}),
            json!(2)
        )
        .is_empty()
    );
}

// minLength, maxLength (in characters, TooLong), pattern.
#[test]
fn strings() {
    assert_eq!(
        errors_of(json!({"type": "string", "maxLength": 3}), json!("abcd")),
        vec!["spec.f: Too long: may not be more than 3 bytes"]
    );
    assert!(errors_of(json!({"type": "string", "maxLength": 3}), json!("äöü")).is_empty());
    assert_eq!(
        errors_of(json!({"type": "string", "minLength": 2}), json!("a")),
        vec![r#"spec.f: Invalid value: "a": spec.f in body should be at least 2 chars long"#]
    );
    assert_eq!(
        errors_of(
            json!({"type": "string", "pattern": "^[a-z]+$"}),
            json!("A1")
        ),
        vec![r#"spec.f: Invalid value: "A1": spec.f in body should match '^[a-z]+$'"#]
    );
}

// minItems, maxItems (TooMany), uniqueItems; item errors carry their index.
#[test]
fn lists() {
    let list = |extra: Value| {
        let mut schema = json!({"type": "array", "items": {"type": "integer", "maximum": 5}});
        if let (Value::Object(s), Value::Object(e)) = (&mut schema, extra) {
            s.extend(e);
        }
        schema
    };
    assert_eq!(
        errors_of(list(json!({"minItems": 2})), json!([1])),
        vec!["spec.f: Invalid value: 1: spec.f in body should have at least 2 items"]
    );
    assert_eq!(
        errors_of(list(json!({"maxItems": 1})), json!([1, 2])),
        vec!["spec.f: Too many: 2: must have at most 1 item"]
    );
    assert_eq!(
        errors_of(list(json!({"uniqueItems": true})), json!([1, 2, 1])),
        vec![r#"spec.f: Invalid value: "": spec.f in body shouldn't contain duplicates"#]
    );
    assert_eq!(
        errors_of(list(json!({})), json!([1, 9])),
        vec!["spec.f[1]: Invalid value: 9: spec.f[1] in body should be less than or equal to 5"]
    );
}

// minProperties, maxProperties (TooMany), required (Required value), map value paths.
#[test]
fn objects() {
    let map = json!({"type": "object", "minProperties": 2, "maxProperties": 3,
        "additionalProperties": {"type": "string"}});
    assert_eq!(
        errors_of(map.clone(), json!({"a": "x"})),
        vec!["spec.f: Invalid value: 1: spec.f in body should have at least 2 properties"]
    );
    assert_eq!(
        errors_of(map.clone(), json!({"a": "1", "b": "2", "c": "3", "d": "4"})),
        vec!["spec.f: Too many: 4: must have at most 3 items"]
    );
    assert_eq!(
        errors_of(map, json!({"a": "1", "b": 2})),
        vec![
            r#"spec.f.b: Invalid value: "integer": spec.f.b in body must be of type string: "integer""#
        ]
    );
    let s = compile(
        json!({"type": "object", "required": ["spec"], "properties": {
        "spec": {"type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "string"}, "b": {"type": "string"}}}}}),
    );
    assert_eq!(
        messages(&s.validate(&json!({}), None)),
        vec!["spec: Required value"]
    );
    let errs = s.validate(&json!({"spec": {"a": "x"}}), None);
    assert_eq!(messages(&errs), vec!["spec.b: Required value"]);
}

// allOf, anyOf, oneOf and not: value validations, with kube-openapi's messages.
#[test]
fn combinators() {
    let any_of = json!({"type": "string", "anyOf": [{"maxLength": 1}, {"pattern": "^x"}]});
    assert!(errors_of(any_of.clone(), json!("xyz")).is_empty());
    assert_eq!(
        errors_of(any_of, json!("abc")),
        vec![
            r#": Invalid value: "": "spec.f" must validate at least one schema (anyOf)"#,
            "spec.f: Too long: may not be more than 1 byte"
        ]
    );
    let one_of = json!({"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]});
    assert_eq!(
        errors_of(one_of, json!(5)),
        vec![
            r#": Invalid value: "": "spec.f" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        ]
    );
    let all_of = json!({"type": "integer", "allOf": [{"minimum": 0}, {"maximum": 10}]});
    assert_eq!(
        errors_of(all_of, json!(11)),
        vec![
            "spec.f: Invalid value: 11: spec.f in body should be less than or equal to 10",
            r#": Invalid value: "": "spec.f" must validate all the schemas (allOf)"#
        ]
    );
    let not = json!({"type": "string", "not": {"enum": ["forbidden"]}});
    assert_eq!(
        errors_of(not, json!("forbidden")),
        vec![r#": Invalid value: "": "spec.f" must not validate the schema (not)"#]
    );
}

// x-kubernetes-list-type set and map: each repeat reported once, at its second occurrence.
#[test]
fn list_types() {
    let s = with_spec(json!({
        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["port", "protocol"],
            "items": {"type": "object", "properties": {
                "port": {"type": "integer"}, "protocol": {"type": "string"}}}},
        "named": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
    }));
    let obj = json!({"spec": {
        "set": ["a", "b", "a", "a", "b"],
        "ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"},
            {"port": 80, "protocol": "TCP"}],
        "named": [{"name": "x"}, {}, {"name": "x"}, {}]
    }});
    assert_eq!(
        messages(&s.validate(&obj, None)),
        vec![
            r#"spec.set[2]: Duplicate value: "a""#,
            r#"spec.set[4]: Duplicate value: "b""#,
            r#"spec.ports[2]: Duplicate value: {"port":80,"protocol":"TCP"}"#,
            r#"spec.named[2]: Duplicate value: {"name":"x"}"#,
            "spec.named[3]: Duplicate value: {}",
        ]
    );
    let wrong = json!({"spec": {"named": ["x"]}});
    assert_eq!(
        messages(&s.validate(&wrong, None)),
        vec![
            r#"spec.named[0]: Invalid value: "string": spec.named[0] in body must be of type object: "string""#,
            r#"spec.named[0]: Invalid value: "x": must be an object for an array of list-type map"#
        ]
    );
}

// Embedded resources need apiVersion and kind, well-formed, and valid metadata.
#[test]
fn embedded_resource_rules() {
    let s = widget();
    let obj =
        json!({"spec": {"template": {"kind": "Bad_Kind", "metadata": {"name": "Not Valid/"}}}});
    assert_eq!(
        messages(&s.validate(&obj, None)),
        vec![
            "spec.template.apiVersion: Required value",
            r#"spec.template.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
            r#"spec.template.metadata.name: Invalid value: "Not Valid/": may not contain '/'"#,
        ]
    );
    let good = json!({"spec": {"template": {"apiVersion": "apps/v1", "kind": "Deployment"}}});
    assert!(s.validate(&good, None).is_empty());
    let bad_version = json!({"spec": {"template": {"apiVersion": "a/b/c", "kind": "X"}}});
    assert_eq!(
        messages(&s.validate(&bad_version, None)),
        vec![
            r#"spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#
        ]
    );
}

// Ratcheting (CRDValidationRatcheting, GA in 1.33): an invalid value unchanged from the old
// object passes; a changed one fails; map-list items correlate by their keys.
#[test]
fn ratcheting() {
    let s = with_spec(json!({
        "name": {"type": "string", "maxLength": 3},
        "other": {"type": "string"},
        "items": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "properties": {
                "k": {"type": "string"}, "v": {"type": "integer", "minimum": 0}}}},
        "atomic": {"type": "array", "items": {"type": "integer", "minimum": 0}}
    }));
    let old = json!({"spec": {"name": "toolong", "items": [{"k": "a", "v": -1}], "atomic": [-1]}});
    // The atomic list changed, so its unchanged item does not correlate.
    let unchanged = json!({"spec": {"name": "toolong", "other": "x",
        "items": [{"k": "b", "v": 1}, {"k": "a", "v": -1}], "atomic": [-1, 5]}});
    assert_eq!(
        messages(&s.validate(&unchanged, Some(&old))),
        vec![
            "spec.atomic[0]: Invalid value: -1: spec.atomic[0] in body should be greater than or equal to 0"
        ]
    );
    let changed = json!({"spec": {"name": "toolong!", "items": [{"k": "a", "v": -2}]}});
    assert_eq!(
        messages(&s.validate(&changed, Some(&old))),
        vec![
            "spec.items[0].v: Invalid value: -2: spec.items[0].v in body should be greater than or equal to 0",
            "spec.name: Too long: may not be more than 3 bytes",
        ]
    );
    assert_eq!(s.validate(&old, None).len(), 3);
    assert!(s.validate(&old, Some(&old)).is_empty());
}

// List-type errors already in the old object do not block an update.
#[test]
fn list_types_ratchet_on_the_old_object() {
    let s = with_spec(json!({
        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
    }));
    let old = json!({"spec": {"set": ["a", "a"]}});
    let new = json!({"spec": {"set": ["b", "b"]}});
    assert!(s.validate(&new, Some(&old)).is_empty());
    assert_eq!(s.validate(&new, Some(&json!({}))).len(), 1);
}

// The budgets: a schema nested past 64 levels is refused; values nested to the body limit
// are walked without running out of stack; error lists are cut.
#[test]
fn budgets() {
    let mut schema = json!({"type": "string"});
    for _ in 0..70 {
        schema = json!({"type": "object", "properties": {"a": schema}});
    }
    assert!(StructuralSchema::compile(&schema).is_err());
    let s = compile(
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"l": {"type": "array", "items": {"type": "string"}}}}}}),
    );
    let mut deep = json!(1);
    for _ in 0..120 {
        deep = json!([deep]);
    }
    let mut obj = json!({"spec": {"l": deep.clone(), "x": deep}});
    assert_eq!(s.prune(&mut obj), Vec::<String>::new());
    s.apply_defaults(&mut obj);
    assert!(!s.validate(&obj, None).is_empty());
    let many = with_spec(json!({"l": {"type": "array", "items": {"type": "integer"}}}));
    let list: Vec<Value> = (0..5000).map(|i| json!(format!("s{i}"))).collect();
    let errs = many.validate(&json!({"spec": {"l": list}}), None);
    assert!(errs.len() < 5000);
    assert!(
        errs.last()
            .is_some_and(|e| e.detail.contains("more problems"))
    );
}

// The structural schema is shared by the store's replicas' threads.
#[test]
fn is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<StructuralSchema>();
}

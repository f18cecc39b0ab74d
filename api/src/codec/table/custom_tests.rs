//! Tables of custom resources: columns from `additionalPrinterColumns` or the default Age,
//! each type's cells, empty cells, lists, `includeObject`, `v1beta1` and watch events.

use std::sync::Arc;

use chrono::TimeZone;
use serde_json::json;

use super::*;
use crate::codec::Context;
use crate::codec::EventEncoder;
use crate::codec::MetaVersion;
use crate::codec::table::IncludeObject;
use crate::codec::table::TableEvents;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 12, 30, 0).unwrap()
}

fn options(include: IncludeObject) -> TableOptions {
    TableOptions {
        version: MetaVersion::V1,
        include,
        headers: true,
    }
}

fn widget(name: &str) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": "12",
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"replicas": 3, "ratio": 0.5, "hosts": ["a", "b"], "size": 2.0,
                 "labels": {"z": "1", "a": "<2>"}},
        "status": {"ready": true, "phase": "Running", "observed": null,
                   "conditions": [{"type": "Synced", "status": "False"},
                                  {"type": "Ready", "status": "True"}]}
    })
}

fn columns() -> Vec<Value> {
    vec![
        json!({"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas",
               "description": "Desired replicas"}),
        json!({"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio", "format": "float"}),
        json!({"name": "Ready", "type": "boolean", "jsonPath": ".status.ready"}),
        json!({"name": "Phase", "type": "string", "jsonPath": ".status.phase"}),
        json!({"name": "Condition", "type": "string",
               "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status", "priority": 1}),
        json!({"name": "Hosts", "type": "string", "jsonPath": ".spec.hosts"}),
        json!({"name": "Labels", "type": "string", "jsonPath": ".spec.labels", "priority": 2}),
        json!({"name": "Created", "type": "date", "jsonPath": ".metadata.creationTimestamp"}),
    ]
}

fn table(columns: &[Value], object: &Value) -> Value {
    CustomColumns::compile(columns).object(
        object,
        options(IncludeObject::Metadata),
        now(),
        Flavor::Kubernetes,
    )
}

// R-RES-040, R-VER-131
#[test]
fn columns_follow_name_with_their_type_format_description_and_priority() {
    let table = table(&columns(), &widget("w"));
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(table["metadata"], json!({"resourceVersion": "12"}));
    let defs = table["columnDefinitions"].as_array().unwrap();
    let names: Vec<&str> = defs.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "Name",
            "Replicas",
            "Ratio",
            "Ready",
            "Phase",
            "Condition",
            "Hosts",
            "Labels",
            "Created"
        ]
    );
    assert_eq!(defs[0]["format"], "name");
    assert!(
        defs[0]["description"]
            .as_str()
            .unwrap()
            .starts_with("Name must be unique within a namespace")
    );
    assert_eq!(
        defs[1],
        json!({"name": "Replicas", "type": "integer", "format": "", "description": "Desired replicas", "priority": 0})
    );
    assert_eq!(defs[2]["format"], "float");
    assert_eq!(
        defs[3]["description"],
        "Custom resource definition column (in JSONPath format): .status.ready"
    );
    assert_eq!(defs[5]["priority"], 1);
    assert_eq!(defs[7]["priority"], 2);
    assert_eq!(
        table["rows"][0]["cells"],
        json!([
            "w",
            3,
            0.5,
            true,
            "Running",
            "True",
            "[\"a\",\"b\"]",
            "{\"a\":\"\\u003c2\\u003e\",\"z\":\"1\"}",
            "12h"
        ])
    );
}

#[test]
fn a_version_without_columns_prints_name_and_age() {
    let table = table(&[], &widget("w"));
    let defs = table["columnDefinitions"].as_array().unwrap();
    assert_eq!(defs.len(), 2);
    assert_eq!(
        (&defs[1]["name"], &defs[1]["type"], &defs[1]["format"]),
        (&json!("Age"), &json!("date"), &json!(""))
    );
    assert!(
        defs[1]["description"]
            .as_str()
            .unwrap()
            .starts_with("CreationTimestamp is a timestamp")
    );
    assert_eq!(table["rows"][0]["cells"], json!(["w", "12h"]));
}

#[test]
fn missing_paths_and_values_of_another_type_print_empty_cells() {
    let columns = [
        json!({"name": "Missing", "type": "string", "jsonPath": ".spec.nothing"}),
        json!({"name": "OutOfBounds", "type": "string", "jsonPath": ".spec.hosts[5]"}),
        json!({"name": "NotAList", "type": "integer", "jsonPath": ".spec.replicas[0]"}),
        json!({"name": "Null", "type": "string", "jsonPath": ".status.observed"}),
        json!({"name": "NullDate", "type": "date", "jsonPath": ".status.observed"}),
        json!({"name": "BoolAsInt", "type": "integer", "jsonPath": ".status.ready"}),
        json!({"name": "TextAsBool", "type": "boolean", "jsonPath": ".status.phase"}),
        json!({"name": "IntAsText", "type": "string", "jsonPath": ".spec.replicas"}),
        json!({"name": "FloatAsInt", "type": "integer", "jsonPath": ".spec.ratio"}),
        json!({"name": "IntAsFloat", "type": "number", "jsonPath": ".spec.replicas"}),
        json!({"name": "WholeFloat", "type": "number", "jsonPath": ".spec.size"}),
        json!({"name": "TextAsDate", "type": "date", "jsonPath": ".status.phase"}),
        json!({"name": "IntAsDate", "type": "date", "jsonPath": ".spec.replicas"}),
        json!({"name": "Unknown", "type": "object", "jsonPath": ".spec.replicas"}),
        json!({"name": "Many", "type": "string", "jsonPath": ".spec.hosts[*]"}),
        json!({"name": "Wide", "type": "number", "jsonPath": ".spec.wide"}),
    ];
    let mut object = widget("w");
    object["spec"]["wide"] = json!(9_007_199_254_740_993_i64);
    let table = table(&columns, &object);
    assert_eq!(
        table["rows"][0]["cells"],
        json!([
            "w",
            null,
            null,
            null,
            "<no value>",
            null,
            null,
            null,
            "3",
            0,
            3,
            2,
            "<invalid>",
            null,
            null,
            "a",
            9_007_199_254_740_992_i64
        ])
    );
}

#[test]
fn dates_print_as_ages_at_the_request_time() {
    let cases = [
        ("2026-01-01T12:29:30Z", "30s"),
        ("2026-01-01T13:00:00+01:00", "30m"),
        ("2026-01-01T12:00:00.123456Z", "29m"),
        ("2025-12-20T12:30:00Z", "12d"),
        ("2026-01-01T12:30:01Z", "0s"),
        ("2026-01-02T00:00:00Z", "<invalid>"),
        ("", "<unknown>"),
        ("0001-01-01T00:00:00Z", "<unknown>"),
        ("2026-01-01 12:00:00Z", "<invalid>"),
        ("2026-01-01t12:00:00z", "<invalid>"),
        ("2026-01-01T12:00:60Z", "<invalid>"),
        ("2026-02-30T12:00:00Z", "<invalid>"),
        ("yesterday", "<invalid>"),
    ];
    for (time, want) in cases {
        assert_eq!(
            cell("date", Item::Json(&json!(time)), now()),
            json!(want),
            "{time}"
        );
    }
}

#[test]
fn a_column_that_does_not_parse_drops_itself_and_the_columns_after_it() {
    let columns = [
        json!({"name": "Phase", "type": "string", "jsonPath": ".status.phase"}),
        json!({"name": "Broken", "type": "string", "jsonPath": ".spec.hosts["}),
        json!({"name": "Ready", "type": "boolean", "jsonPath": ".status.ready"}),
    ];
    let table = table(&columns, &widget("w"));
    assert_eq!(table["columnDefinitions"].as_array().unwrap().len(), 2);
    assert_eq!(table["rows"][0]["cells"], json!(["w", "Running"]));
}

#[test]
fn lists_print_a_row_per_item_and_carry_their_metadata() {
    let printer = CustomColumns::compile(&columns()[3..4]);
    let list = json!({
        "apiVersion": "example.com/v1", "kind": "WidgetList",
        "metadata": {"resourceVersion": "40", "continue": "next", "remainingItemCount": 3},
        "items": [widget("a"), widget("b")]
    });
    let table = printer.list(
        &list,
        options(IncludeObject::Object),
        now(),
        Flavor::Platform,
    );
    assert_eq!(table["apiVersion"], "meta.platform.io/v1");
    assert_eq!(
        table["metadata"],
        json!({"resourceVersion": "40", "continue": "next", "remainingItemCount": 3})
    );
    assert_eq!(table["rows"][0]["cells"], json!(["a", "Running"]));
    assert_eq!(table["rows"][1]["cells"], json!(["b", "Running"]));
    assert_eq!(table["rows"][1]["object"], widget("b"));
    let empty =
        json!({"apiVersion": "example.com/v1", "kind": "WidgetList", "metadata": {}, "items": []});
    let table = printer.list(
        &empty,
        options(IncludeObject::Metadata),
        now(),
        Flavor::Platform,
    );
    assert_eq!(table["rows"], json!([]));
}

#[test]
fn a_list_kind_need_not_end_in_list() {
    let collection = json!({"apiVersion": "example.com/v1", "kind": "WidgetCollection",
                            "metadata": {"resourceVersion": "5"}, "items": [widget("a")]});
    assert!(is_list(&collection));
    assert!(!is_list(
        &json!({"kind": "Widget", "metadata": {"name": "w"}, "items": []})
    ));
    let printer = CustomColumns::compile(&[]);
    let table = printer.list(
        &collection,
        options(IncludeObject::Object),
        now(),
        Flavor::Kubernetes,
    );
    assert_eq!(table["rows"][0]["object"]["kind"], "Widget");
}

// R-RES-040
#[test]
fn include_object_and_v1beta1_apply_to_custom_tables() {
    let printer = CustomColumns::compile(&[]);
    let none = printer.object(
        &widget("w"),
        options(IncludeObject::None),
        now(),
        Flavor::Kubernetes,
    );
    assert_eq!(none["rows"][0]["object"], Value::Null);
    let beta = TableOptions {
        version: MetaVersion::V1beta1,
        ..options(IncludeObject::Metadata)
    };
    let table = printer.object(&widget("w"), beta, now(), Flavor::Kubernetes);
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        table["rows"][0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1beta1",
               "metadata": widget("w")["metadata"]})
    );
}

fn context(custom: Option<Arc<CustomColumns>>) -> Context {
    Context {
        flavor: Flavor::Kubernetes,
        now: now(),
        group: "example.com".to_owned(),
        resource: "widgets".to_owned(),
        include_object: None,
        protobuf_cache: Arc::new(crate::codec::protobuf::EncodingCache::new(1024)),
        custom_columns: custom,
    }
}

#[test]
fn a_request_with_custom_columns_prints_them_in_documents_and_watches() {
    let custom = Arc::new(CustomColumns::compile(&columns()[..1]));
    let document = super::super::document(
        &widget("w"),
        MetaVersion::V1,
        &context(Some(custom.clone())),
    )
    .unwrap();
    assert_eq!(document["rows"][0]["cells"], json!(["w", 3]));
    let plain = super::super::document(&widget("w"), MetaVersion::V1, &context(None)).unwrap();
    assert_eq!(plain["columnDefinitions"][1]["name"], "Created At");

    let mut events = TableEvents::new(MetaVersion::V1, context(Some(custom))).unwrap();
    let first = events.event("ADDED", widget("a")).unwrap();
    let second = events.event("MODIFIED", widget("b")).unwrap();
    let first: Value = serde_json::from_slice(&first).unwrap();
    let second: Value = serde_json::from_slice(&second).unwrap();
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["columnDefinitions"][1]["name"], "Replicas");
    assert_eq!(first["object"]["rows"][0]["cells"], json!(["a", 3]));
    assert_eq!(second["object"]["columnDefinitions"], Value::Null);
    assert_eq!(second["object"]["rows"][0]["cells"], json!(["b", 3]));
}

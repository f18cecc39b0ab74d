use chrono::TimeZone;
use chrono::Utc;
use serde_json::json;

use super::*;
use crate::codec::MetaVersion;

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 5, 0).unwrap()
}

fn options(include: IncludeObject) -> TableOptions {
    TableOptions {
        version: MetaVersion::V1,
        include,
        headers: true,
    }
}

fn config_map(name: &str) -> Value {
    json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": name, "namespace": "default", "resourceVersion": "7", "creationTimestamp": "2026-01-01T00:00:00Z"}, "data": {"a": "b"}})
}

// R-RES-040, R-RES-131
#[test]
fn an_object_is_a_table_of_one_row_with_its_metadata() {
    let printers = TablePrinters::new(Flavor::Platform);
    let table = printers.printer("", "configmaps").object(
        &config_map("c"),
        options(IncludeObject::Metadata),
        now(),
    );
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.platform.io/v1");
    assert_eq!(table["metadata"], json!({"resourceVersion": "7"}));
    let names: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Data", "Age"]);
    assert_eq!(table["columnDefinitions"][0]["format"], "name");
    assert_eq!(table["columnDefinitions"][1]["priority"], 0);
    assert_eq!(table["rows"][0]["cells"], json!(["c", 1, "5m"]));
    assert_eq!(
        table["rows"][0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.platform.io/v1", "metadata": config_map("c")["metadata"]})
    );
}

#[test]
fn include_object_chooses_what_each_row_carries() {
    let printers = TablePrinters::new(Flavor::Kubernetes);
    let printer = printers.printer("", "configmaps");
    let none = printer.object(&config_map("c"), options(IncludeObject::None), now());
    assert_eq!(none["rows"][0]["object"], Value::Null);
    let mut item = config_map("c");
    item.as_object_mut()
        .unwrap()
        .retain(|k, _| k != "kind" && k != "apiVersion");
    let list = json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"resourceVersion": "9"}, "items": [item]});
    let whole = printer.list(&list, options(IncludeObject::Object), now());
    let object = &whole["rows"][0]["object"];
    assert_eq!(
        (object["kind"].as_str(), object["apiVersion"].as_str()),
        (Some("ConfigMap"), Some("v1"))
    );
    assert_eq!(object["data"], json!({"a": "b"}));
    let beta = TableOptions {
        version: MetaVersion::V1beta1,
        ..options(IncludeObject::Metadata)
    };
    let table = printer.object(&config_map("c"), beta, now());
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        table["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
}

#[test]
fn lists_carry_continue_and_remaining_count_and_headers_can_be_left_out() {
    let printers = TablePrinters::new(Flavor::Kubernetes);
    let list = json!({
        "metadata": {"resourceVersion": "12", "continue": "abc", "remainingItemCount": 3},
        "items": [config_map("a"), config_map("b")]
    });
    let printer = printers.printer("", "configmaps");
    let table = printer.list(&list, options(IncludeObject::None), now());
    assert_eq!(
        table["metadata"],
        json!({"resourceVersion": "12", "continue": "abc", "remainingItemCount": 3})
    );
    assert_eq!(table["rows"].as_array().unwrap().len(), 2);
    let quiet = TableOptions {
        headers: false,
        ..options(IncludeObject::None)
    };
    assert_eq!(
        printer.list(&list, quiet, now())["columnDefinitions"],
        Value::Null
    );
    let empty = json!({"metadata": {"resourceVersion": "12"}, "items": []});
    assert_eq!(printer.list(&empty, quiet, now())["rows"], json!([]));
}

// R-RES-041
#[test]
fn kinds_without_a_printer_get_name_and_creation_time() {
    let printers = TablePrinters::new(Flavor::Kubernetes);
    let printer = printers.printer("rbac.authorization.k8s.io", "roles");
    let role = json!({"metadata": {"name": "reader", "creationTimestamp": "2026-01-01T00:00:00Z"}});
    let table = printer.object(&role, options(IncludeObject::None), now());
    let types: Vec<(&str, &str)> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["type"].as_str().unwrap()))
        .collect();
    assert_eq!(types, [("Name", "string"), ("Created At", "date")]);
    assert_eq!(
        table["rows"][0]["cells"],
        json!(["reader", "2026-01-01T00:00:00Z"])
    );
    let empty = json!({"metadata": {"resourceVersion": "1"}, "items": []});
    assert_eq!(
        printer.list(&empty, options(IncludeObject::None), now())["rows"],
        Value::Null
    );
}

#[test]
fn printers_are_found_by_the_flavor_group_names() {
    let platform = TablePrinters::new(Flavor::Platform);
    assert_eq!(
        platform
            .printer("networking.platform.io", "ingresses")
            .resolved
            .columns[1]
            .name,
        "Class"
    );
    assert_eq!(
        platform
            .printer("networking.k8s.io", "ingresses")
            .resolved
            .columns
            .len(),
        2
    );
    let kubernetes = TablePrinters::new(Flavor::Kubernetes);
    assert_eq!(
        kubernetes
            .printer("events.k8s.io", "events")
            .resolved
            .columns[0]
            .name,
        "Last Seen"
    );
    assert_eq!(
        kubernetes.printer("apps", "deployments").resolved.columns[5].priority,
        1
    );
    assert_eq!(
        kubernetes.printer("", "pods").resolved.columns[8].name,
        "Readiness Gates"
    );
}

#[test]
fn flow_schemas_are_listed_by_precedence() {
    let printers = TablePrinters::new(Flavor::Kubernetes);
    let fs = |name: &str, precedence: i64| json!({"metadata": {"name": name}, "spec": {"matchingPrecedence": precedence, "priorityLevelConfiguration": {"name": "global"}}});
    let list = json!({"metadata": {}, "items": [fs("b", 9000), fs("z", 100), fs("a", 9000)]});
    let table = printers
        .printer("flowcontrol.apiserver.k8s.io", "flowschemas")
        .list(&list, options(IncludeObject::None), now());
    let names: Vec<&Value> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["cells"][0])
        .collect();
    assert_eq!(names, [&json!("z"), &json!("a"), &json!("b")]);
    assert_eq!(table["rows"][0]["cells"][3], json!("<none>"));
}

#[test]
fn every_column_is_described() {
    let (printers, default) = definitions();
    let undocumented = ["BinaryVersion", "EmulationVersion", "Handler"];
    for column in printers.iter().flatten().chain(default) {
        let described = !column.description.is_empty();
        assert!(
            described != undocumented.contains(&column.name.as_str()),
            "{}",
            column.name
        );
    }
}

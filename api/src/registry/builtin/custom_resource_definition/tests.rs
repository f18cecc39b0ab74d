//! Tests of the CRD strategy: Kubernetes' defaults, stored versions, and its validation
//! messages for names, versions, conversion, printer columns, structural schemas, markers,
//! validation rules (CEL compiled at write time), selectable fields and updates.
//! CHECKLIST: R-VER-126 (scope required), R-VER-129 (schema required and structural),
//! R-VER-130 (`preserveUnknownFields: true` refused).

use serde_json::Value;
use serde_json::json;

use super::*;

/// A valid one-version, namespaced CRD with a status subresource.
fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": "widgets.example.com" },
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": { "plural": "widgets", "kind": "Widget" },
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "subresources": { "status": {} },
                "schema": { "openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "properties": {
                                "replicas": { "type": "integer", "minimum": 0 },
                                "color": { "type": "string" }
                            },
                            "x-kubernetes-validations": [
                                { "rule": "self.replicas <= 10", "message": "at most ten" }
                            ]
                        },
                        "status": { "type": "object", "x-kubernetes-preserve-unknown-fields": true }
                    }
                }}
            }]
        }
    })
}

/// The CRD as the store validates a create: defaulted and prepared.
fn prepared(mut obj: Value) -> Value {
    let s = CustomResourceDefinitionStrategy::default();
    s.default_fields(&mut obj);
    s.prepare_for_create(&mut obj);
    obj
}

/// Every problem of creating `obj`, rendered as Kubernetes words them.
fn create_errors(obj: Value) -> Vec<String> {
    let s = CustomResourceDefinitionStrategy::default();
    let obj = prepared(obj);
    s.validate_create(&obj)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Asserts one error starts with `field: ` and contains `words`.
#[track_caller]
fn assert_error(errs: &[String], field: &str, words: &str) {
    assert!(
        errs.iter()
            .any(|e| e.starts_with(&format!("{field}: ")) && e.contains(words)),
        "no error at {field} with {words:?} in {errs:#?}"
    );
}

fn schema_mut(obj: &mut Value) -> &mut Value {
    obj.pointer_mut("/spec/versions/0/schema/openAPIV3Schema")
        .expect("schema")
}

#[test]
fn a_valid_crd_has_no_problems_and_gets_kubernetes_defaults() {
    assert_eq!(create_errors(crd()), Vec::<String>::new());
    let obj = prepared(crd());
    assert_eq!(obj.pointer("/spec/names/singular"), Some(&json!("widget")));
    assert_eq!(
        obj.pointer("/spec/names/listKind"),
        Some(&json!("WidgetList"))
    );
    assert_eq!(
        obj.pointer("/spec/conversion"),
        Some(&json!({ "strategy": "None" }))
    );
    assert_eq!(obj.pointer("/status/storedVersions"), Some(&json!(["v1"])));
    assert_eq!(
        obj.pointer("/status/acceptedNames"),
        Some(&json!({ "kind": "", "plural": "" }))
    );
}

#[test]
fn the_name_is_plural_dot_group_and_the_group_has_a_dot() {
    let mut obj = crd();
    obj["metadata"]["name"] = json!("gadgets.example.com");
    assert_error(
        &create_errors(obj),
        "metadata.name",
        "must be spec.names.plural+\".\"+spec.group",
    );
    let mut obj = crd();
    obj["spec"]["group"] = json!("example");
    obj["metadata"]["name"] = json!("widgets.example");
    assert_error(
        &create_errors(obj),
        "spec.group",
        "should be a domain with at least one dot",
    );
}

#[test]
fn scope_and_names_follow_kubernetes_rules() {
    let mut obj = crd();
    obj["spec"].as_object_mut().expect("spec").remove("scope");
    assert_error(&create_errors(obj), "spec.scope", "Required value");
    let mut obj = crd();
    obj["spec"]["scope"] = json!("Global");
    assert_error(
        &create_errors(obj),
        "spec.scope",
        "Unsupported value: \"Global\"",
    );
    let mut obj = crd();
    obj["spec"]["names"]["kind"] = json!("Wid_get");
    assert_error(
        &create_errors(obj),
        "spec.names.kind",
        "may have mixed case, but should otherwise match",
    );
    let mut obj = crd();
    obj["spec"]["names"]["listKind"] = json!("Widget");
    assert_error(
        &create_errors(obj),
        "spec.names.listKind",
        "kind and listKind may not be the same",
    );
    let mut obj = crd();
    obj["spec"]["names"]["shortNames"] = json!(["w", "Bad"]);
    assert_error(
        &create_errors(obj),
        "spec.names.shortNames[1]",
        "a DNS-1035 label",
    );
}

#[test]
fn exactly_one_storage_version_with_unique_names() {
    let mut obj = crd();
    let v2 = obj["spec"]["versions"][0].clone();
    obj["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(v2);
    let errs = create_errors(obj);
    assert_error(&errs, "spec.versions", "must contain unique version names");
    assert_error(
        &errs,
        "spec.versions",
        "must have exactly one version marked as storage version",
    );
    let mut obj = crd();
    obj["spec"]["versions"][0]["storage"] = json!(false);
    assert_error(
        &create_errors(obj),
        "spec.versions",
        "exactly one version marked as storage",
    );
    let mut obj = crd();
    obj["spec"]["versions"][0]["deprecationWarning"] = json!("old");
    assert_error(
        &create_errors(obj),
        "spec.versions[0].deprecationWarning",
        "can only be set for deprecated versions",
    );
}

#[test]
fn a_schema_is_required_for_every_version() {
    let mut obj = crd();
    obj["spec"]["versions"][0]
        .as_object_mut()
        .expect("v")
        .remove("schema");
    assert_error(
        &create_errors(obj),
        "spec.versions[0].schema.openAPIV3Schema",
        "Required value",
    );
}

#[test]
fn identical_schemas_are_reported_at_the_top_level_as_kubernetes_does() {
    let mut obj = crd();
    schema_mut(&mut obj)["properties"]["spec"]["properties"]["color"] =
        json!({ "description": "no type" });
    assert_error(
        &create_errors(obj.clone()),
        "spec.validation.openAPIV3Schema.properties[spec].properties[color].type",
        "Required value: must not be empty for specified object fields",
    );
    let mut v2 = obj["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    v2["schema"] = crd()["spec"]["versions"][0]["schema"].clone();
    obj["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(v2);
    let errs = create_errors(obj);
    assert_error(
        &errs,
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[color].type",
        "must not be empty for specified object fields",
    );
    assert!(
        !errs.iter().any(|e| e.starts_with("spec.versions[1]")),
        "{errs:#?}"
    );
}

#[test]
fn structural_schema_rules() {
    let mut obj = crd();
    *schema_mut(&mut obj) = json!({
        "type": "object",
        "properties": {
            "metadata": { "type": "object", "properties": { "labels": { "type": "object" } } },
            "list": { "type": "array" },
            "spec": {
                "type": "object",
                "properties": { "a": { "type": "string" } },
                "anyOf": [ { "type": "object", "properties": { "b": { "type": "string" } } } ]
            }
        }
    });
    obj["spec"]["versions"][0]
        .as_object_mut()
        .expect("v")
        .remove("subresources");
    let errs = create_errors(obj);
    assert_error(
        &errs,
        "spec.validation.openAPIV3Schema.properties[metadata]",
        "must not specify anything other than name and generateName",
    );
    assert_error(
        &errs,
        "spec.validation.openAPIV3Schema.properties[list].items",
        "must be specified",
    );
    assert_error(
        &errs,
        "spec.validation.openAPIV3Schema.properties[spec].anyOf[0].type",
        "must be empty to be structural",
    );
    let mut obj = crd();
    *schema_mut(&mut obj) = json!({ "type": "string" });
    obj["spec"]["versions"][0]
        .as_object_mut()
        .expect("v")
        .remove("subresources");
    assert_error(
        &create_errors(obj),
        "spec.validation.openAPIV3Schema.type",
        "must be object at the root",
    );
}

#[test]
fn int_or_string_and_preserve_unknown_fields_need_no_type() {
    let mut obj = crd();
    schema_mut(&mut obj)["properties"]["spec"]["properties"]["port"] = json!({
        "x-kubernetes-int-or-string": true,
        "anyOf": [ { "type": "integer" }, { "type": "string" } ]
    });
    schema_mut(&mut obj)["properties"]["spec"]["properties"]["free"] =
        json!({ "x-kubernetes-preserve-unknown-fields": true });
    assert_eq!(create_errors(obj), Vec::<String>::new());
}

#[test]
fn unsupported_openapi_keywords_are_forbidden() {
    let mut obj = crd();
    let spec = &mut schema_mut(&mut obj)["properties"]["spec"];
    spec["uniqueItems"] = json!(true);
    spec["$ref"] = json!("#/definitions/x");
    spec["properties"]["color"]["type"] = json!("null");
    let errs = create_errors(obj);
    let at = "spec.validation.openAPIV3Schema.properties[spec]";
    assert_error(
        &errs,
        &format!("{at}.uniqueItems"),
        "runtime complexity becomes quadratic",
    );
    assert_error(&errs, &format!("{at}.$ref"), "$ref is not supported");
    assert_error(
        &errs,
        &format!("{at}.properties[color].type"),
        "Unsupported value: \"null\"",
    );
}

#[test]
fn defaults_are_forbidden_in_top_level_metadata() {
    let mut obj = crd();
    schema_mut(&mut obj)["properties"]["metadata"] =
        json!({ "type": "object", "default": { "name": "x" } });
    assert_error(
        &create_errors(obj),
        "spec.validation.openAPIV3Schema.properties[metadata].default",
        "must not be set in top-level metadata",
    );
}

#[test]
fn status_subresource_limits_the_root_schema() {
    let mut obj = crd();
    schema_mut(&mut obj)["additionalProperties"] = json!(false);
    assert_error(
        &create_errors(obj),
        "spec.validation.openAPIV3Schema",
        "fields are allowed at the root of the schema if the status subresource is enabled",
    );
}

#[test]
fn list_and_map_markers() {
    let mut obj = crd();
    let props = &mut schema_mut(&mut obj)["properties"]["spec"]["properties"];
    props["ports"] = json!({
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name", "missing"],
        "items": { "type": "object", "properties": { "name": { "type": "string" } } }
    });
    props["tags"] = json!({ "type": "object", "x-kubernetes-list-type": "set" });
    props["labels"] = json!({ "type": "object", "x-kubernetes-map-type": "sorted" });
    let errs = create_errors(obj);
    let at = "spec.validation.openAPIV3Schema.properties[spec].properties";
    assert_error(
        &errs,
        &format!("{at}[ports].x-kubernetes-list-map-keys"),
        "entries must all be names of item properties",
    );
    assert_error(
        &errs,
        &format!("{at}[ports].items.properties[name].default"),
        "must have a default or be a required property",
    );
    assert_error(
        &errs,
        &format!("{at}[tags].type"),
        "must be array if x-kubernetes-list-type is specified",
    );
    assert_error(
        &errs,
        &format!("{at}[labels].x-kubernetes-map-type"),
        "Unsupported value: \"sorted\"",
    );
}

#[test]
fn validation_rules_are_compiled_when_the_crd_is_written() {
    let mut obj = crd();
    schema_mut(&mut obj)["properties"]["spec"]["x-kubernetes-validations"] = json!([
        { "rule": "self.replicas <=" },
        { "rule": "self.replicas > 0 &&\n self.replicas < 5" },
        { "rule": "self.replicas == other" },
        { "rule": "true", "reason": "FieldValueWrong" },
        { "rule": "true", "fieldPath": ".nope" }
    ]);
    let errs = create_errors(obj);
    let at = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations";
    assert_error(
        &errs,
        &format!("{at}[1].message"),
        "message must be specified if rule contains line breaks",
    );
    assert_error(
        &errs,
        &format!("{at}[3].reason"),
        "Unsupported value: \"FieldValueWrong\"",
    );
    assert_error(&errs, &format!("{at}[4].fieldPath"), "must be a valid path");
    let mut obj = crd();
    schema_mut(&mut obj)["properties"]["spec"]["x-kubernetes-validations"] = json!([
        { "rule": "self.replicas <=" },
        { "rule": "self.replicas == other" },
        { "rule": "self.replicas >= 0", "fieldPath": ".replicas", "optionalOldSelf": true }
    ]);
    let errs = create_errors(obj);
    assert_error(&errs, &format!("{at}[0].rule"), "compilation failed");
    assert_error(
        &errs,
        &format!("{at}[1].rule"),
        "undeclared reference to 'other'",
    );
    assert_error(
        &errs,
        &format!("{at}[2].optionalOldSelf"),
        "may not be set if oldSelf is not used in rule",
    );
}

#[test]
fn old_self_is_refused_where_items_cannot_be_correlated() {
    let mut obj = crd();
    schema_mut(&mut obj)["properties"]["spec"]["properties"]["items"] = json!({
        "type": "array",
        "items": {
            "type": "string",
            "x-kubernetes-validations": [ { "rule": "self == oldSelf" } ]
        }
    });
    assert_error(
        &create_errors(obj),
        "spec.validation.openAPIV3Schema.properties[spec].properties[items].items.x-kubernetes-validations[0].rule",
        "oldSelf cannot be used on the uncorrelatable portion of the schema",
    );
}

#[test]
fn printer_columns_subresources_and_selectable_fields() {
    let mut obj = crd();
    let v = &mut obj["spec"]["versions"][0];
    v["additionalPrinterColumns"] =
        json!([{ "name": "Color", "type": "text", "jsonPath": "spec.color" }]);
    v["subresources"]["scale"] =
        json!({ "specReplicasPath": ".status.replicas", "statusReplicasPath": "" });
    v["selectableFields"] = json!([
        { "jsonPath": ".spec.color" }, { "jsonPath": ".spec.color" },
        { "jsonPath": ".spec.nope" }, { "jsonPath": ".spec" }
    ]);
    let errs = create_errors(obj);
    assert_error(
        &errs,
        "spec.additionalPrinterColumns[0].type",
        "must be one of boolean,date,integer,number,string",
    );
    assert_error(
        &errs,
        "spec.additionalPrinterColumns[0].JSONPath",
        "must be a simple json path starting with .",
    );
    assert_error(
        &errs,
        "spec.subresources.scale.specReplicasPath",
        "should be a json path under .spec",
    );
    assert_error(
        &errs,
        "spec.subresources.scale.statusReplicasPath",
        "Required value",
    );
    assert_error(
        &errs,
        "spec.selectableFields[1].jsonPath",
        "Duplicate value",
    );
    assert_error(
        &errs,
        "spec.selectableFields[2].jsonPath",
        "is an invalid path",
    );
    assert_error(
        &errs,
        "spec.selectableFields[3].jsonPath",
        "must point to a field of type string, boolean or integer",
    );
}

#[test]
fn webhook_conversion_needs_a_client_config_and_review_versions() {
    let mut obj = crd();
    obj["spec"]["conversion"] = json!({ "strategy": "Webhook" });
    let errs = create_errors(obj);
    assert_error(
        &errs,
        "spec.conversion.webhookClientConfig",
        "required when strategy is set to Webhook",
    );
    assert_error(
        &errs,
        "spec.conversion.conversionReviewVersions",
        "Required value",
    );
    let mut obj = crd();
    obj["spec"]["conversion"] = json!({ "strategy": "Webhook", "webhook": {
        "clientConfig": { "url": "http://user@host/convert?x=1#f" },
        "conversionReviewVersions": ["v9"]
    }});
    let errs = create_errors(obj);
    let url = "spec.conversion.webhookClientConfig.url";
    assert_error(&errs, url, "'https' is the only allowed URL scheme");
    assert_error(&errs, url, "user information is not permitted in the URL");
    assert_error(&errs, url, "query parameters are not permitted in the URL");
    assert_error(&errs, url, "fragments are not permitted in the URL");
    assert_error(
        &errs,
        "spec.conversion.conversionReviewVersions",
        "must include at least one of v1, v1beta1",
    );
    let mut obj = crd();
    obj["spec"]["conversion"] =
        json!({ "strategy": "None", "webhook": { "conversionReviewVersions": ["v1"] } });
    assert_error(
        &create_errors(obj),
        "spec.conversion.conversionReviewVersions",
        "should not be set when strategy is not set to Webhook",
    );
    let mut obj = crd();
    obj["spec"]["conversion"] = json!({ "strategy": "Webhook", "webhook": {
        "clientConfig": { "service": { "namespace": "ns", "name": "conv", "path": "/a//b" } },
        "conversionReviewVersions": ["v1"]
    }});
    let prepared = prepared(obj.clone());
    assert_eq!(
        prepared.pointer("/spec/conversion/webhook/clientConfig/service/port"),
        Some(&json!(443))
    );
    assert_error(
        &create_errors(obj),
        "spec.conversion.webhookClientConfig.service.path",
        "segment[1] may not be empty",
    );
}

#[test]
fn protected_groups_need_the_approval_annotation_and_preserve_unknown_fields_stays_off() {
    let mut obj = crd();
    obj["spec"]["group"] = json!("widgets.k8s.io");
    obj["metadata"]["name"] = json!("widgets.widgets.k8s.io");
    assert_error(
        &create_errors(obj.clone()),
        "metadata.annotations[api-approved.kubernetes.io]",
        "Required value",
    );
    obj["metadata"]["annotations"] =
        json!({ "api-approved.kubernetes.io": "unapproved, experimental" });
    assert_eq!(create_errors(obj), Vec::<String>::new());
    let mut obj = crd();
    obj["spec"]["preserveUnknownFields"] = json!(true);
    assert_error(
        &create_errors(obj),
        "spec.preserveUnknownFields",
        "cannot set to true",
    );
}

#[test]
fn updates_keep_group_and_plural_and_record_a_new_storage_version() {
    let s = CustomResourceDefinitionStrategy::default();
    let old = prepared(crd());
    let mut new = old.clone();
    new["spec"]["group"] = json!("example.org");
    new["spec"]["names"]["plural"] = json!("gizmos");
    new["spec"]["scope"] = json!("Cluster");
    let errs: Vec<String> = s
        .validate_update(&new, &old)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_error(&errs, "spec.group", "field is immutable");
    assert_error(&errs, "spec.names.plural", "field is immutable");
    assert!(
        !errs.iter().any(|e| e.starts_with("spec.scope")),
        "not established: {errs:#?}"
    );
    let mut established = old.clone();
    established["status"]["conditions"] = json!([{ "type": "Established", "status": "True" }]);
    let errs: Vec<String> = s
        .validate_update(&new, &established)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_error(&errs, "spec.scope", "field is immutable");

    let mut new = old.clone();
    let mut v2 = new["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    new["spec"]["versions"][0]["storage"] = json!(false);
    new["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(v2);
    s.prepare_for_update(&mut new, &old);
    assert_eq!(
        new.pointer("/status/storedVersions"),
        Some(&json!(["v1", "v2"]))
    );
    let errs = s.validate_update(&new, &old);
    assert!(errs.is_empty(), "{errs:#?}");
    new["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .remove(0);
    let errs: Vec<String> = (s.validate_update(&new, &old).iter())
        .map(ToString::to_string)
        .collect();
    assert_error(
        &errs,
        "status.storedVersions[0]",
        "missing from spec.versions; v1 was previously a storage version",
    );
}

#[test]
fn deeply_nested_schemas_are_refused_not_walked() {
    let mut deep = json!({ "type": "string" });
    for _ in 0..200 {
        deep = json!({ "type": "object", "properties": { "x": deep } });
    }
    let mut obj = crd();
    schema_mut(&mut obj)["properties"]["spec"] = deep;
    let errs = create_errors(obj);
    assert!(errs.iter().any(|e| e.contains("levels deep")), "{errs:#?}");
}

#[test]
fn rules_whose_estimated_cost_is_too_high_are_refused() {
    // R-VER-058
    let at = "spec.validation.openAPIV3Schema.properties[spec]";
    let mut obj = crd();
    schema_mut(&mut obj)["properties"]["spec"]["properties"]["n"] = json!({
        "type": "array",
        "maxItems": 4_000_000,
        "items": {
            "type": "integer",
            "x-kubernetes-validations": [ { "rule": "self > 0 && self < 10" } ]
        }
    });
    let errs = create_errors(obj);
    assert_eq!(
        errs,
        vec![format!(
            "{at}.properties[n].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 2.0x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
        )]
    );

    let mut obj = crd();
    schema_mut(&mut obj)["properties"]["spec"]["properties"]["names"] =
        json!({ "type": "array", "items": { "type": "string" } });
    schema_mut(&mut obj)["properties"]["spec"]["x-kubernetes-validations"] = json!([
        { "rule": "self.names.all(a, self.names.all(b, a == b))" }
    ]);
    let errs = create_errors(obj);
    let rule = format!("{at}.x-kubernetes-validations[0].rule");
    assert_error(
        &errs,
        &rule,
        "Forbidden: estimated rule cost exceeds budget by factor of more than 100x",
    );
    assert_error(
        &errs,
        &rule,
        "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
    );
    assert_error(
        &errs,
        "spec.validation.openAPIV3Schema",
        "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x",
    );
}

#[test]
fn bounded_lists_and_strings_keep_rules_within_the_estimated_budget() {
    let mut obj = crd();
    schema_mut(&mut obj)["properties"]["spec"]["properties"]["names"] = json!({
        "type": "array",
        "maxItems": 100,
        "items": {
            "type": "string",
            "maxLength": 64,
            "x-kubernetes-validations": [ { "rule": "self.matches('^[a-z]+$')" } ]
        }
    });
    schema_mut(&mut obj)["properties"]["spec"]["x-kubernetes-validations"] = json!([
        { "rule": "self.names.all(a, self.names.exists(b, a == b))" }
    ]);
    assert_eq!(create_errors(obj), Vec::<String>::new());
}

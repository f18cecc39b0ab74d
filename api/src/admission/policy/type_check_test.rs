//! A ValidatingAdmissionPolicy's expressions typed by the served built-in schemas: the kinds
//! its rules name, each variable, `request` and `params`, and the warnings' wording.

use serde_json::Value;
use serde_json::json;

use super::type_check::Typed;
use super::type_check::expression_warnings;
use super::type_check::kind_schema;
use super::type_check::resources_to_check;
use crate::cel::check::Components;
use crate::flavor::Flavor;
use crate::openapi::builtin_v3_schemas;

fn typed<'a>(components: &'a Components, group: &'a str, kind: &'a str) -> Typed<'a> {
    Typed {
        group,
        version: "v1",
        kind,
        components,
        schema: kind_schema(components, group, "v1", kind).expect("served"),
    }
}

/// A policy on Deployments with `validations` (and `extra` spec fields).
fn policy(validations: Value, extra: Value) -> Value {
    let mut spec = json!({
        "matchConstraints": {"resourceRules": [{
            "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"],
            "operations": ["CREATE"]
        }]},
        "validations": validations,
    });
    if let (Some(spec), Value::Object(extra)) = (spec.as_object_mut(), extra) {
        spec.extend(extra);
    }
    json!({"metadata": {"name": "p", "generation": 1}, "spec": spec})
}

fn warnings(policy: &Value, kinds: &[(&str, &str)], params: Option<&str>) -> Vec<Value> {
    let components = builtin_v3_schemas(Flavor::Kubernetes);
    let objects: Vec<Typed<'_>> = (kinds.iter())
        .map(|(group, kind)| typed(&components, group, kind))
        .collect();
    let params = params.map(|kind| typed(&components, "", kind));
    let namespace = typed(&components, "", "Namespace");
    expression_warnings(policy, &objects, params, Some(namespace))
}

#[test]
fn resources_to_check_skip_wildcards_and_subresources() {
    let policy = json!({"spec": {"matchConstraints": {"resourceRules": [
        {"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments", "deployments/scale", "replicasets"]},
        {"apiGroups": ["*"], "apiVersions": ["v1"], "resources": ["pods"]},
        {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["*"]},
        {"apiGroups": ["", "apps"], "apiVersions": ["v1"], "resources": ["deployments"]}
    ]}}});
    let triple = |g: &str, r: &str| (g.to_owned(), "v1".to_owned(), r.to_owned());
    assert_eq!(
        resources_to_check(&policy),
        [
            triple("", "deployments"),
            triple("apps", "deployments"),
            triple("apps", "replicasets")
        ]
    );
}

#[test]
fn a_well_typed_policy_has_no_warnings() {
    let policy = policy(
        json!([{
            "expression": "object.spec.replicas <= 5 && request.userInfo.username != '' && namespaceObject.metadata.name != ''",
            "messageExpression": "'replicas: ' + string(object.spec.replicas)"
        }]),
        json!({}),
    );
    assert_eq!(
        warnings(&policy, &[("apps", "Deployment")], None),
        Vec::<Value>::new()
    );
}

#[test]
fn each_mistyped_expression_is_one_warning_naming_its_field_and_kind() {
    let policy = policy(
        json!([
            {"expression": "object.spec.replicas <= 5"},
            {"expression": "object.spec.replicaz <= 5", "messageExpression": "object.metadata.name + 1"}
        ]),
        json!({}),
    );
    assert_eq!(
        warnings(&policy, &[("apps", "Deployment")], None),
        [
            json!({
                "fieldRef": "spec.validations[1].expression",
                "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz <= 5\n | ...........^"
            }),
            json!({
                "fieldRef": "spec.validations[1].messageExpression",
                "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_+_' applied to '(string, int)'\n | object.metadata.name + 1\n | .....................^"
            }),
        ]
    );
}

#[test]
fn a_policy_over_two_kinds_warns_for_the_kind_it_does_not_fit() {
    let policy = policy(
        json!([{"expression": "object.spec.replicas > 1"}]),
        json!({}),
    );
    let found = warnings(&policy, &[("apps", "Deployment"), ("", "ConfigMap")], None);
    assert_eq!(found.len(), 1, "{found:?}");
    let text = found[0]["warning"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("/v1, Kind=ConfigMap: ERROR: <input>:1:7: undefined field 'spec'"),
        "{text}"
    );
    assert!(!text.contains("Deployment"), "{text}");
}

#[test]
fn variables_params_and_request_are_typed() {
    let policy = policy(
        json!([
            {"expression": "variables.count > 'three'"},
            {"expression": "variables.cnt > 3"},
            {"expression": "params.data.limit == '3' && variables.image.startsWith('r')"},
            {"expression": "params.dat.limit == '3'"},
            {"expression": "request.usrInfo.username == ''"}
        ]),
        json!({
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "variables": [
                {"name": "count", "expression": "object.spec.replicas"},
                {"name": "image", "expression": "object.spec.template.spec.containers[0].image"}
            ]
        }),
    );
    let found = warnings(&policy, &[("apps", "Deployment")], Some("ConfigMap"));
    let at = |field: &str| -> String {
        (found.iter())
            .find(|w| w["fieldRef"] == field)
            .and_then(|w| w["warning"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(at("spec.validations[0].expression").contains("'_>_' applied to '(int, string)'"));
    assert!(at("spec.validations[1].expression").contains("undefined field 'cnt'"));
    assert!(at("spec.validations[3].expression").contains("undefined field 'dat'"));
    assert!(at("spec.validations[4].expression").contains("undefined field 'usrInfo'"));
}

#[test]
fn a_policy_whose_rules_name_no_kind_is_checked_untyped() {
    let mut policy = policy(
        json!([{"expression": "object.anything > 1"}, {"expression": "'a' > 1"}]),
        json!({}),
    );
    policy["spec"]["matchConstraints"]["resourceRules"][0]["resources"] = json!(["*"]);
    assert_eq!(
        warnings(&policy, &[], None),
        [json!({
            "fieldRef": "spec.validations[1].expression",
            "warning": "ERROR: <input>:1:5: found no matching overload for '_>_' applied to '(string, int)'\n | 'a' > 1\n | ....^"
        })]
    );
}

#[test]
fn the_warnings_of_a_policy_stop_at_their_budget() {
    let validations: Vec<Value> = (0..4_000)
        .map(|i| json!({"expression": format!("'{i}' > 1")}))
        .collect();
    let mut policy = policy(Value::Array(validations), json!({}));
    policy["spec"]["matchConstraints"]["resourceRules"][0]["resources"] = json!(["*"]);
    let found = warnings(&policy, &[], None);
    let bytes: usize = (found.iter())
        .map(|w| w["warning"].as_str().map_or(0, str::len))
        .sum();
    assert!(
        found.len() > 1_000 && found.len() < 4_000,
        "{}",
        found.len()
    );
    assert!(bytes <= 256 * 1024, "{bytes}");
}

#[test]
fn a_policy_naming_millions_of_resources_is_checked_against_a_bounded_few() {
    let names =
        |prefix: &str| -> Vec<String> { (0..200).map(|i| format!("{prefix}{i}")).collect() };
    let policy = json!({"spec": {"matchConstraints": {"resourceRules": [
        {"apiGroups": names("g"), "apiVersions": names("v"), "resources": names("r")}
    ]}}});
    assert_eq!(resources_to_check(&policy).len(), 256);
}

//! Tests of the CRD strategy's validation of `status` writes (Kubernetes'
//! `ValidateUpdateCustomResourceDefinitionStatus`, not the spec's rules), and of updates.

use serde_json::Value;
use serde_json::json;

use super::*;

/// A valid CRD as stored: defaulted and prepared for its create.
fn stored() -> Value {
    let s = CustomResourceDefinitionStrategy::default();
    let mut crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object",
                        "x-kubernetes-validations": [{"rule": "self.size <= 10"}],
                        "properties": {"size": {"type": "integer"}}}}}}}],
        }
    });
    s.default_fields(&mut crd);
    s.prepare_for_create(&mut crd);
    crd
}

fn texts(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

// A stored spec that today's validation refuses (a rule that no longer compiles) does not
// block a write of the status (names, conditions); the accepted names and the stored
// versions are still checked; a main write is checked whole, as in Kubernetes.
#[test]
fn a_status_write_checks_only_the_status() {
    assert!(CustomResourceDefinitionStrategy::default().status_validated_alone());
    let s = CustomResourceDefinitionStrategy::default();
    let mut old = stored();
    old["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"]
        [0]["rule"] = json!("self.size <=");
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"a": "b"});
    new["status"]["acceptedNames"] = json!({"plural": "widgets", "kind": "Widget"});
    new["status"]["conditions"] = json!([{"type": "Established", "status": "True",
        "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}]);
    assert_eq!(
        texts(&s.validate_status_update(&new, &old)),
        Vec::<String>::new()
    );

    let mut bad = new.clone();
    bad["status"]["acceptedNames"]["plural"] = json!("Not_A_Name");
    bad["status"]["storedVersions"] = json!([]);
    let errs = s.validate_status_update(&bad, &old);
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        ["status.acceptedNames.plural", "status.storedVersions"],
        "{errs:#?}"
    );

    let mut changed = new.clone();
    changed["spec"]["versions"][0]["served"] = json!(false);
    for main in [&new, &changed] {
        let errs = texts(&s.validate_update(main, &old));
        assert!(
            errs.iter().any(|e| e.starts_with(
                "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: "
            )),
            "{errs:#?}"
        );
    }
}

// An update that drops a required field of the spec reports it once: the store reports the
// fields its schema requires, the strategy leaves them out.
#[test]
fn an_update_reports_a_dropped_required_field_once() {
    let s = CustomResourceDefinitionStrategy::default();
    let old = stored();
    let mut new = old.clone();
    if let Some(spec) = new["spec"].as_object_mut() {
        spec.remove("scope");
    }
    let mut required = Vec::new();
    let schema = crate::schema::of::<CustomResourceDefinition>().expect("schema");
    crate::schema::missing_required(&schema, &new, &mut required);
    assert_eq!(texts(&required), ["spec.scope: Required value"]);
    let errs = texts(&s.validate_update(&new, &old));
    assert!(
        !errs.iter().any(|e| e.starts_with("spec.scope: Required")),
        "{errs:#?}"
    );
    assert!(
        texts(&s.validate_create(&new))
            .iter()
            .any(|e| e.starts_with("spec.scope: Required"))
    );
}

//! The patch types of mutation expressions: constructions evaluate to the maps of their
//! fields; other expressions, and other type names, are refused as before.

use serde_json::json;

use super::CompileError;
use super::Program;
use super::evaluate;

fn run(expression: &str) -> serde_json::Value {
    let program = Program::compile_mutation(expression, &["object"]).expect("compiles");
    let object = json!({"metadata": {"name": "web", "labels": {"app": "a"}}});
    evaluate(&program, &[("object", &object)]).expect("evaluates")
}

// Issue 22 item 3 (no CHECKLIST ID names the patch types).
#[test]
fn object_constructions_are_maps_of_their_fields() {
    assert_eq!(
        run("Object{metadata: Object.metadata{labels: {'team': object.metadata.name}}}"),
        json!({"metadata": {"labels": {"team": "web"}}})
    );
    assert_eq!(
        run("Object{spec: Object.spec{replicas: 2, ?paused: optional.none()}}"),
        json!({"spec": {"replicas": 2}})
    );
}

#[test]
fn json_patch_constructions_and_escape_key() {
    assert_eq!(
        run(
            "[JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('a.io/b~c'), value: 'x'}]"
        ),
        json!([{"op": "add", "path": "/metadata/labels/a.io~1b~0c", "value": "x"}])
    );
}

#[test]
fn patch_types_exist_only_in_mutations() {
    assert_eq!(
        Program::compile("Object{}", &["object"]).map(|_| ()),
        Err(CompileError::Undeclared("Object".to_owned()))
    );
    assert_eq!(
        Program::compile_mutation("Pod{}", &["object"]).map(|_| ()),
        Err(CompileError::Undeclared("Pod".to_owned()))
    );
    assert_eq!(
        Program::compile_mutation("Objects{}", &["object"]).map(|_| ()),
        Err(CompileError::Undeclared("Objects".to_owned()))
    );
}

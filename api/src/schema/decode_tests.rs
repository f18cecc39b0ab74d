//! The decoder on real kinds' schemas: findings and their paths, type errors worded as
//! Kubernetes words them, YAML, and the value the typed round trip used to produce.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::events::v1::Event;
use serde_json::json;

use super::super::of;
use super::*;

fn json(schema: &Schema, body: &str) -> Decoded {
    decode(schema, body.as_bytes(), Format::Json).expect("parses")
}

fn type_error(schema: &Schema, body: &str) -> String {
    let decoded = json(schema, body);
    decoded.type_error.expect("a type error").0
}

fn deployment_body() -> String {
    r#"{"apiVersion":"apps/v1","kind":"Deployment","foo":1,
        "metadata":{"name":"a","labels":{"x":"1","x":"2"},"name":"b"},
        "spec":{"replicas":2,"selector":{"matchLabels":{"app":"a"}},
          "template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[
            {"name":"c","image":"i"},
            {"name":"d","image":"i","imagePullPolice":"Always","ports":[{"containerPort":80,"bogus":{"deep":1}}]}
          ]}}}}"#
        .to_owned()
}

// R-RES-188, R-RES-189: paths as Kubernetes prints them, in body order.
#[test]
fn finds_unknown_and_duplicate_fields_with_their_paths() {
    let schema = of::<Deployment>().expect("schema");
    let decoded = json(&schema, &deployment_body());
    assert_eq!(decoded.type_error, None);
    assert_eq!(
        decoded.findings,
        [
            Finding::Unknown("foo".into()),
            Finding::Duplicate("metadata.labels.x".into()),
            Finding::Duplicate("metadata.name".into()),
            Finding::Unknown("spec.template.spec.containers[1].imagePullPolice".into()),
            Finding::Unknown("spec.template.spec.containers[1].ports[0].bogus".into()),
        ]
    );
    let v = &decoded.value;
    assert!(v.get("foo").is_none(), "unknown fields are dropped");
    assert_eq!(v["metadata"]["name"], "b", "the last duplicate counts");
    assert_eq!(v["metadata"]["labels"], json!({"x": "2"}));
    let c = &v["spec"]["template"]["spec"]["containers"][1];
    assert_eq!(
        c,
        &json!({"image":"i","name":"d","ports":[{"containerPort":80}]})
    );
}

// R-RES-188: embedded and free-form values (RawExtension) keep everything, unreported.
#[test]
fn free_form_values_are_kept_as_sent() {
    let schema = of::<ControllerRevision>().expect("schema");
    let body = r#"{"revision":1,"data":{"any":{"thing":[1,{"a":1,"a":2},null]}}}"#;
    let decoded = json(&schema, body);
    assert_eq!((decoded.findings, decoded.type_error), (vec![], None));
    assert_eq!(
        decoded.value["data"]["any"]["thing"],
        json!([1, {"a": 2}, null])
    );
}

// R-RES-189: a field given three times is one finding; a repeated unknown JSON field is only
// unknown (as upstream); at most 100 are kept.
#[test]
fn findings_are_deduplicated_and_capped() {
    let schema = of::<ConfigMap>().expect("schema");
    let decoded = json(
        &schema,
        r#"{"x":1,"x":2,"x":3,"data":{"a":"","a":"","a":""}}"#,
    );
    assert_eq!(
        decoded.findings,
        [
            Finding::Unknown("x".into()),
            Finding::Duplicate("data.a".into()),
        ]
    );
    let many: Vec<String> = (0..150).map(|i| format!(r#""u{i}":0"#)).collect();
    let decoded = json(&schema, &format!("{{{}}}", many.join(",")));
    assert_eq!(decoded.findings.len(), 100);
    assert_eq!(decoded.findings[99], Finding::Unknown("u99".into()));
}

#[test]
fn bad_json_is_an_error() {
    let schema = of::<ConfigMap>().expect("schema");
    for body in ["", "{", r#"{"data":}"#, "{} {}", "[1,]"] {
        assert!(
            decode(&schema, body.as_bytes(), Format::Json).is_err(),
            "{body:?}"
        );
    }
    let deep = format!("{}{}", r#"{"data":"#.repeat(10_000), "1");
    assert!(
        decode(&schema, deep.as_bytes(), Format::Json).is_err(),
        "nesting is bounded"
    );
}

// R-RES-031, R-RES-190: each kind of mismatch names the innermost struct, the JSON field path
// without list indices, and the Go type, as sigs.k8s.io/json does.
#[test]
fn type_errors_name_the_field_and_go_type() {
    let d = of::<Deployment>().expect("schema");
    let containers = r#"{"spec":{"template":{"spec":{"containers":"#;
    let cases = [
        (
            r#"{"spec":{"replicas":"2"}}"#.to_owned(),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            r#"{"spec":{"replicas":1.5}}"#.to_owned(),
            "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            r#"{"spec":{"replicas":3000000000}}"#.to_owned(),
            "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            r#"{"spec":{"paused":"yes"}}"#.to_owned(),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool",
        ),
        (
            format!(r#"{containers}[{{"name":"a"}},{{"name":"b","args":["x",1]}}]}}}}}}}}"#),
            "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.args of type string",
        ),
        (
            format!(r#"{containers}[{{"name":"a","ports":{{"containerPort":80}}}}]}}}}}}}}"#),
            "json: cannot unmarshal object into Go struct field Container.spec.template.spec.containers.ports of type []v1.ContainerPort",
        ),
        (
            format!(r#"{containers}["nginx"]}}}}}}}}"#),
            "json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers of type v1.Container",
        ),
        (
            r#"{"metadata":{"labels":{"a":1}}}"#.to_owned(),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
        ),
        (
            r#"{"metadata":{"labels":["a"]}}"#.to_owned(),
            "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string",
        ),
        (
            r#"{"spec":{"strategy":{"rollingUpdate":{"maxSurge":true}}}}"#.to_owned(),
            "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type intstr.IntOrString",
        ),
        (
            r#"{"metadata":{"creationTimestamp":5}}"#.to_owned(),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type v1.Time",
        ),
        (
            r#"{"spec":{"minReadySeconds":1,"progressDeadlineSeconds":true}}"#.to_owned(),
            "json: cannot unmarshal bool into Go struct field DeploymentSpec.spec.progressDeadlineSeconds of type int32",
        ),
    ];
    for (body, want) in cases {
        assert_eq!(type_error(&d, &body), want, "{body}");
    }
    let resources = format!(
        r#"{containers}[{{"name":"a","resources":{{"limits":{{"cpu":"lots"}}}}}}]}}}}}}}}"#
    );
    assert!(type_error(&d, &resources).starts_with("quantities must match the regular expression"));
    let secret = of::<Secret>().expect("schema");
    assert_eq!(
        type_error(&secret, r#"{"data":{"x":"not base64!"}}"#),
        "illegal base64 data at input byte 3"
    );
}

// R-RES-190: the first type error wins and the rest of the body is still parsed (a later
// syntax error is a syntax error).
#[test]
fn the_first_type_error_wins_and_syntax_is_checked_to_the_end() {
    let d = of::<Deployment>().expect("schema");
    assert_eq!(
        type_error(&d, r#"{"spec":{"replicas":"a","paused":"b"}}"#),
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    );
    assert!(decode(&d, br#"{"spec":{"replicas":"a"},"x":}"#, Format::Json).is_err());
}

// R-RES-031: the value is what the typed round trip wrote: schema order, null unset,
// required fields at their zero value, numbers of quantities as text, times in UTC.
#[test]
fn the_value_is_the_typed_round_trips() {
    let d = of::<Deployment>().expect("schema");
    let decoded = json(
        &d,
        r#"{"spec":{"template":{"spec":{"containers":[{"image":"i","resources":{"limits":{"cpu":2}}},null]}},
            "paused":null,"replicas":3},"metadata":{"creationTimestamp":"2026-01-01T01:00:00+01:00"}}"#,
    );
    assert_eq!(decoded.type_error, None);
    assert_eq!(
        decoded.value,
        json!({
            "metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": 3, "selector": {}, "template": {"spec": {"containers": [
                {"image": "i", "name": "", "resources": {"limits": {"cpu": "2"}}},
                {"name": ""}
            ]}}}
        })
    );
    let keys: Vec<&String> = decoded.value["spec"]
        .as_object()
        .expect("object")
        .keys()
        .collect();
    assert_eq!(keys, ["replicas", "selector", "template"], "schema order");
    let e = of::<Event>().expect("schema");
    let event = json(&e, r#"{"eventTime":"2026-01-01T00:00:00.5Z"}"#);
    assert_eq!(event.value["eventTime"], "2026-01-01T00:00:00.500000Z");
}

fn yaml(schema: &Schema, body: &str) -> Decoded {
    decode(schema, body.as_bytes(), Format::Yaml).expect("parses")
}

// R-RES-186, R-RES-188, R-RES-189: YAML duplicates by line first, then unknown fields in key
// order, as Kubernetes' YAML-to-JSON conversion reports them.
#[test]
fn yaml_duplicates_carry_lines_and_unknown_fields_sort() {
    let schema = of::<Deployment>().expect("schema");
    let body = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: dupename
  name: d
  unknownMeta: metaVal
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  paused: true
  paused: false
  selector:
    matchLabels:
      app: nginx
  template:
    spec:
      containers:
      - name: nginx
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never
";
    let decoded = yaml(&schema, body);
    let dup = |line, key: &str| Finding::YamlDuplicate {
        line,
        key: key.into(),
    };
    assert_eq!(
        decoded.findings,
        [
            dup(5, "name"),
            dup(10, "unknownDupe"),
            dup(12, "paused"),
            dup(22, "imagePullPolicy"),
            Finding::Unknown("metadata.unknownMeta".into()),
            Finding::Unknown("spec.template.spec.containers[0].unknownNested".into()),
            Finding::Unknown("spec.unknown1".into()),
            Finding::Unknown("spec.unknownDupe".into()),
        ]
    );
    assert_eq!(decoded.value["metadata"]["name"], "d");
    assert_eq!(decoded.value["spec"]["paused"], false);
    assert_eq!(
        decoded.value["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "Never"
    );
}

// R-RES-190: YAML scalars are typed as YAML types them, then checked like JSON; a second
// document or bad syntax is a syntax error.
#[test]
fn yaml_type_errors_and_syntax() {
    let schema = of::<Deployment>().expect("schema");
    assert_eq!(
        yaml(&schema, "spec:\n  replicas: \"2\"\n").type_error,
        Some(TypeError(
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32".into()
        ))
    );
    assert_eq!(
        yaml(&schema, "spec:\n  replicas: 2\n").value["spec"]["replicas"],
        2
    );
    for bad in ["a: b\n---\nc: d\n", "a: [\n", "a: b\n a: c\n"] {
        let e = decode(&schema, bad.as_bytes(), Format::Yaml).expect_err(bad);
        assert!(
            e.to_string()
                .starts_with("error converting YAML to JSON: yaml: "),
            "{e}"
        );
    }
}

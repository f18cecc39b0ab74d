//! The decoder on real kinds' schemas: findings and their paths, type errors worded as
//! Kubernetes words them, YAML, and the value the typed round trip used to produce.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;

use super::super::MAX_EXCERPT_BYTES;
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

/// A CRD body whose `openAPIV3Schema.properties` (a map of schemas) holds one entry under
/// `key` with `fields` unknown fields.
fn crd_with_unknown_fields(key: &str, fields: usize) -> String {
    let unknown: Vec<String> = (0..fields).map(|i| format!(r#""u{i}":0"#)).collect();
    format!(
        r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{{"properties":{{"{key}":{{{}}}}}}}}}}}]}}}}"#,
        unknown.join(",")
    )
}

// R-RES-188: paths are built only for the findings kept, each cut to an excerpt around the
// field's name, however long the key above it; repeats cost no path.
#[test]
fn paths_below_a_long_key_are_excerpts() {
    let crd = of::<CustomResourceDefinition>().expect("schema");
    let key = "k".repeat(1_000_000);
    let decoded = json(&crd, &crd_with_unknown_fields(&key, 1000));
    assert_eq!(decoded.findings.len(), MAX_FINDINGS);
    for (i, finding) in decoded.findings.iter().enumerate() {
        let Finding::Unknown(path) = finding else {
            panic!("{finding:?}");
        };
        assert!(path.len() <= MAX_EXCERPT_BYTES, "{path}");
        assert!(path.starts_with("spec.versions[0].schema.openAPIV3Schema.properties.kkk"));
        assert!(path.ends_with(&format!("kkk.u{i}")), "{path}");
        assert!(path.contains("..."), "{path}");
    }
    assert!(
        decoded.value["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"][&key]
            .is_object()
    );

    let short = json(&crd, &crd_with_unknown_fields("a", 2));
    assert_eq!(
        short.findings,
        [
            Finding::Unknown("spec.versions[0].schema.openAPIV3Schema.properties.a.u0".into()),
            Finding::Unknown("spec.versions[0].schema.openAPIV3Schema.properties.a.u1".into()),
        ]
    );
    let repeated = format!("{{{}}}", [r#""x":1"#; 10_000].join(","));
    assert_eq!(
        json(&crd, &repeated).findings,
        [Finding::Unknown("x".into())]
    );
}

// R-RES-189: a YAML duplicate names its key as an excerpt too.
#[test]
fn yaml_duplicate_keys_are_excerpts() {
    let schema = of::<ConfigMap>().expect("schema");
    let key = "k".repeat(10_000);
    // An explicit key: YAML allows an implicit one at most 1,024 characters.
    let decoded = yaml(
        &schema,
        &format!("data:\n  ? {key}\n  : a\n  ? {key}\n  : b\n"),
    );
    let [Finding::YamlDuplicate { line: 4, key }] = decoded.findings.as_slice() else {
        panic!("{:?}", decoded.findings);
    };
    assert!(
        key.len() <= MAX_EXCERPT_BYTES && key.contains("..."),
        "{key}"
    );
}

// R-RES-031: an integer field reads a JSON number literal as Go's decoder does: `-0` is 0,
// a fraction, an exponent or an out-of-range literal is a type error quoting the literal.
#[test]
fn json_integer_literals_read_as_go_reads_them() {
    let d = of::<Deployment>().expect("schema");
    let replicas = |n: &str| json(&d, &format!(r#"{{"spec":{{"replicas":{n}}}}}"#));
    assert_eq!(replicas("-0").value["spec"]["replicas"], 0);
    assert_eq!(replicas("-0").type_error, None);
    assert_eq!(replicas("7").value["spec"]["replicas"], 7);
    for (literal, want) in [
        ("-0.0", "-0.0"),
        ("1e2", "1e2"),
        ("1.0", "1.0"),
        ("3000000000", "3000000000"),
    ] {
        assert_eq!(
            replicas(literal).type_error,
            Some(TypeError(format!(
                "json: cannot unmarshal number {want} into Go struct field DeploymentSpec.spec.replicas of type int32"
            ))),
            "{literal}"
        );
    }
    let generation = json(&d, r#"{"metadata":{"generation":99999999999999999999}}"#);
    assert_eq!(
        generation.type_error,
        Some(TypeError(
            "json: cannot unmarshal number 99999999999999999999 into Go struct field ObjectMeta.metadata.generation of type int64".into()
        ))
    );
    let long = format!("0.{}1", "0".repeat(10_000));
    let e = replicas(&long).type_error.expect("a type error").0;
    assert!(e.len() < 300, "the literal is an excerpt: {e}");
    let surge = |v: &str| {
        json(
            &d,
            &format!(r#"{{"spec":{{"strategy":{{"rollingUpdate":{{"maxSurge":{v}}}}}}}}}"#),
        )
    };
    assert_eq!(
        surge("-0").value["spec"]["strategy"]["rollingUpdate"]["maxSurge"],
        0
    );
    assert_eq!(
        surge(r#""25%""#).value["spec"]["strategy"]["rollingUpdate"]["maxSurge"],
        "25%"
    );
    assert_eq!(surge("null").type_error, None);
    assert_eq!(
        surge("[1]").type_error,
        Some(TypeError(
            "json: cannot unmarshal array into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type intstr.IntOrString".into()
        ))
    );
}

// R-RES-031: a YAML float at an integer field is read as the JSON Kubernetes converts it to
// (Go writes an integral float without a fraction), so `1e2` and `-0.0` are integers there.
#[test]
fn yaml_floats_at_integer_fields_read_as_their_json() {
    let d = of::<Deployment>().expect("schema");
    let replicas = |n: &str| yaml(&d, &format!("spec:\n  replicas: {n}\n"));
    for (literal, want) in [("1e2", 100), ("-0.0", 0), ("-0", 0), ("4.0", 4)] {
        let decoded = replicas(literal);
        assert_eq!(decoded.type_error, None, "{literal}");
        assert_eq!(decoded.value["spec"]["replicas"], want, "{literal}");
    }
    for (literal, want) in [
        ("2.5", "2.5"),
        ("3e9", "3000000000"),
        ("1e21", "1e+21"),
        ("1e-7", "1e-7"),
    ] {
        assert_eq!(
            replicas(literal).type_error,
            Some(TypeError(format!(
                "json: cannot unmarshal number {want} into Go struct field DeploymentSpec.spec.replicas of type int32"
            ))),
            "{literal}"
        );
    }
}

// Go's encoding/json decodes a lone surrogate escape to U+FFFD; a pair decodes as usual.
#[test]
fn lone_surrogate_escapes_decode_to_the_replacement_character() {
    let cm = of::<ConfigMap>().expect("schema");
    let decoded = json(
        &cm,
        r#"{"data":{"\ud800k":"a\udc00","pair":"\ud83d\ude00","mixed":"\ud800\ud800\udc00"}}"#,
    );
    assert_eq!(
        decoded.value["data"],
        json!({"\u{FFFD}k": "a\u{FFFD}", "pair": "😀", "mixed": "\u{FFFD}\u{10000}"})
    );
}

fn nested_json(depth: usize, leaf: &str) -> String {
    format!("{}{leaf}{}", "[".repeat(depth), "]".repeat(depth))
}

fn nested_yaml(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

// The parsers stop one level past MAX_NESTING_DEPTH everywhere in a body, dropped values
// included, and say so.
#[test]
fn nesting_past_the_limit_is_a_syntax_error() {
    let cm = of::<ConfigMap>().expect("schema");
    let any = of::<ControllerRevision>().expect("schema");
    // A document's root object is level 1, so its fields may hold MAX - 1 more levels.
    let inner = MAX_NESTING_DEPTH - 1;
    for (schema, field) in [(&cm, "unknown"), (&cm, "data"), (&any, "data")] {
        let at = format!(r#"{{"{field}":{}}}"#, nested_json(inner, "1"));
        assert!(
            decode(schema, at.as_bytes(), Format::Json).is_ok(),
            "{field} at the limit"
        );
        let past = format!(r#"{{"{field}":{}}}"#, nested_json(inner + 1, "1"));
        let e = decode(schema, past.as_bytes(), Format::Json).expect_err("past the limit");
        assert_eq!(
            e.to_string(),
            format!(
                "exceeded the maximum nesting depth of {MAX_NESTING_DEPTH} at line 1 column {}",
                field.len() + 4 + inner + 1
            ),
            "{field}"
        );
        let at = format!("{field}: {}\n", nested_yaml(inner));
        assert!(
            decode(schema, at.as_bytes(), Format::Yaml).is_ok(),
            "{field} YAML at the limit"
        );
        let past = format!("{field}: {}\n", nested_yaml(inner + 1));
        let e = decode(schema, past.as_bytes(), Format::Yaml).expect_err("YAML past the limit");
        assert_eq!(
            e.to_string(),
            format!(
                "error converting YAML to JSON: yaml: line 1: exceeded the maximum nesting depth of {MAX_NESTING_DEPTH}"
            )
        );
    }
}

// YAML errors in go-yaml's words, with the line, never the parser's hints to Rust callers;
// the alias, node and nesting budgets are kept.
#[test]
fn yaml_errors_read_as_kubernetes_words_them() {
    let cm = of::<ConfigMap>().expect("schema");
    let error = |body: &str| {
        decode(&cm, body.as_bytes(), Format::Yaml)
            .expect_err(body)
            .to_string()
    };
    assert_eq!(
        error("data:\n  ~: a\n"),
        "error converting YAML to JSON: yaml: line 2: unsupported map key: null"
    );
    let laughs: String = (0..8)
        .map(|i| {
            let refs = if i == 0 {
                vec!["\"x\"".to_owned(); 9]
            } else {
                vec![format!("*a{}", i - 1); 9]
            };
            format!("a{i}: &a{i} [{}]\n", refs.join(","))
        })
        .collect();
    // Expanded aliases count as nodes: a billion laughs stops at the node budget.
    assert!(
        error(&laughs).ends_with("document contains more than the maximum of 250000 nodes"),
        "{}",
        error(&laughs)
    );
    let aliases = format!("a: &a x\ndata: [{}]\n", vec!["*a"; 200].join(","));
    assert!(
        error(&aliases).ends_with(": document contains excessive aliasing"),
        "{}",
        error(&aliases)
    );
    let nodes = format!("data: [{}]\n", vec!["1"; 300_000].join(","));
    assert!(
        error(&nodes).ends_with("document contains more than the maximum of 250000 nodes"),
        "{}",
        error(&nodes)
    );
    for body in [
        "data:\n  ~: a\n",
        "a: [\n",
        "a: b\n a: c\n",
        "a: b\n---\nc: d\n",
        &laughs,
        &aliases,
        &nodes,
        "a: *nope\n",
        "data: !!binary '!!'\n",
        "? [a]\n: b\n",
    ] {
        let e = error(body);
        assert!(
            e.starts_with("error converting YAML to JSON: yaml: "),
            "{e}"
        );
        for internal in ["Option<", "Options", "Breach", "{ ", "::"] {
            assert!(!e.contains(internal), "{e}");
        }
    }
}

//! The walker on real kinds' schemas, and a seeded fuzz loop over arbitrary and mutated
//! bodies: it never panics, fails exactly when the body is not JSON, and keeps every known
//! value as sent.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Value;
use serde_json::json;

use super::super::of;
use super::*;

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
    let walked = walk(&schema, deployment_body().as_bytes()).expect("json");
    assert_eq!(
        walked.findings,
        [
            Finding::Unknown("foo".into()),
            Finding::Duplicate("metadata.labels.x".into()),
            Finding::Duplicate("metadata.name".into()),
            Finding::Unknown("spec.template.spec.containers[1].imagePullPolice".into()),
            Finding::Unknown("spec.template.spec.containers[1].ports[0].bogus".into()),
        ]
    );
    let v = &walked.value;
    assert!(v.get("foo").is_none(), "unknown fields are dropped");
    assert_eq!(v["metadata"]["name"], "b", "the last duplicate counts");
    assert_eq!(v["metadata"]["labels"], json!({"x": "2"}));
    let c = &v["spec"]["template"]["spec"]["containers"][1];
    assert_eq!(
        c,
        &json!({"name":"d","image":"i","ports":[{"containerPort":80}]})
    );
}

// R-RES-188: embedded and free-form values (RawExtension) keep everything, unreported; a
// value of the wrong type is kept as sent for the typed decode to refuse (R-RES-190).
#[test]
fn free_form_values_and_type_mismatches_are_not_judged() {
    let schema = of::<ControllerRevision>().expect("schema");
    let body = r#"{"revision":1,"data":{"any":{"thing":[1,{"a":1,"a":2}]}},"metadata":"x"}"#;
    let walked = walk(&schema, body.as_bytes()).expect("json");
    assert_eq!(walked.findings, []);
    assert_eq!(walked.value["metadata"], "x");
    assert_eq!(walked.value["data"]["any"]["thing"][1], json!({"a": 2}));

    let schema = of::<ConfigMap>().expect("schema");
    let walked = walk(&schema, br#"{"data":["a",{"b":1}],"immutable":{"c":1}}"#).expect("json");
    assert_eq!(walked.findings, []);
    assert_eq!(walked.value["data"], json!(["a", {"b": 1}]));
}

// R-RES-189: a field given three times is one finding; at most 100 are kept, as upstream.
#[test]
fn findings_are_deduplicated_and_capped() {
    let schema = of::<ConfigMap>().expect("schema");
    let walked = walk(
        &schema,
        br#"{"x":1,"x":2,"x":3,"data":{"a":"","a":"","a":""}}"#,
    )
    .expect("json");
    assert_eq!(
        walked.findings,
        [
            Finding::Unknown("x".into()),
            Finding::Duplicate("x".into()),
            Finding::Duplicate("data.a".into()),
        ]
    );
    let many: Vec<String> = (0..150).map(|i| format!(r#""u{i}":0"#)).collect();
    let walked = walk(&schema, format!("{{{}}}", many.join(",")).as_bytes()).expect("json");
    assert_eq!(walked.findings.len(), 100);
    assert_eq!(walked.findings[99], Finding::Unknown("u99".into()));
}

#[test]
fn bad_json_is_an_error() {
    let schema = of::<ConfigMap>().expect("schema");
    for body in ["", "{", r#"{"data":}"#, "{} {}", "[1,]"] {
        assert!(walk(&schema, body.as_bytes()).is_err(), "{body:?}");
    }
    let deep = format!("{}{}", r#"{"data":"#.repeat(10_000), "1");
    assert!(
        walk(&schema, deep.as_bytes()).is_err(),
        "nesting is bounded"
    );
}

fn random_value(rng: &mut StdRng, depth: u32) -> Value {
    const KEYS: [&str; 8] = [
        "metadata",
        "name",
        "spec",
        "containers",
        "data",
        "labels",
        "x",
        "",
    ];
    match rng.random_range(0..if depth > 4 { 4 } else { 6 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.random()),
        2 => json!(rng.random_range(-5_i64..5) as f64 / 2.0),
        3 => Value::String(KEYS[rng.random_range(0..KEYS.len())].to_owned()),
        4 => (0..rng.random_range(0..4))
            .map(|_| random_value(rng, depth + 1))
            .collect(),
        _ => Value::Object(
            (0..rng.random_range(0..4))
                .map(|_| {
                    let k = KEYS[rng.random_range(0..KEYS.len())].to_owned();
                    (k, random_value(rng, depth + 1))
                })
                .collect(),
        ),
    }
}

/// `body` with one random edit: a cut, a duplicated span, or a random byte.
fn mutate(rng: &mut StdRng, body: &str) -> Vec<u8> {
    let mut bytes = body.as_bytes().to_vec();
    let at = rng.random_range(0..=bytes.len());
    match rng.random_range(0..3) {
        0 => bytes.truncate(at),
        1 => {
            let end = rng.random_range(at..=bytes.len());
            let span = bytes[at..end].to_vec();
            bytes.splice(at..at, span);
        }
        _ => {
            const BYTES: &[u8] = b"{}[],:\"a1 ";
            bytes.insert(at, BYTES[rng.random_range(0..BYTES.len())]);
        }
    }
    bytes
}

/// The walk fails exactly when serde's own parse does, and without unknown fields its value
/// is serde's (the last of duplicates counts in both).
fn check(schema: &Schema, body: &[u8]) {
    let parsed = serde_json::from_slice::<Value>(body);
    match walk(schema, body) {
        Err(_) => assert!(parsed.is_err(), "{}", String::from_utf8_lossy(body)),
        Ok(walked) => {
            let parsed = parsed.expect("walk accepted it, so must serde");
            let unknown = walked
                .findings
                .iter()
                .any(|f| matches!(f, Finding::Unknown(_)));
            if !unknown {
                assert_eq!(walked.value, parsed, "{}", String::from_utf8_lossy(body));
            }
        }
    }
}

// R-RES-185..189: the walker never panics, whatever the body.
#[test]
fn never_panics_on_arbitrary_or_mutated_bodies() {
    let schema = of::<Deployment>().expect("schema");
    let mut rng = StdRng::seed_from_u64(5);
    let stub = deployment_body();
    for _ in 0..3_000 {
        let body = random_value(&mut rng, 0).to_string();
        check(&schema, body.as_bytes());
        check(&schema, &mutate(&mut rng, &body));
        check(&schema, &mutate(&mut rng, &stub));
    }
}

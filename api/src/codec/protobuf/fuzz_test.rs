//! Hostile bytes through the decoder: random and mutated bodies never panic, and every
//! failure is a typed error that becomes a 400 naming the problem.

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::json;

use super::*;

fn assert_clear(result: Result<Value, ProtobufError>) {
    if let Err(e) = result {
        let ApiError::BadRequest(message) = ApiError::from(e) else {
            panic!("a decode error that is not a 400");
        };
        assert!(message.contains("Protobuf"), "{message}");
    }
}

// R-RES-056: random and mutated bodies are refused with a clear error, never a panic.
#[test]
fn random_and_mutated_bodies_never_panic() {
    let mut rng = StdRng::seed_from_u64(56);
    let seeds = [
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": "b"}},
            "data": {"k": "v"}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "image": "i", "ports": [{"containerPort": 80}],
             "resources": {"limits": {"cpu": "1"}}}],
            "volumes": [{"name": "v", "emptyDir": {}}]}}),
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "w"}, "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema":
            {"type": "object", "not": {"type": "string"}, "default": {"a": 1}}}}]}}),
    ];
    let valid: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| encode_object(Flavor::Kubernetes, s).unwrap())
        .collect();
    for round in 0..4000 {
        let mut bytes = valid[round % valid.len()].clone();
        match round % 4 {
            0 => {
                let at = rng.random_range(4..bytes.len());
                bytes[at] = rng.random();
            }
            1 => bytes.truncate(rng.random_range(0..bytes.len())),
            2 => {
                let at = rng.random_range(4..bytes.len());
                let junk: Vec<u8> = (0..rng.random_range(1..12)).map(|_| rng.random()).collect();
                bytes.splice(at..at, junk);
            }
            _ => {
                bytes.truncate(4);
                bytes.extend((0..rng.random_range(0..64)).map(|_| rng.random::<u8>()));
            }
        }
        assert_clear(decode_object(Flavor::Kubernetes, &bytes));
    }
}

// R-RES-056: a body without the envelope prefix is refused with 400.
#[test]
fn a_wrong_or_missing_prefix_is_refused() {
    for body in [&b""[..], b"k8s", b"{\"kind\":\"Pod\"}", b"k8s\x01\x0a\x00"] {
        let err = decode_object(Flavor::Kubernetes, body).unwrap_err();
        assert_eq!(err, ProtobufError::MissingPrefix);
        assert!(
            matches!(ApiError::from(err), ApiError::BadRequest(m) if m.contains("6b 38 73 00"))
        );
    }
}

// R-RES-056: lengths are checked against the input left, and nesting is bounded.
#[test]
fn lengths_and_nesting_are_bounded() {
    // A field claiming a length far beyond the body.
    let mut bytes = PREFIX.to_vec();
    bytes.extend([0x12, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert!(matches!(
        decode_object(Flavor::Kubernetes, &bytes),
        Err(ProtobufError::Malformed(_))
    ));
    // JSONSchemaProps nested through `not` far deeper than the nesting budget.
    let id =
        message_named("apiextensions_apiserver.pkg.apis.apiextensions.v1.JsonSchemaProps").unwrap();
    let fields = super::descriptor::message(id).fields;
    let not = fields.iter().find(|f| f.json == "not").unwrap().tag;
    let mut inner = Vec::new();
    for _ in 0..1000 {
        let mut outer = Vec::new();
        wire::put_bytes(&mut outer, not, &inner);
        inner = outer;
    }
    assert_eq!(decode_message(id, &inner), Err(ProtobufError::TooDeep));
}

use super::descriptor::message_named;

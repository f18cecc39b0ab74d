//! Patching never panics: seeded random JSON bodies (directives included) of every patch
//! type, applied to random objects with and without a schema, end in a value or an error.

use k8s_openapi::api::apps::v1::Deployment;
use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::PatchType;
use super::Shape;
use super::apply;
use crate::schema;

/// Keys the generator draws from: fields with markers, directives, and plain names.
const KEYS: &[&str] = &[
    "spec",
    "template",
    "containers",
    "name",
    "env",
    "ports",
    "containerPort",
    "volumes",
    "finalizers",
    "metadata",
    "strategy",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$setElementOrder/env",
    "$deleteFromPrimitiveList/finalizers",
    "op",
    "path",
    "value",
    "from",
    "x",
];
const WORDS: &[&str] = &[
    "replace", "delete", "merge", "add", "remove", "test", "/spec", "a",
];

fn value(rng: &mut StdRng, depth: u32) -> Value {
    let pick = if depth == 0 {
        rng.random_range(0..4)
    } else {
        rng.random_range(0..6)
    };
    match pick {
        0 => Value::Null,
        1 => Value::Bool(rng.random()),
        2 => json!(rng.random_range(-3..100)),
        3 => Value::String(WORDS[rng.random_range(0..WORDS.len())].to_owned()),
        4 => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| value(rng, depth - 1))
                .collect(),
        ),
        _ => {
            let mut m = Map::new();
            for _ in 0..rng.random_range(0..5) {
                let key = KEYS[rng.random_range(0..KEYS.len())];
                m.insert(key.to_owned(), value(rng, depth - 1));
            }
            Value::Object(m)
        }
    }
}

#[test]
fn patching_random_bodies_never_panics() {
    let schema = schema::of::<Deployment>().expect("compiles");
    let mut rng = StdRng::seed_from_u64(0x5eed_0005);
    let kinds = [PatchType::Json, PatchType::Merge, PatchType::Strategic];
    for round in 0..3000 {
        let current = value(&mut rng, 5);
        let body = value(&mut rng, 5).to_string();
        for kind in kinds {
            for shape in [Shape::of(&schema), Shape::untyped()] {
                // Either outcome is fine; reaching here without a panic is the property.
                let _ = apply(kind, current.clone(), body.as_bytes(), shape);
            }
        }
        let mut bytes = body.into_bytes();
        if !bytes.is_empty() {
            let at = rng.random_range(0..bytes.len());
            bytes.truncate(at);
        }
        let _ = apply(kinds[round % 3], current, &bytes, Shape::untyped());
    }
}

//! CBOR (feature `CBORServingAndStorage`): objects of every built-in kind generated from their
//! schemas round-trip JSON -> CBOR -> JSON and decode through the schema pipeline exactly as
//! their JSON does.

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use apiary_api::codec::cbor;
use apiary_api::registry::builtin::rows;
use apiary_api::schema::Format;
use apiary_api::schema::Node;
use apiary_api::schema::NodeId;
use apiary_api::schema::Scalar;
use apiary_api::schema::Schema;

/// How many objects are generated per kind.
const OBJECTS_PER_KIND: usize = 8;

/// How deep generated objects nest before every optional part is left out.
const MAX_GENERATED_DEPTH: usize = 12;

/// A random value of node `id` of `schema`: some of an object's properties (its required ones
/// always), a few map entries and array items, scalars of the right type in their canonical
/// form, small free-form values where anything goes.
fn generate(schema: &Schema, id: NodeId, rng: &mut StdRng, depth: usize) -> Value {
    let deep = depth >= MAX_GENERATED_DEPTH;
    match schema.node(id) {
        Node::Object(object) => {
            let mut map = Map::new();
            for (name, child) in &object.properties {
                let required = object.required.contains(name);
                if required || (!deep && rng.random_ratio(1, 2)) {
                    map.insert(name.clone(), generate(schema, *child, rng, depth + 1));
                }
            }
            Value::Object(map)
        }
        Node::Map(child) => Value::Object(
            (0..if deep { 0 } else { rng.random_range(0..3) })
                .map(|i| {
                    let key = format!("k{i}-{}", rng.random::<u16>());
                    (key, generate(schema, *child, rng, depth + 1))
                })
                .collect(),
        ),
        Node::Array(child) => Value::Array(
            (0..if deep { 0 } else { rng.random_range(0..3) })
                .map(|_| generate(schema, *child, rng, depth + 1))
                .collect(),
        ),
        Node::Scalar(scalar) => self::scalar(*scalar, rng),
        Node::Any => json!({"free": [1, -2, 0.5, "form", true, null], "n": {"x": "y"}}),
    }
}

fn scalar(scalar: Scalar, rng: &mut StdRng) -> Value {
    match scalar {
        Scalar::String => json!(
            ["a", "Zed", "with space", "\u{e9}t\u{e9}", "\u{1f600}", ""][rng.random_range(0..6)]
        ),
        Scalar::Int32 => json!(rng.random::<i32>()),
        Scalar::Int64 => json!(rng.random::<i64>() >> rng.random_range(0..63)),
        Scalar::Number => json!(f64::from(rng.random_range(-4000..4000)) / 16.0 + 0.5),
        Scalar::Bool => json!(rng.random::<bool>()),
        Scalar::IntOrString if rng.random() => json!(rng.random_range(0..65536)),
        Scalar::IntOrString => json!("25%"),
        Scalar::Quantity => json!(["100m", "1Gi", "2", "1500k"][rng.random_range(0..4)]),
        Scalar::Time { micro: false } => json!("2026-11-26T10:17:31Z"),
        Scalar::Time { micro: true } => json!("2026-11-26T10:17:31.123456Z"),
        Scalar::Bytes => json!("aGVsbG8="),
    }
}

// R-RES-127: every built-in kind's objects (generated from its schema) encode to CBOR and
// decode back to the same JSON, and a CBOR body decodes through the kind's schema to the same
// value, findings and type errors as the JSON body.
#[test]
fn objects_of_every_built_in_kind_round_trip_through_cbor() {
    let mut rng = StdRng::seed_from_u64(16);
    let mut kinds = 0;
    for row in rows() {
        let schema = (row.schema())().expect("schema");
        kinds += 1;
        for _ in 0..OBJECTS_PER_KIND {
            let mut object = generate(&schema, schema.root(), &mut rng, 0);
            if let Value::Object(map) = &mut object {
                map.insert("kind".into(), json!(row.kind));
                map.insert("apiVersion".into(), json!(row.version));
            }
            let json_text = object.to_string();
            let encoded = cbor::encode_json(json_text.as_bytes()).expect("JSON");
            assert_eq!(encoded[..3], cbor::SELF_DESCRIBED);
            assert_eq!(
                cbor::decode(&encoded).expect("CBOR"),
                object,
                "{}",
                row.kind
            );
            let transcoded = cbor::decode_to_json(&encoded).expect("CBOR");
            let from_json = apiary_api::schema::decode(&schema, json_text.as_bytes(), Format::Json);
            let from_cbor = apiary_api::schema::decode(&schema, &transcoded, Format::Json);
            assert_eq!(
                from_cbor.expect("decodes"),
                from_json.expect("decodes"),
                "{}",
                row.kind
            );
        }
    }
    assert!(kinds > 50, "{kinds} kinds");
}

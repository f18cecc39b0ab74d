//! Structured fuzzing of the patch engines: seeded random objects patched by JSON Patches
//! aimed at their own paths (copy and move chains, copies of a value into itself, nesting
//! bombs), by merge and strategic merge patches with directives, near the nesting limit and
//! with mangled bytes; and the checked-in corpus (`tests/corpus/patch`: the issue's
//! reproducers and their variants). Properties: no panic; a patched value nests within
//! [`MAX_NESTING_DEPTH`] and is no larger than its inputs and the copy budget allow; an error
//! is a short message.

use std::path::Path;

use k8s_openapi::api::apps::v1::Deployment;
use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::JSON_PATCH_MAX_COPY_BYTES;
use super::PatchError;
use super::PatchType;
use super::Shape;
use super::apply;
use crate::limits::MAX_NESTING_DEPTH;
use crate::limits::nesting_depth;
use crate::schema;

/// The random rounds one run tries: each patches a fresh object with every engine, with and
/// without a schema, and once with mangled bytes. Sized so the test takes a few seconds in
/// a debug build, in CI; raise it locally to search longer.
const FUZZ_SEEDS: u64 = 1500;

/// The longest error message any patch may answer: errors quote excerpts, never the request.
const MAX_MESSAGE_BYTES: usize = 4096;

/// Keys the generator draws from: fields with markers, directives, and plain names (one
/// with the characters a pointer escapes).
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
    "a~b/c",
];
const WORDS: &[&str] = &[
    "replace", "delete", "merge", "add", "remove", "test", "/spec", "a",
];
const OPS: &[&str] = &["add", "remove", "replace", "move", "copy", "test"];

fn pick<'a>(rng: &mut StdRng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

fn value(rng: &mut StdRng, depth: u32) -> Value {
    let pick_kind = if depth == 0 {
        rng.random_range(0..4)
    } else {
        rng.random_range(0..6)
    };
    match pick_kind {
        0 => Value::Null,
        1 => Value::Bool(rng.random()),
        2 => json!(rng.random_range(-3..100)),
        3 => Value::String(pick(rng, WORDS).to_owned()),
        4 => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| value(rng, depth - 1))
                .collect(),
        ),
        _ => {
            let mut m = Map::new();
            for _ in 0..rng.random_range(0..5) {
                m.insert(pick(rng, KEYS).to_owned(), value(rng, depth - 1));
            }
            Value::Object(m)
        }
    }
}

/// A chain of maps `depth` deep under `key`.
fn chain(depth: usize, key: &str) -> Value {
    (0..depth).fold(json!(1), |inner, _| json!({ key: inner }))
}

/// The JSON Pointers of `doc`'s locations, breadth first, at most 64.
fn locations(doc: &Value) -> Vec<String> {
    let mut found = vec![String::new()];
    let mut at = 0;
    while at < found.len() && found.len() < 64 {
        let path = found[at].clone();
        let children: Vec<String> = match super::json_pointer::tokens(&path)
            .and_then(|t| super::json_pointer::get(doc, &t))
        {
            Some(Value::Object(map)) => map
                .keys()
                .map(|k| format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")))
                .collect(),
            Some(Value::Array(items)) => (0..items.len()).map(|i| format!("{path}/{i}")).collect(),
            _ => Vec::new(),
        };
        found.extend(children);
        at += 1;
    }
    found
}

/// A path for an operation on `doc`: an existing location, a new child of one, a list's
/// end, or nonsense.
fn target(rng: &mut StdRng, places: &[String]) -> String {
    let place = places[rng.random_range(0..places.len())].clone();
    match rng.random_range(0..6) {
        0 | 1 => place,
        2 => format!(
            "{place}/{}",
            pick(rng, KEYS).replace('~', "~0").replace('/', "~1")
        ),
        3 => format!("{place}/-"),
        4 => format!("{place}/{}", rng.random_range(0..4)),
        _ => pick(rng, &["", "/", "x", "/~", "/a/b/c", "/-/0"]).to_owned(),
    }
}

/// A JSON Patch aimed at `doc`: random operations on its paths, and now and then a chain of
/// copies of a value into itself or into its own deepest leaf.
fn json_patch(rng: &mut StdRng, doc: &Value) -> Value {
    let places = locations(doc);
    let mut ops = Vec::new();
    for _ in 0..rng.random_range(0..8) {
        let op = pick(rng, OPS);
        let mut o = json!({"op": op, "path": target(rng, &places)});
        if matches!(op, "move" | "copy") {
            o["from"] = json!(places[rng.random_range(0..places.len())]);
        }
        if matches!(op, "add" | "replace" | "test") {
            o["value"] = value(rng, 3);
        }
        ops.push(o);
    }
    match rng.random_range(0..4) {
        0 => {
            let from = places[rng.random_range(0..places.len())].clone();
            for i in 0..rng.random_range(1..40) {
                let path = if rng.random() {
                    format!("{from}/c{i}")
                } else {
                    format!("{from}/-")
                };
                ops.push(json!({"op": "copy", "from": from, "path": path}));
            }
        }
        1 => {
            let start = rng.random_range(1..40);
            ops.push(json!({"op": "add", "path": "/zz", "value": chain(start, "a")}));
            let mut depth = start;
            for _ in 0..rng.random_range(1..9) {
                let leaf = format!("/zz{}", "/a".repeat(depth));
                let op = pick(rng, &["copy", "move"]);
                ops.push(json!({"op": op, "from": "/zz", "path": leaf}));
                depth *= 2;
            }
        }
        _ => {}
    }
    Value::Array(ops)
}

/// A current object: random, or a chain at (or just under) the nesting limit.
fn current(rng: &mut StdRng) -> Value {
    if rng.random_range(0..8) == 0 {
        let depth = MAX_NESTING_DEPTH - rng.random_range(0..3);
        json!({"metadata": {"name": "x"}, "deep": chain(depth - 1, "a")})
    } else {
        let mut doc = value(rng, 5);
        if let Value::Object(map) = &mut doc {
            map.insert(
                "metadata".to_owned(),
                json!({"name": "x", "finalizers": ["a", "b"]}),
            );
        }
        doc
    }
}

/// A merge or strategic merge patch: random, or a chain at, under or just past the nesting
/// limit.
fn merge_patch(rng: &mut StdRng) -> String {
    if rng.random_range(0..8) == 0 {
        let depth = MAX_NESTING_DEPTH + 1 - rng.random_range(0..3);
        return chain(depth, pick(rng, &["a", "deep", "spec"])).to_string();
    }
    value(rng, 5).to_string()
}

/// Checks the properties of one application and answers it.
fn check(
    kind: PatchType,
    current: &Value,
    body: &[u8],
    shape: Shape<'_>,
) -> Result<Value, PatchError> {
    let got = apply(kind, current.clone(), body, shape);
    match &got {
        Ok(patched) => {
            assert!(
                nesting_depth(patched) <= MAX_NESTING_DEPTH,
                "{kind:?} built a value past the limit"
            );
            let before = current.to_string().len() + body.len();
            let after = patched.to_string().len();
            assert!(
                after <= 2 * before + JSON_PATCH_MAX_COPY_BYTES,
                "{kind:?} grew {before} bytes into {after}"
            );
        }
        Err(e) => assert!(
            e.to_string().len() <= MAX_MESSAGE_BYTES,
            "{kind:?}: a {}-byte error",
            e.to_string().len()
        ),
    }
    got
}

#[test]
fn patching_random_objects_keeps_every_property() {
    let schema = schema::of::<Deployment>().expect("compiles");
    let mut rng = StdRng::seed_from_u64(0x5eed_0005);
    for round in 0..FUZZ_SEEDS {
        let current = current(&mut rng);
        let bodies = [
            (PatchType::Json, json_patch(&mut rng, &current).to_string()),
            (PatchType::Merge, merge_patch(&mut rng)),
            (PatchType::Strategic, merge_patch(&mut rng)),
        ];
        for (kind, body) in &bodies {
            for shape in [Shape::of(&schema), Shape::untyped()] {
                let _ = check(*kind, &current, body.as_bytes(), shape);
            }
        }
        let (kind, body) = &bodies[(round % 3) as usize];
        let mut bytes = body.clone().into_bytes();
        if !bytes.is_empty() {
            let at = rng.random_range(0..bytes.len());
            bytes.truncate(at);
        }
        let _ = check(*kind, &current, &bytes, Shape::untyped());
    }
}

/// One corpus case: `kind` of patch (`json`, `merge`, `strategic`), the `current` object, the
/// body (`patch` as JSON, or `raw` text), and the outcome wanted: `ok`, or the status of the
/// error (`400`, `413`, `422`) with text it `contains`.
fn replay(file: &Path, schema: &schema::Schema) {
    let text = std::fs::read_to_string(file).expect("read");
    let case: Value = serde_json::from_str(&text).expect("a corpus case is JSON");
    let name = file.display();
    let kind = match case["kind"].as_str() {
        Some("json") => PatchType::Json,
        Some("merge") => PatchType::Merge,
        Some("strategic") => PatchType::Strategic,
        other => panic!("{name}: kind {other:?}"),
    };
    let body = match (&case["raw"], &case["patch"]) {
        (Value::String(raw), _) => raw.clone(),
        (_, patch) => patch.to_string(),
    };
    let shape = match case["schema"].as_str() {
        Some("Deployment") => Shape::of(schema),
        _ => Shape::untyped(),
    };
    let got = check(kind, &case["current"], body.as_bytes(), shape);
    let status = match &got {
        Ok(_) => "ok",
        Err(PatchError::Malformed(_)) => "400",
        Err(PatchError::TooManyOperations(_)) => "413",
        Err(PatchError::NotApplicable(_)) => "422",
    };
    assert_eq!(Some(status), case["want"].as_str(), "{name}: {got:?}");
    if let (Err(e), Some(part)) = (&got, case["contains"].as_str()) {
        assert!(e.to_string().contains(part), "{name}: {e}");
    }
    if let (Ok(patched), Some(want)) = (&got, case.get("result")) {
        assert_eq!(patched, want, "{name}");
    }
}

// The checked-in corpus replays with the outcomes it records.
#[test]
fn the_corpus_replays() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/patch");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    let schema = schema::of::<Deployment>().expect("compiles");
    for file in files {
        replay(&file, &schema);
    }
}

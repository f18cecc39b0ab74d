//! Structured fuzzing of the body decoders (issue 11): seeded hostile shapes (huge keys, many
//! unknown fields, nesting at and past the limit, alias bombs, lone surrogates, odd numbers,
//! control characters in field names), in JSON and YAML, decoded directly and sent through
//! the router at a random `fieldValidation` level. Properties: no panic and no 5xx; at most
//! [`MAX_FINDINGS`] findings, each an excerpt; error answers under 64 KiB; warnings within
//! kube-apiserver's budget; a decoded value decodes again to itself.

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::decode::check_fixed_point;
use super::decode_limits::arrays;
use super::decode_limits::crd_text;
use super::decode_limits::deep_schema;
use super::*;
use apiary_api::limits::MAX_NESTING_DEPTH;
use apiary_api::limits::MAX_WARNING_RUNES;
use apiary_api::limits::TRUNCATED_WARNING_RUNES;
use apiary_api::schema::Format;
use apiary_api::schema::MAX_EXCERPT_BYTES;
use apiary_api::schema::MAX_FINDINGS;
use apiary_api::schema::Schema;
use apiary_api::schema::decode;

/// The seeds CI runs, one hostile body each (set `APIARY_DECODER_FUZZ_SEEDS` for more).
const HOSTILE_FUZZ_SEEDS: u64 = 64;

/// The largest error answer any body may get.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The longest text a finding may print: its wording around an excerpt, each byte of which
/// shows as at most three (a control character becomes U+FFFD).
const MAX_FINDING_BYTES: usize = 64 + 3 * MAX_EXCERPT_BYTES;

/// The longest type or syntax error the decoder may give.
const MAX_ERROR_BYTES: usize = 1024;

/// The kinds the bodies are aimed at: typed fields (Deployment), maps of strings
/// (ConfigMap), a recursive schema with maps of objects (CRD) and free-form values
/// (ControllerRevision).
#[derive(Debug, Clone, Copy)]
enum Kind {
    Deployment,
    ConfigMap,
    Crd,
    Revision,
}

impl Kind {
    fn path(self) -> &'static str {
        match self {
            Self::Deployment => "/apis/apps/v1/namespaces/default/deployments",
            Self::ConfigMap => CM_PATH,
            Self::Crd => "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            Self::Revision => "/apis/apps/v1/namespaces/default/controllerrevisions",
        }
    }

    fn schema(self) -> std::sync::Arc<Schema> {
        use k8s_openapi::api::apps::v1::ControllerRevision;
        use k8s_openapi::api::apps::v1::Deployment;
        use k8s_openapi::api::core::v1::ConfigMap;
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        match self {
            Self::Deployment => apiary_api::schema::of::<Deployment>(),
            Self::ConfigMap => apiary_api::schema::of::<ConfigMap>(),
            Self::Crd => apiary_api::schema::of::<CustomResourceDefinition>(),
            Self::Revision => apiary_api::schema::of::<ControllerRevision>(),
        }
        .expect("schema")
    }

    /// A body of this kind named `name` with `extra` spliced in as its last fields (for a
    /// CRD, of its `openAPIV3Schema`): JSON text starting with a comma, or empty.
    fn body(self, name: &str, extra: &str) -> String {
        match self {
            Self::Deployment => format!(
                r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}"}},
                    "spec":{{"selector":{{"matchLabels":{{"app":"a"}}}},"template":{{"metadata":{{"labels":{{"app":"a"}}}},
                      "spec":{{"containers":[{{"name":"a","image":"i"}}]}}}}}}{extra}}}"#
            ),
            Self::ConfigMap => format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}}{extra}}}"#
            ),
            Self::Crd => crd_text(
                &format!("{name}.example.com"),
                &format!(r#"{{"type":"object"{extra}}}"#),
            ),
            Self::Revision => format!(
                r#"{{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{{"name":"{name}"}},"revision":1{extra}}}"#
            ),
        }
    }
}

/// A generator of one hostile body: the kind it is aimed at and its text, from the seed's
/// random source and the object's name.
type Shape = fn(&mut StdRng, &str) -> (Kind, String);

/// A field name: short and often repeated, or distinct.
fn name(rng: &mut StdRng, i: usize) -> String {
    if rng.random_bool(0.5) {
        char::from(b'a' + rng.random_range(0..26u8)).to_string()
    } else {
        format!("f{i}")
    }
}

/// `n` unknown fields, JSON text starting with a comma.
fn unknown_fields(rng: &mut StdRng, n: usize) -> String {
    (0..n)
        .map(|i| format!(r#","{}":{i}"#, name(rng, i)))
        .collect()
}

/// A huge key: as a map key above unknown fields (CRD), a map key (ConfigMap data), an
/// unknown field's name, or a free-form key.
fn huge_key(rng: &mut StdRng, name: &str) -> (Kind, String) {
    let len = [1_000, 65_536, 300_000][rng.random_range(0..3)];
    let key = char::from(b'a' + rng.random_range(0..26u8))
        .to_string()
        .repeat(len);
    match rng.random_range(0..4) {
        0 => {
            let n = rng.random_range(0..5_000);
            let fields = unknown_fields(rng, n);
            let schema = format!(
                r#"{{"type":"object","properties":{{"{key}":{{"type":"object"{fields}}}}}}}"#
            );
            (Kind::Crd, crd_text(&format!("{name}.example.com"), &schema))
        }
        1 => (
            Kind::ConfigMap,
            Kind::ConfigMap.body(name, &format!(r#","data":{{"{key}":"v"}}"#)),
        ),
        2 => (
            Kind::Deployment,
            Kind::Deployment.body(name, &format!(r#","{key}":{{"x":1}}"#)),
        ),
        _ => (
            Kind::Revision,
            Kind::Revision.body(name, &format!(r#","data":{{"{key}":[1,2]}}"#)),
        ),
    }
}

/// Many unknown fields: at the top and in many list items of a Deployment, or inside a
/// CRD's schema.
fn many_unknown(rng: &mut StdRng, name: &str) -> (Kind, String) {
    let n = rng.random_range(0..20_000);
    let top = unknown_fields(rng, n);
    if rng.random_bool(0.3) {
        return (Kind::Crd, Kind::Crd.body(name, &top));
    }
    let items: Vec<String> = (0..rng.random_range(1..2_000))
        .map(|i| format!(r#"{{"name":"c{i}","image":"i"{}}}"#, unknown_fields(rng, 3)))
        .collect();
    let body = Kind::Deployment.body(name, &top).replacen(
        r#"[{"name":"a","image":"i"}]"#,
        &format!("[{}]", items.join(",")),
        1,
    );
    (Kind::Deployment, body)
}

/// Nesting a few levels either side of the limit, under an unknown field, a free-form value
/// or a recursive typed schema.
fn deep(rng: &mut StdRng, name: &str) -> (Kind, String) {
    let depth = rng.random_range(MAX_NESTING_DEPTH - 3..=MAX_NESTING_DEPTH + 3);
    match rng.random_range(0..3) {
        0 => (
            Kind::ConfigMap,
            Kind::ConfigMap.body(name, &format!(r#","deep":{}"#, arrays(depth - 1))),
        ),
        1 => (
            Kind::Revision,
            Kind::Revision.body(name, &format!(r#","data":{}"#, arrays(depth - 1))),
        ),
        _ => {
            let levels = depth - 5;
            let schema = deep_schema((levels - 1) / 2, (levels - 1) % 2);
            (Kind::Crd, crd_text(&format!("{name}.example.com"), &schema))
        }
    }
}

/// YAML anchors each aliased `fan` times by the next, `levels` deep.
fn alias_bomb(rng: &mut StdRng, name: &str) -> (Kind, String) {
    let levels = rng.random_range(2..10);
    let fan = rng.random_range(2..12);
    let mut yaml = format!(
        "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {{name: {name}}}\nrevision: 1\nx0: &a0 [x]\n"
    );
    for level in 1..levels {
        let refs = vec![format!("*a{}", level - 1); fan].join(", ");
        yaml.push_str(&format!("x{level}: &a{level} [{refs}]\n"));
    }
    yaml.push_str(&format!("data: *a{}\n", levels - 1));
    (Kind::Revision, yaml)
}

/// Surrogate escapes, lone or paired, in keys and values.
fn surrogates(rng: &mut StdRng, name: &str) -> (Kind, String) {
    let mut text = String::new();
    for _ in 0..rng.random_range(1..20) {
        let unit: u16 = rng.random_range(0xD800..=0xDFFF);
        text.push_str(&format!("\\u{unit:04x}"));
        if rng.random_bool(0.3) {
            text.push('x');
        }
    }
    let extra = format!(r#","data":{{"k":"{text}"}},"{text}":1"#);
    (Kind::ConfigMap, Kind::ConfigMap.body(name, &extra))
}

/// Number literals Go and serde_json read differently, at integer, int-or-string, quantity
/// and free-form fields.
fn odd_number(rng: &mut StdRng, name: &str) -> (Kind, String) {
    const LITERALS: [&str; 12] = [
        "-0",
        "-0.0",
        "1e2",
        "1E400",
        "-1e400",
        "99999999999999999999",
        "-9223372036854775809",
        "0.0000001",
        "1e-400",
        "-0e0",
        "2147483648",
        "123456789012345678901234567890.5",
    ];
    let n = LITERALS[rng.random_range(0..LITERALS.len())];
    match rng.random_range(0..4) {
        0 => (
            Kind::Deployment,
            Kind::Deployment.body(name, "").replacen(
                r#""spec":{"#,
                &format!(
                    r#""spec":{{"replicas":{n},"strategy":{{"rollingUpdate":{{"maxSurge":{n}}}}},"#
                ),
                1,
            ),
        ),
        1 => (
            Kind::Deployment,
            Kind::Deployment.body(name, "").replacen(
                r#""image":"i""#,
                &format!(r#""image":"i","resources":{{"limits":{{"cpu":{n}}}}}"#),
                1,
            ),
        ),
        2 => (
            Kind::Deployment,
            Kind::Deployment.body(name, "").replacen(
                r#"{"name":"#,
                &format!(r#"{{"generation":{n},"name":"#),
                1,
            ),
        ),
        _ => (
            Kind::Revision,
            Kind::Revision.body(name, &format!(r#","data":[{n}]"#)),
        ),
    }
}

/// Unknown field names holding control characters, quotes and backslashes.
fn control_keys(rng: &mut StdRng, name: &str) -> (Kind, String) {
    let extra: String = (0..rng.random_range(1..200))
        .map(|i| {
            let c: u8 = rng.random_range(0..0x20);
            format!(r#","k{i}\u{c:04x}\"\\\u007f":1"#)
        })
        .collect();
    (Kind::ConfigMap, Kind::ConfigMap.body(name, &extra))
}

/// Checks the decoder's own answer to `body`: no panic, bounded findings and errors, and a
/// decoded value is a fixed point.
fn check_decode(schema: &Schema, body: &str, format: Format) {
    match decode(schema, body.as_bytes(), format) {
        Ok(decoded) => {
            assert!(decoded.findings.len() <= MAX_FINDINGS);
            for finding in &decoded.findings {
                let text = finding.to_string();
                assert!(text.len() <= MAX_FINDING_BYTES, "{}", text.len());
            }
            if let Some(e) = &decoded.type_error {
                assert!(e.0.len() <= MAX_ERROR_BYTES, "{}", e.0.len());
            }
            check_fixed_point(schema, body.as_bytes(), format);
        }
        Err(e) => {
            let text = e.to_string();
            assert!(text.len() <= MAX_ERROR_BYTES, "{}", text.len());
            for internal in ["Option<", "Breach", "::"] {
                assert!(!text.contains(internal), "{text}");
            }
        }
    }
}

/// Checks the router's answer to `body`: no 5xx, an error answer under 64 KiB, warnings
/// within kube-apiserver's budget.
async fn check_answer(app: &Router, kind: Kind, body: &str, content_type: &str, rng: &mut StdRng) {
    let level = ["", "Ignore", "Warn", "Strict"][rng.random_range(0..4)];
    let path = format!("{}?fieldValidation={level}", kind.path());
    let reply = send_as(app, "POST", &path, content_type, body).await;
    assert!(!reply.status.is_server_error(), "{kind:?} {}", reply.text());
    if !reply.status.is_success() {
        assert!(
            reply.body.len() < MAX_ANSWER_BYTES,
            "{kind:?} {}",
            reply.body.len()
        );
    }
    let runes: usize = warnings(&reply).iter().map(|w| w.chars().count()).sum();
    let values = warnings(&reply).len();
    // Each value adds its `299 - "..."` and escapes to the text's runes.
    assert!(
        runes <= 2 * (MAX_WARNING_RUNES + TRUNCATED_WARNING_RUNES) + 10 * values,
        "{kind:?} {runes}"
    );
}

// Every hostile shape, in JSON and YAML, decoded directly and through the router: no panic,
// no 5xx, bounded findings, errors, answers and warnings.
#[tokio::test]
async fn hostile_bodies_are_answered_within_bounds() {
    let (app, _) = app().await;
    let seeds = std::env::var("APIARY_DECODER_FUZZ_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(HOSTILE_FUZZ_SEEDS);
    let shapes: [Shape; 7] = [
        huge_key,
        many_unknown,
        deep,
        alias_bomb,
        surrogates,
        odd_number,
        control_keys,
    ];
    for seed in 0..seeds {
        let mut rng = StdRng::seed_from_u64(seed);
        // Every shape once in the first seeds, then drawn at random.
        let shape = match usize::try_from(seed) {
            Ok(i) if i < shapes.len() => shapes[i],
            _ => shapes[rng.random_range(0..shapes.len())],
        };
        let (kind, body) = shape(&mut rng, &format!("h{seed}"));
        let schema = kind.schema();
        let formats: &[Format] = if body.starts_with('{') {
            &[Format::Json, Format::Yaml]
        } else {
            &[Format::Yaml]
        };
        for &format in formats {
            check_decode(&schema, &body, format);
            // Each format under its own name, so that neither answers 409 for the other.
            let (content_type, named) = match format {
                Format::Json => ("application/json", body.clone()),
                Format::Yaml => (
                    "application/yaml",
                    body.replace(&format!("h{seed}"), &format!("h{seed}y")),
                ),
            };
            check_answer(&app, kind, &named, content_type, &mut rng).await;
        }
    }
}

//! Decoding request bodies through the router (spec 000 "Field validation" and "Resources and
//! their fields"): type errors that name the field (400, nothing stored), YAML bodies with
//! every `fieldValidation` level, required fields, and a fuzz loop over every served kind's
//! stub, arbitrary bodies and a checked-in corpus: never a panic or a 5xx, and decode ->
//! encode -> decode is a fixed point.

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::json;

use super::conformance::collection_path;
use super::conformance::stub;
use super::conformance::stub_key;
use super::*;
use apiary_api::registry::builtin::rows;
use apiary_api::schema::Decoded;
use apiary_api::schema::Format;
use apiary_api::schema::Schema;
use apiary_api::schema::decode;

const DEPLOY_PATH: &str = "/apis/apps/v1/namespaces/default/deployments";

/// `method path` as the admin with `body` of `content_type`.
/// A Deployment named `name` whose `spec` is `spec` (JSON text) around a valid template.
fn deployment(name: &str, extra_spec: &str, container: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}"}},
            "spec":{{{extra_spec}"selector":{{"matchLabels":{{"app":"a"}}}},
              "template":{{"metadata":{{"labels":{{"app":"a"}}}},"spec":{{"containers":[
                {{"name":"a","image":"nginx"}},{container}]}}}}}}}}"#
    )
}

// R-RES-031, R-RES-190: a value of the wrong type is a 400 naming the Go struct, the field
// path and the Go type, for each scalar kind, nested and inside lists; nothing is stored.
#[tokio::test]
async fn type_errors_name_the_field_and_store_nothing() {
    let (app, _) = app().await;
    let prefix = "Deployment in version \"v1\" cannot be handled as a Deployment: ";
    let cases = [
        (
            r#""replicas":"3","#,
            r#"{"name":"b","image":"i"}"#,
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            r#""replicas":2.5,"#,
            r#"{"name":"b","image":"i"}"#,
            "json: cannot unmarshal number 2.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            r#""paused":"no","#,
            r#"{"name":"b","image":"i"}"#,
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool",
        ),
        (
            "",
            r#"{"name":"b","image":"i","ports":[{"containerPort":"80"}]}"#,
            "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32",
        ),
        (
            "",
            r#"{"name":"b","image":"i","command":"sleep 1"}"#,
            "json: cannot unmarshal string into Go struct field Container.spec.template.spec.containers.command of type []string",
        ),
        (
            "",
            r#"{"name":"b","image":"i","args":["sleep",1200]}"#,
            "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.args of type string",
        ),
        (
            "",
            r#"{"name":"b","image":"i","env":{"name":"x"}}"#,
            "json: cannot unmarshal object into Go struct field Container.spec.template.spec.containers.env of type []v1.EnvVar",
        ),
        (
            r#""strategy":{"rollingUpdate":{"maxSurge":1.5}},"#,
            r#"{"name":"b","image":"i"}"#,
            "json: cannot unmarshal number 1.5 into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type intstr.IntOrString",
        ),
        (
            "",
            r#"{"name":"b","image":"i","resources":{"limits":{"memory":"1Gb"}}}"#,
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
    ];
    for (i, (spec, container, want)) in cases.into_iter().enumerate() {
        let name = format!("d{i}");
        let reply = admin_call(
            &app,
            "POST",
            DEPLOY_PATH,
            Some(&deployment(&name, spec, container)),
        )
        .await;
        let s = assert_status(&reply, 400, "BadRequest");
        assert_eq!(s["message"], format!("{prefix}{want}"), "case {i}");
        let got = admin_call(&app, "GET", &format!("{DEPLOY_PATH}/{name}"), None).await;
        assert_eq!(got.status, StatusCode::NOT_FOUND, "case {i}");
    }
    // Bytes (Secret data) and time, on other kinds.
    let secret = r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"!!"}}"#;
    let reply = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces/default/secrets",
        Some(secret),
    )
    .await;
    let s = assert_status(&reply, 400, "BadRequest");
    assert_eq!(
        s["message"],
        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 0"
    );
    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","creationTimestamp":"today"}}"#;
    let reply = admin_call(&app, "POST", CM_PATH, Some(cm)).await;
    let s = assert_status(&reply, 400, "BadRequest");
    assert!(
        s["message"]
            .as_str()
            .is_some_and(|m| m.contains("parsing time \"today\"")),
        "{s}"
    );
}

// R-RES-190: a type error wins over unknown fields even under Strict; a syntax error wins over
// a type error earlier in the body.
#[tokio::test]
async fn type_errors_are_fatal_before_field_validation() {
    let (app, _) = app().await;
    let body = deployment("t", r#""replicas":"3","bogus":1,"#, r#"{"name":"b"}"#);
    let reply = admin_call(
        &app,
        "POST",
        &format!("{DEPLOY_PATH}?fieldValidation=Strict"),
        Some(&body),
    )
    .await;
    let s = assert_status(&reply, 400, "BadRequest");
    assert!(
        s["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("DeploymentSpec.spec.replicas of type int32")),
        "{s}"
    );
    let broken = format!("{body} x");
    let reply = admin_call(&app, "POST", DEPLOY_PATH, Some(&broken)).await;
    let s = assert_status(&reply, 400, "BadRequest");
    assert!(
        s["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("couldn't get version/kind; json parse error")),
        "{s}"
    );
}

/// Kubernetes' YAML field-validation body (test/integration/apiserver/field_validation_test.go
/// shape): duplicates at lines 5, 12, 14 and 28, four unknown fields.
fn invalid_yaml(name: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: dupename
  name: {name}
  unknownMeta: metaVal
  labels:
    app: nginx
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
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never
"
    )
}

const YAML_FINDINGS: [&str; 8] = [
    r#"line 5: key "name" already set in map"#,
    r#"line 12: key "unknownDupe" already set in map"#,
    r#"line 14: key "paused" already set in map"#,
    r#"line 28: key "imagePullPolicy" already set in map"#,
    r#"unknown field "metadata.unknownMeta""#,
    r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
    r#"unknown field "spec.unknown1""#,
    r#"unknown field "spec.unknownDupe""#,
];

fn yaml_warnings() -> Vec<String> {
    YAML_FINDINGS
        .iter()
        .map(|f| format!("299 - \"{}\"", f.replace('"', "\\\"")))
        .collect()
}

// R-RES-121, R-RES-123 (requests), R-RES-185, R-RES-186, R-RES-187, R-RES-189: a YAML create
// answers Kubernetes' findings at each level: warnings by default and under Warn, none under
// Ignore, one 400 under Strict, with the YAML duplicates first and by line.
#[tokio::test]
async fn yaml_create_at_each_field_validation_level() {
    let (app, _) = app().await;
    for (query, name) in [("", "y1"), ("?fieldValidation=Warn", "y2")] {
        let path = format!("{DEPLOY_PATH}{query}");
        let reply = send_as(&app, "POST", &path, "application/yaml", &invalid_yaml(name)).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        assert_eq!(warnings(&reply), yaml_warnings(), "{query}");
        let d = reply.json();
        assert_eq!(d["metadata"]["name"], name);
        assert_eq!(d["spec"]["paused"], false, "the last duplicate counts");
        assert!(d["spec"].get("unknown1").is_none());
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "Never"
        );
    }
    let path = format!("{DEPLOY_PATH}?fieldValidation=Ignore");
    let reply = send_as(&app, "POST", &path, "application/yaml", &invalid_yaml("y3")).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert!(warnings(&reply).is_empty());

    let path = format!("{DEPLOY_PATH}?fieldValidation=Strict");
    let reply = send_as(&app, "POST", &path, "application/yaml", &invalid_yaml("y4")).await;
    let s = assert_status(&reply, 400, "BadRequest");
    assert_eq!(
        s["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: \
         yaml: unmarshal errors:\n  line 5: key \"name\" already set in map\n  \
         line 12: key \"unknownDupe\" already set in map\n  line 14: key \"paused\" already set in map\n  \
         line 28: key \"imagePullPolicy\" already set in map, unknown field \"metadata.unknownMeta\", \
         unknown field \"spec.template.spec.containers[0].unknownNested\", unknown field \"spec.unknown1\", \
         unknown field \"spec.unknownDupe\""
    );
    let got = admin_call(&app, "GET", &format!("{DEPLOY_PATH}/y4"), None).await;
    assert_eq!(got.status, StatusCode::NOT_FOUND);
}

// R-RES-121, R-RES-185..187: a YAML update (PUT) is judged the same way; a clean YAML body
// updates without a warning.
#[tokio::test]
async fn yaml_update_at_each_field_validation_level() {
    let (app, _) = app().await;
    // Created with the selector the updates keep (a Deployment's selector is immutable).
    let ignore = format!("{DEPLOY_PATH}?fieldValidation=Ignore");
    let created = send_as(
        &app,
        "POST",
        &ignore,
        "application/yaml",
        &invalid_yaml("u"),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let item = format!("{DEPLOY_PATH}/u");
    let strict = format!("{item}?fieldValidation=Strict");
    let reply = send_as(&app, "PUT", &strict, "application/yaml", &invalid_yaml("u")).await;
    let s = assert_status(&reply, 400, "BadRequest");
    assert!(
        s["message"]
            .as_str()
            .is_some_and(|m| m.contains("strict decoding error: yaml: unmarshal errors:\n  line 5")),
        "{s}"
    );
    let reply = send_as(&app, "PUT", &item, "application/yaml", &invalid_yaml("u")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(warnings(&reply), yaml_warnings());
    assert_eq!(reply.json()["spec"]["paused"], false);
    let clean = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: u\nspec:\n  replicas: 4\n  \
                 selector: {matchLabels: {app: nginx}}\n  template:\n    metadata: {labels: {app: nginx}}\n    \
                 spec:\n      containers: [{name: c, image: nginx}]\n";
    let reply = send_as(&app, "PUT", &item, "application/yaml; charset=utf-8", clean).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(warnings(&reply).is_empty());
    assert_eq!(reply.json()["spec"]["replicas"], 4);
}

// R-RES-121, R-RES-031: YAML type errors read as upstream's (the YAML is judged as the JSON it
// converts to); a multi-document or malformed YAML body is a 400.
#[tokio::test]
async fn yaml_type_errors_and_bad_yaml() {
    let (app, _) = app().await;
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: [1]\n";
    let reply = send_as(&app, "POST", CM_PATH, "application/yaml", body).await;
    let s = assert_status(&reply, 400, "BadRequest");
    assert_eq!(
        s["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.data of type string"
    );
    let two = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";
    for bad in [two, "metadata: [\n", "metadata:\n  name: a\n name: b\n"] {
        let reply = send_as(&app, "POST", CM_PATH, "application/yaml", bad).await;
        let s = assert_status(&reply, 400, "BadRequest");
        assert!(
            s["message"].as_str().is_some_and(|m| m.starts_with(
                "couldn't get version/kind; json parse error: error converting YAML to JSON: yaml: "
            )),
            "{s}"
        );
    }
    let list = admin_call(&app, "GET", CM_PATH, None).await.json();
    assert_eq!(list["items"], json!([]), "nothing stored");
}

// R-RES-030: a required field left unset is a 422 naming it with its list index; the same
// field is named once.
#[tokio::test]
async fn required_fields_are_named_once() {
    let (app, _) = app().await;
    let body = deployment("r", "", r#"{"image":"i","env":[{"value":"v"}]}"#);
    let reply = admin_call(&app, "POST", DEPLOY_PATH, Some(&body)).await;
    let s = assert_status(&reply, 422, "Invalid");
    let causes = s["details"]["causes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = causes
        .iter()
        .filter(|c| c["reason"] == "FieldValueRequired")
        .filter_map(|c| c["field"].as_str())
        .collect();
    for field in [
        "spec.template.spec.containers[1].env[0].name",
        "spec.template.spec.containers[1].name",
    ] {
        assert_eq!(
            required.iter().filter(|f| **f == field).count(),
            1,
            "{field} in {s}"
        );
    }
    let got = admin_call(&app, "GET", &format!("{DEPLOY_PATH}/r"), None).await;
    assert_eq!(got.status, StatusCode::NOT_FOUND);
}

// R-RES-031: the platform flavor's group spelling decodes (k8s-openapi's typed structs
// accepted only the `k8s.io` one), and the served apiVersion is kept.
#[tokio::test]
async fn both_flavors_spelling_of_a_group_decode() {
    for (flavor, group) in [
        (Flavor::Platform, "rbac.authorization.platform.io"),
        (Flavor::Kubernetes, "rbac.authorization.k8s.io"),
    ] {
        let (storage, _) = backend_in(flavor).await;
        let app = apiary_api::router(storage, ApiConfig::new(flavor, Arc::new(AlwaysReady)));
        let body = format!(
            r#"{{"apiVersion":"{group}/v1","kind":"ClusterRole","metadata":{{"name":"r"}},"rules":[{{"nonResourceURLs":["/x"],"verbs":["get"]}}],"bogus":1}}"#
        );
        let path = format!("/apis/{group}/v1/clusterroles");
        let reply = admin_call(&app, "POST", &path, Some(&body)).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        let r = reply.json();
        assert_eq!(r["apiVersion"], format!("{group}/v1"));
        assert_eq!(
            r["rules"],
            json!([{"nonResourceURLs": ["/x"], "verbs": ["get"]}])
        );
        assert!(r.get("bogus").is_none());
    }
}

/// The decode of `body`, checked: when it succeeds without a type error, encoding its value
/// and decoding that again gives the same value and nothing to report.
pub(super) fn check_fixed_point(schema: &Schema, body: &[u8], format: Format) {
    let Ok(Decoded {
        value,
        type_error: None,
        ..
    }) = decode(schema, body, format)
    else {
        return;
    };
    let encoded = value.to_string();
    let again = decode(schema, encoded.as_bytes(), Format::Json).expect("re-encoded body parses");
    assert_eq!(again.type_error, None, "{encoded}");
    assert_eq!(again.findings, vec![], "{encoded}");
    assert_eq!(again.value, value, "{}", String::from_utf8_lossy(body));
}

/// `body` with one random edit: a cut, a duplicated span, or an inserted byte.
fn mutate(rng: &mut StdRng, body: &str) -> Vec<u8> {
    let mut bytes = body.as_bytes().to_vec();
    let at = rng.random_range(0..=bytes.len());
    match rng.random_range(0..4) {
        0 => bytes.truncate(at),
        1 => {
            let end = rng.random_range(at..=bytes.len());
            let span = bytes[at..end].to_vec();
            bytes.splice(at..at, span);
        }
        2 => {
            const BYTES: &[u8] = b"{}[],:\"a1 -\n.&*!#";
            bytes.insert(at, BYTES[rng.random_range(0..BYTES.len())]);
        }
        _ => {
            // A value swapped for one of another type, keeping the body well-formed JSON.
            const SCALARS: [&str; 6] = ["1", "-1.5", "\"x\"", "true", "null", "[]"];
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if let Some(colon) = text[at.min(text.len())..].find(':') {
                let start = at + colon + 1;
                let end = text[start..]
                    .find([',', '}'])
                    .map_or(text.len(), |e| start + e);
                let pick = SCALARS[rng.random_range(0..SCALARS.len())];
                return [&text[..start], pick, &text[end..]].concat().into_bytes();
            }
        }
    }
    bytes
}

fn random_value(rng: &mut StdRng, depth: u32) -> Value {
    const KEYS: [&str; 9] = [
        "metadata",
        "name",
        "spec",
        "containers",
        "data",
        "labels",
        "replicas",
        "x",
        "",
    ];
    match rng.random_range(0..if depth > 4 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.random()),
        2 => json!(rng.random_range(-5_i64..5) as f64 / 2.0),
        3 => json!(rng.random_range(-3_000_000_000_i64..3_000_000_000)),
        4 => Value::String(KEYS[rng.random_range(0..KEYS.len())].to_owned()),
        5 => (0..rng.random_range(0..4))
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

/// Every served kind (kubernetes flavor) with its stub body.
fn stub_bodies() -> Vec<(Arc<Schema>, Value, String)> {
    rows()
        .into_iter()
        .filter(|row| row.is_servable())
        .filter_map(|row| {
            let t = row.resource_type(Flavor::Kubernetes);
            let mut obj = stub(&stub_key(&t))?;
            obj["apiVersion"] = t.api_version().into();
            obj["kind"] = t.kind.as_str().into();
            obj["metadata"] = json!({"name": "fuzz", "labels": {"a": "b"}});
            let schema = (row.schema())().expect("schema compiles");
            Some((schema, obj, collection_path(&t)))
        })
        .collect()
}

// R-RES-031, R-RES-185..190: over every served kind's stub (JSON and YAML), its mutations
// and arbitrary values, the decoder never panics and is a fixed point; through the router
// every such body answers 2xx or 4xx, never 5xx.
#[tokio::test]
async fn fuzzed_bodies_never_panic_or_fail_the_server() {
    let (app, _) = app().await;
    let mut rng = StdRng::seed_from_u64(5);
    let stubs = stub_bodies();
    assert!(stubs.len() > 20, "the stubs seed the fuzz");
    for (schema, obj, path) in &stubs {
        let body = obj.to_string();
        let yaml = serde_saphyr::to_string(obj).expect("yaml");
        check_fixed_point(schema, body.as_bytes(), Format::Json);
        check_fixed_point(schema, yaml.as_bytes(), Format::Yaml);
        for _ in 0..40 {
            let json_body = mutate(&mut rng, &body);
            check_fixed_point(schema, &json_body, Format::Json);
            let yaml_body = mutate(&mut rng, &yaml);
            check_fixed_point(schema, &yaml_body, Format::Yaml);
            let arbitrary = random_value(&mut rng, 0).to_string();
            check_fixed_point(schema, arbitrary.as_bytes(), Format::Json);
            check_fixed_point(schema, arbitrary.as_bytes(), Format::Yaml);
        }
        for _ in 0..3 {
            let mutated = String::from_utf8_lossy(&mutate(&mut rng, &body)).into_owned();
            let reply = admin_call(&app, "POST", path, Some(&mutated)).await;
            assert!(
                !reply.status.is_server_error(),
                "{path} {mutated}: {}",
                reply.text()
            );
            let yaml_mutated = String::from_utf8_lossy(&mutate(&mut rng, &yaml)).into_owned();
            let reply = send_as(&app, "POST", path, "application/yaml", &yaml_mutated).await;
            assert!(
                !reply.status.is_server_error(),
                "{path} {yaml_mutated}: {}",
                reply.text()
            );
        }
    }
}

// R-RES-031, R-RES-190: the checked-in corpus (bodies that once mattered: deep nesting,
// aliases, huge numbers, odd YAML) replays through the decoder and the router.
#[tokio::test]
async fn the_corpus_replays() {
    let (app, _) = app().await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/decoder");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    let schema =
        apiary_api::schema::of::<k8s_openapi::api::apps::v1::Deployment>().expect("schema");
    for file in files {
        let body = std::fs::read(&file).expect("read");
        let (format, content_type) = match file.extension().and_then(|e| e.to_str()) {
            Some("yaml") => (Format::Yaml, "application/yaml"),
            _ => (Format::Json, "application/json"),
        };
        check_fixed_point(&schema, &body, format);
        let text = String::from_utf8_lossy(&body).into_owned();
        let reply = send_as(&app, "POST", DEPLOY_PATH, content_type, &text).await;
        assert!(
            reply.status.is_success() || reply.status.is_client_error(),
            "{}: {} {}",
            file.display(),
            reply.status,
            reply.text()
        );
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if let Some((_, status, says)) = CORPUS_ANSWERS.iter().find(|(f, ..)| *f == name) {
            assert_eq!(reply.status.as_u16(), *status, "{name}: {}", reply.text());
            assert!(reply.text().contains(says), "{name}: {}", reply.text());
        }
    }
}

/// What the hostile corpus files (issue 11) are answered: status and a part of the body.
const CORPUS_ANSWERS: [(&str, u16, &str); 12] = [
    (
        "13-lone-surrogates.json",
        201,
        "\"a\":\"\u{FFFD}\",\"b\":\"x\u{FFFD}y\"",
    ),
    ("14-negative-zero.json", 201, r#""replicas":0"#),
    (
        "15-float-literals.json",
        400,
        "cannot unmarshal number 1e2 into Go struct field DeploymentSpec.spec.replicas",
    ),
    // Accepted at the limit; its managedFields, invalid, give way to the create's own entry.
    (
        "16-deep-at-limit.json",
        201,
        r#""fieldsType":"FieldsV1","fieldsV1":{"f:spec":"#,
    ),
    (
        "17-deep-past-limit.json",
        400,
        "exceeded the maximum nesting depth of 127 at line 1",
    ),
    (
        "18-deep-unknown-past-limit.json",
        400,
        "exceeded the maximum nesting depth of 127 at line 1",
    ),
    (
        "19-alias-fanout.yaml",
        400,
        "document contains excessive aliasing",
    ),
    (
        "20-null-key.yaml",
        400,
        "yaml: line 6: unsupported map key: null",
    ),
    ("21-control-char-keys.json", 201, r#""name":"c21""#),
    ("22-long-key.json", 422, "metadata.labels: Invalid value"),
    (
        "23-deep-yaml-at-limit.yaml",
        201,
        r#""fieldsType":"FieldsV1","fieldsV1":{"f:spec":"#,
    ),
    (
        "24-deep-yaml-past-limit.yaml",
        400,
        "yaml: line 6: exceeded the maximum nesting depth of 127",
    ),
];

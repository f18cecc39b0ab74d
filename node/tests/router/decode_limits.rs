//! Hostile bodies through the router (issue 11): the reproducer of quadratic unknown-field
//! detection (a 2.9 MB CRD, one 1.4 MB map key, 250,000 unknown fields below it) in every
//! `fieldValidation` mode, with bounded warnings and errors; bodies at and past the nesting
//! limit, in JSON and YAML, on create and update, through every walk a decoded value meets
//! (typed fields, free-form values, dropped unknown fields, required fields, storage and
//! reads); and Go's reading of `-0` and lone surrogate escapes.

use std::time::Duration;

use serde_json::json;

use super::*;
use apiary_api::limits::MAX_NESTING_DEPTH;
use apiary_api::limits::MAX_WARNING_RUNES;
use apiary_api::limits::TRUNCATED_WARNING_RUNES;
use apiary_api::limits::nesting_depth;

const CRD_PATH: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const REVISION_PATH: &str = "/apis/apps/v1/namespaces/default/controllerrevisions";
const DEPLOY_PATH: &str = "/apis/apps/v1/namespaces/default/deployments";

/// The most bytes an error answer may take, whatever the body.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// A hostile request must be answered within this (a liveness bound, not a speed claim).
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

/// A CRD of group `group` whose `openAPIV3Schema` is `schema` (JSON text).
pub(super) fn crd_text(group: &str, schema: &str) -> String {
    format!(
        r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
            "metadata":{{"name":"walks.{group}"}},
            "spec":{{"group":"{group}","names":{{"kind":"Walk","plural":"walks"}},"scope":"Namespaced",
              "versions":[{{"name":"v1","served":true,"storage":true,"schema":{{"openAPIV3Schema":{schema}}}}}]}}}}"#
    )
}

/// The key the issue's body hides its unknown fields under.
fn long_key() -> String {
    "k".repeat(1_400_000)
}

/// The issue's body: one 1.4 MB key in `openAPIV3Schema.properties` (a map of schemas) and
/// 250,000 unknown fields below it (one-letter names, so repeated), 2.9 MB in all.
fn issue_body(group: &str) -> String {
    const NAMES: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let fields: Vec<String> = (0..250_000)
        .map(|i| format!(r#""{}":0"#, char::from(NAMES[i % NAMES.len()])))
        .collect();
    let schema = format!(
        r#"{{"type":"object","properties":{{"{}":{{"type":"object",{}}}}}}}"#,
        long_key(),
        fields.join(",")
    );
    crd_text(group, &schema)
}

/// The same key with 20,000 unknown fields at distinct paths (one per `allOf` item), so
/// that the findings cap binds (building each path in full would copy 28 GB).
fn distinct_paths_body(group: &str) -> String {
    let items = vec![r#"{"a":0}"#; 20_000].join(",");
    let schema = format!(
        r#"{{"type":"object","properties":{{"{}":{{"type":"object","allOf":[{items}]}}}}}}"#,
        long_key()
    );
    crd_text(group, &schema)
}

/// POST `body` (JSON) to `path`, answered within [`ANSWER_WITHIN`].
async fn post(app: &Router, path: &str, body: &str) -> Reply {
    tokio::time::timeout(ANSWER_WITHIN, admin_call(app, "POST", path, Some(body)))
        .await
        .expect("answered in time")
}

/// The `Warning` texts of `reply`, unquoted.
fn warning_texts(reply: &Reply) -> Vec<String> {
    warnings(reply)
        .iter()
        .map(|w| {
            w.strip_prefix("299 - \"")
                .and_then(|w| w.strip_suffix('"'))
                .unwrap_or(w)
                .replace("\\\"", "\"")
                .replace("\\\\", "\\")
        })
        .collect()
}

/// The path every finding of the issue's bodies starts with (the long key, cut).
const FINDING_PREFIX: &str =
    "unknown field \"spec.versions[0].schema.openAPIV3Schema.properties.kkk";

// The issue's body (and a variant with 20,000 distinct paths) is answered in every mode:
// Ignore stores without a word, Warn stores with warnings capped as kube-apiserver caps them,
// Strict refuses with a 400 under 64 KiB naming the fields by excerpts; nothing is stored on
// refusal.
#[tokio::test]
async fn the_issue_body_is_answered_in_every_mode_with_bounded_answers() {
    let (app, _) = app().await;
    let size = issue_body("x.example.com").len();
    assert!(size > 2_800_000 && size < 3_000_000, "{size}");
    for (variant, body, findings) in [
        ("repeated", issue_body as fn(&str) -> String, 62),
        (
            "distinct",
            distinct_paths_body,
            apiary_api::schema::MAX_FINDINGS,
        ),
    ] {
        let group = |mode: &str| format!("{mode}.{variant}.example.com");

        let ignore = post(
            &app,
            &format!("{CRD_PATH}?fieldValidation=Ignore"),
            &body(&group("ignore")),
        )
        .await;
        assert_eq!(
            ignore.status,
            StatusCode::CREATED,
            "{variant}: {}",
            ignore.text()
        );
        assert!(warnings(&ignore).is_empty(), "{variant}");
        let stored = &ignore.json()["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        let kept = &stored["properties"][long_key()];
        assert!(kept.is_object(), "{variant}: the map key is kept");
        assert!(
            kept.get("a").is_none(),
            "{variant}: unknown fields are dropped"
        );

        let warn = post(
            &app,
            &format!("{CRD_PATH}?fieldValidation=Warn"),
            &body(&group("warn")),
        )
        .await;
        assert_eq!(
            warn.status,
            StatusCode::CREATED,
            "{variant}: {}",
            warn.text()
        );
        let texts = warning_texts(&warn);
        assert!(!texts.is_empty(), "{variant}");
        let runes: usize = texts.iter().map(|t| t.chars().count()).sum();
        assert!(
            runes <= MAX_WARNING_RUNES + TRUNCATED_WARNING_RUNES,
            "{variant}: {runes}"
        );
        let header_bytes: usize = warnings(&warn).iter().map(String::len).sum();
        assert!(header_bytes < 16 * 1024, "{variant}: {header_bytes}");
        assert!(
            texts.len() < findings,
            "{variant}: the warning budget binds"
        );
        for text in &texts {
            assert!(text.starts_with(FINDING_PREFIX), "{variant}: {text}");
            assert!(text.contains("..."), "{variant}: {text}");
        }

        let strict = post(
            &app,
            &format!("{CRD_PATH}?fieldValidation=Strict"),
            &body(&group("strict")),
        )
        .await;
        assert!(
            strict.body.len() < MAX_ANSWER_BYTES,
            "{variant}: {}",
            strict.body.len()
        );
        let s = assert_status(&strict, 400, "BadRequest");
        let message = s["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(&format!(
                "CustomResourceDefinition in version \"v1\" cannot be handled as a CustomResourceDefinition: strict decoding error: {FINDING_PREFIX}"
            )),
            "{variant}: {}",
            &message[..message.len().min(300)]
        );
        assert_eq!(
            message.matches("unknown field ").count(),
            findings,
            "{variant}"
        );
        let got = admin_call(
            &app,
            "GET",
            &format!("{CRD_PATH}/walks.{}", group("strict")),
            None,
        )
        .await;
        assert_eq!(
            got.status,
            StatusCode::NOT_FOUND,
            "{variant}: nothing stored"
        );
    }
}

// The longest Strict answer a body can get (100 findings, each an excerpt of a name made of
// control characters, which show as three bytes each) stays under 64 KiB; Warn answers the
// same body within the warning budget.
#[tokio::test]
async fn the_worst_strict_answer_stays_under_64_kib() {
    let (app, _) = app().await;
    let fields: Vec<String> = (0..150)
        .map(|i| format!(r#""{}{i}":1"#, r"\u0001".repeat(1_000)))
        .collect();
    let body = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"w"}},{}}}"#,
        fields.join(",")
    );
    let strict = post(&app, &format!("{CM_PATH}?fieldValidation=Strict"), &body).await;
    let s = assert_status(&strict, 400, "BadRequest");
    assert_eq!(
        s["message"]
            .as_str()
            .map(|m| m.matches("unknown field ").count()),
        Some(apiary_api::schema::MAX_FINDINGS)
    );
    assert!(
        strict.body.len() > 32 * 1024 && strict.body.len() < MAX_ANSWER_BYTES,
        "{}",
        strict.body.len()
    );
    let warn = post(&app, CM_PATH, &body).await;
    assert_eq!(warn.status, StatusCode::CREATED, "{}", warn.text());
    let runes: usize = warning_texts(&warn).iter().map(|t| t.chars().count()).sum();
    assert!(
        runes <= MAX_WARNING_RUNES + TRUNCATED_WARNING_RUNES,
        "{runes}"
    );
}

// The YAML parser's budgets answer a 400 in go-yaml's words: an alias bomb, aliases out of
// proportion to their anchors, more nodes than the budget, nesting past the limit; nothing
// is stored.
#[tokio::test]
async fn yaml_budgets_are_answered_with_400() {
    let (app, _) = app().await;
    let head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";
    let laughs: String = (1..9)
        .map(|i| {
            format!(
                "l{i}: &l{i} [{}]\n",
                vec![format!("*l{}", i - 1); 9].join(",")
            )
        })
        .collect();
    let cases = [
        (
            format!("{head}l0: &l0 [x]\n{laughs}"),
            "document contains more than the maximum of 250000 nodes",
        ),
        (
            format!("{head}a: &a x\nb: [{}]\n", vec!["*a"; 500].join(",")),
            "document contains excessive aliasing",
        ),
        (
            format!("{head}data: {{}}\nn: [{}]\n", vec!["1"; 260_000].join(",")),
            "document contains more than the maximum of 250000 nodes",
        ),
        (
            format!("{head}n: {}\n", arrays(MAX_NESTING_DEPTH)),
            "exceeded the maximum nesting depth of 127",
        ),
    ];
    for (body, says) in cases {
        let reply = tokio::time::timeout(
            ANSWER_WITHIN,
            send_as(&app, "POST", CM_PATH, "application/yaml", &body),
        )
        .await
        .expect("answered in time");
        let s = assert_status(&reply, 400, "BadRequest");
        let message = s["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(
                "couldn't get version/kind; json parse error: error converting YAML to JSON: yaml: line "
            ) && message.ends_with(says),
            "{message}"
        );
    }
    let got = admin_call(&app, "GET", &format!("{CM_PATH}/b"), None).await;
    assert_eq!(got.status, StatusCode::NOT_FOUND);
}

/// `depth` levels of arrays around `1`.
pub(super) fn arrays(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

/// A structural CRD schema nested `pairs` times through `properties` (two levels each),
/// closed by a `not` when `extra` is 1 (one level): a typed, recursive path through the
/// decoder, the required-field walk and the CRD's schema validation.
pub(super) fn deep_schema(pairs: usize, extra: usize) -> String {
    let mut inner = if extra == 0 {
        r#"{"type":"object"}"#.to_owned()
    } else {
        r#"{"type":"object","not":{"minProperties":1}}"#.to_owned()
    };
    for _ in 0..pairs {
        inner = format!(r#"{{"type":"object","properties":{{"a":{inner}}}}}"#);
    }
    inner
}

/// Bodies nesting exactly `depth` levels, each reaching its depth through a different walk:
/// a typed recursive schema (CRD), a free-form value (ControllerRevision `data`) and an
/// unknown field (dropped unread); with the collection path and the object's name.
fn deep_bodies(depth: usize) -> Vec<(&'static str, String, &'static str)> {
    // Above openAPIV3Schema: the object, spec, versions, the version, schema (5 levels).
    let schema_levels = depth - 5;
    let schema = deep_schema((schema_levels - 1) / 2, (schema_levels - 1) % 2);
    let revision = format!(
        r#"{{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{{"name":"deep"}},"revision":1,"data":{}}}"#,
        arrays(depth - 1)
    );
    let unknown = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"deep"}},"deep":{}}}"#,
        arrays(depth - 1)
    );
    vec![
        (
            CRD_PATH,
            crd_text("deep.example.com", &schema),
            "walks.deep.example.com",
        ),
        (REVISION_PATH, revision, "deep"),
        (CM_PATH, unknown, "deep"),
    ]
}

// A body at the nesting limit is stored, read back, listed and updated, in JSON and YAML;
// one level more is a 400 naming the limit, on create (nothing stored) and on update
// (nothing changed).
#[tokio::test]
async fn nesting_at_and_past_the_limit_through_every_walk() {
    for content_type in ["application/json", "application/yaml"] {
        let (app, _) = app().await;
        let at = deep_bodies(MAX_NESTING_DEPTH);
        let past = deep_bodies(MAX_NESTING_DEPTH + 1);
        for (path, body, _) in &at {
            let value: Value = serde_json::from_str(body).expect("JSON");
            assert_eq!(nesting_depth(&value), MAX_NESTING_DEPTH, "{path}");
        }
        let want = if content_type == "application/json" {
            format!(
                "couldn't get version/kind; json parse error: exceeded the maximum nesting depth of {MAX_NESTING_DEPTH} at line "
            )
        } else {
            "couldn't get version/kind; json parse error: error converting YAML to JSON: yaml: line ".to_owned()
        };
        let refused = |reply: &Reply, what: &str| {
            let s = assert_status(reply, 400, "BadRequest");
            let message = s["message"].as_str().unwrap_or_default().to_owned();
            assert!(
                message.starts_with(&want),
                "{content_type} {what}: {message}"
            );
        };
        for ((path, at, name), (_, past, _)) in at.iter().zip(&past) {
            let item = format!("{path}/{name}");
            let reply = send_as(&app, "POST", path, content_type, past).await;
            refused(&reply, path);
            let got = admin_call(&app, "GET", &item, None).await;
            assert_eq!(got.status, StatusCode::NOT_FOUND, "{content_type} {item}");

            let reply = send_as(&app, "POST", path, content_type, at).await;
            assert_eq!(
                reply.status,
                StatusCode::CREATED,
                "{content_type} {path}: {}",
                reply.text()
            );
            let read = fetched(&app, &item).await;
            assert_eq!(read["metadata"]["name"], *name);
            // A list wraps the object in two more levels: read as text.
            let list = admin_call(&app, "GET", path, None).await;
            assert_eq!(list.status, StatusCode::OK, "{item}");
            assert!(
                list.text().contains(&format!(r#""name":"{name}""#)),
                "{item}"
            );
            let reply = send_as(&app, "PUT", &item, content_type, at).await;
            assert_eq!(
                reply.status,
                StatusCode::OK,
                "{content_type} {item}: {}",
                reply.text()
            );

            let before = fetched(&app, &item).await;
            let reply = send_as(&app, "PUT", &item, content_type, past).await;
            refused(&reply, &item);
            assert_eq!(
                fetched(&app, &item).await,
                before,
                "{content_type} {item} unchanged"
            );
        }
    }
}

// R-RES-031: `-0` at an integer field is 0, as Go reads it; `-0.0` and `1e2` are type errors
// quoting the literal; a lone surrogate escape is U+FFFD.
#[tokio::test]
async fn negative_zero_and_lone_surrogates_read_as_go_reads_them() {
    let (app, _) = app().await;
    let deployment = |name: &str, replicas: &str| {
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}"}},
                "spec":{{"replicas":{replicas},"selector":{{"matchLabels":{{"app":"a"}}}},
                  "template":{{"metadata":{{"labels":{{"app":"a"}}}},"spec":{{"containers":[{{"name":"a","image":"i"}}]}}}}}}}}"#
        )
    };
    let zero = created(&app, DEPLOY_PATH, &deployment("z", "-0")).await;
    assert_eq!(zero["spec"]["replicas"], 0);
    for (literal, name) in [("-0.0", "f"), ("1e2", "e")] {
        let reply = admin_call(&app, "POST", DEPLOY_PATH, Some(&deployment(name, literal))).await;
        let s = assert_status(&reply, 400, "BadRequest");
        assert_eq!(
            s["message"],
            format!(
                "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal number {literal} into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
        );
    }
    let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: yml}\nspec:\n  replicas: 1e2\n  \
                selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    \
                spec: {containers: [{name: a, image: i}]}\n";
    let reply = send_as(&app, "POST", DEPLOY_PATH, "application/yaml", yaml).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert_eq!(reply.json()["spec"]["replicas"], 100);

    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s","annotations":{"a":"\ud800"}},
                 "data":{"k":"\udc00x","pair":"\ud83d\ude00","mixed":"\ud800\ud800\udc00"}}"#;
    let made = created(&app, CM_PATH, cm).await;
    assert_eq!(made["metadata"]["annotations"]["a"], "\u{FFFD}");
    assert_eq!(
        made["data"],
        json!({"k": "\u{FFFD}x", "pair": "😀", "mixed": "\u{FFFD}\u{10000}"})
    );
}

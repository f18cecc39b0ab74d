//! Our Protobuf against k8s-pb's: generated values of every message of the table and
//! realistic objects are encoded by us, decoded by the k8s-pb type and re-encoded by prost
//! (the bytes must be identical), and decoded by us back to the same JSON.

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::descriptor::Card;
use super::descriptor::MessageId;
use super::descriptor::Shape;
use super::descriptor::Special;
use super::descriptor::Ty;
use super::descriptor::message;
use super::descriptor::message_named;
use super::descriptor_table::KINDS;
use super::descriptor_table::MESSAGES;
use super::k8s_pb_test_table::reencode;
use super::*;

/// A random JSON value of message `id` (`depth` levels left), with no zero scalar where
/// decoding leaves zeros out, so a round trip gives it back whole.
fn value_of(rng: &mut StdRng, id: MessageId, depth: u32) -> Value {
    let m = message(id);
    if let Shape::Special(special) = m.shape {
        return special_value(rng, special, m.name, depth);
    }
    let mut object = Map::new();
    for field in m.fields {
        if depth == 0 && matches!(field.ty, Ty::Message(_)) || rng.random_bool(0.4) {
            continue;
        }
        let one = |rng: &mut StdRng| scalar(rng, field.ty, field.keep_zero, depth);
        let value = match field.card {
            Card::Inline => {
                if let Value::Object(inner) = one(rng) {
                    object.extend(inner);
                }
                continue;
            }
            Card::Optional => one(rng),
            Card::Repeated => Value::Array((0..rng.random_range(1..3)).map(|_| one(rng)).collect()),
            Card::Map => Value::Object(
                (0..rng.random_range(1..3))
                    .map(|i| (format!("k{i}-{}", rng.random_range(0..9)), one(rng)))
                    .collect(),
            ),
        };
        object.insert(field.json.to_owned(), value);
    }
    Value::Object(object)
}

fn scalar(rng: &mut StdRng, ty: Ty, keep_zero: bool, depth: u32) -> Value {
    let low = i32::from(!keep_zero);
    match ty {
        Ty::String => json!(["a", "é/x", "kube", "z"][rng.random_range(0..4)]),
        Ty::Bytes => json!(["AA==", "aGVsbG8=", "/+8="][rng.random_range(0..3)]),
        Ty::Bool => json!(!keep_zero || rng.random_bool(0.5)),
        Ty::Int32 => json!(if rng.random_bool(0.2) {
            -5
        } else {
            rng.random_range(low..70000)
        }),
        Ty::Int64 => json!(rng.random_range(i64::from(low)..i64::MAX / 3)),
        Ty::Double => json!(0.5 + f64::from(rng.random_range(0..1000))),
        Ty::Message(id) => value_of(rng, id, depth.saturating_sub(1)),
    }
}

fn special_value(rng: &mut StdRng, special: Special, name: &str, depth: u32) -> Value {
    let schema = || {
        message_named(&format!(
            "{}.JsonSchemaProps",
            name.rsplit_once('.').unwrap().0
        ))
    };
    match special {
        Special::Time => json!("2024-02-29T13:14:15Z"),
        Special::MicroTime => json!("2024-02-29T13:14:15.123456Z"),
        Special::Quantity => json!(["100m", "1Gi", "0", "2.5"][rng.random_range(0..4)]),
        Special::IntOrString if rng.random_bool(0.5) => json!(rng.random_range(-3..9000)),
        Special::IntOrString => json!("50%"),
        Special::RawJson => json!({"apiVersion": "v1", "b": [1, "x", null, {"c": true}]}),
        Special::StringList => json!(["a", "b"]),
        Special::SchemaOrBool if rng.random_bool(0.5) => json!(rng.random_bool(0.5)),
        Special::SchemaOrStringArray if rng.random_bool(0.5) => json!(["x", "y"]),
        Special::SchemaOrArray if rng.random_bool(0.5) => {
            json!([value_of(rng, schema().unwrap(), 0), {"type": "string"}])
        }
        Special::SchemaOrBool | Special::SchemaOrStringArray | Special::SchemaOrArray => {
            json!({"type": "object", "description": format!("d{depth}")})
        }
    }
}

/// Checks one value of message `id`: k8s-pb re-encodes our bytes identically, and our
/// decoder gives the value back.
fn check(id: MessageId, value: &Value) {
    let name = message(id).name;
    let bytes = encode_message(id, value).unwrap_or_else(|e| panic!("{name}: {e}\n{value}"));
    let theirs = reencode(name, &bytes).unwrap_or_else(|e| panic!("{name}: k8s-pb: {e}"));
    assert_eq!(
        bytes, theirs,
        "{name}: prost writes other bytes for\n{value}"
    );
    let back = decode_message(id, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    if let Some(path) = first_difference(&back, value) {
        panic!("{name}: the decoded JSON differs at {path}\n{back}\n{value}");
    }
}

/// The path of the first place `a` and `b` differ (object properties in any order).
fn first_difference(a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    None => return Some(format!("{k} (only decoded)")),
                    Some(w) => {
                        if let Some(p) = first_difference(v, w) {
                            return Some(format!("{k}.{p}"));
                        }
                    }
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{k} (lost)"))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(v, w).map(|p| format!("{i}.{p}"))),
        _ => (a != b).then(|| format!("{a} != {b}")),
    }
}

// R-RES-056: every message of every built-in kind, as k8s-pb encodes it.
#[test]
fn generated_values_of_every_message_match_k8s_pb() {
    let mut rng = StdRng::seed_from_u64(16);
    for _ in 0..6 {
        for id in 0..MESSAGES.len() {
            let id = MessageId::try_from(id).unwrap();
            check(id, &value_of(&mut rng, id, 3));
        }
    }
    assert!(KINDS.len() > 150, "the table covers the built-in kinds");
}

fn kind_id(api_version: &str, kind: &str) -> MessageId {
    message_of_kind(Flavor::Kubernetes, api_version, kind).unwrap()
}

fn pod() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": "default",
            "uid": "0b5c8a4e-4a2b-4e7a-9d0c-1b2c3d4e5f60",
            "resourceVersion": "42",
            "creationTimestamp": "2024-05-01T10:00:00Z",
            "labels": {"app": "web", "tier": "front"},
            "annotations": {"note": ""},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                "uid": "u1", "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}]
        },
        "spec": {
            "volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420, "optional": false}}
            ],
            "containers": [{
                "name": "web",
                "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 10},
                "readinessProbe": {"tcpSocket": {"port": 8080}},
                "env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "a"}}}]
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 0,
            "automountServiceAccountToken": false
        },
        "status": {"phase": "Running", "podIP": "10.0.0.7", "startTime": "2024-05-01T10:00:01Z"}
    })
}

// R-RES-056, R-RES-057: realistic objects, lists and metadata round-trip through k8s-pb's
// types, enveloped and bare.
#[test]
fn realistic_objects_match_k8s_pb() {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"spec": {"type": "object", "additionalProperties": {"type": "string"},
                    "x-kubernetes-validations": [{"rule": "self.size() < 3"}],
                    "default": {"a": "b"}, "items": {"type": "integer"}}}}}}]}
    });
    let objects = [
        pod(),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
            "data": {"a": "b", "empty": ""}, "binaryData": {"bin": "AAEC"}}),
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque",
            "data": {"password": "c2VjcmV0"}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "generation": 3},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "d"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
            "spec": {"holderIdentity": "a", "renewTime": "2024-01-01T00:00:00.250000Z", "leaseDurationSeconds": 15}}),
        json!({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "9", "continue": "abc"},
            "items": [{"metadata": {"name": "a"}, "data": {"k": "v"}}, {"metadata": {"name": "b"}}]}),
        json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
            "message": "configmaps \"x\" not found", "reason": "NotFound",
            "details": {"name": "x", "kind": "configmaps"}, "code": 404}),
        crd,
    ];
    for object in objects {
        let (api_version, kind) = (
            object["apiVersion"].as_str().unwrap(),
            object["kind"].as_str().unwrap(),
        );
        let id = kind_id(api_version, kind);
        let mut bare = object.clone();
        bare.as_object_mut()
            .unwrap()
            .retain(|k, _| k != "apiVersion" && k != "kind");
        if kind.ends_with("List") {
            for item in bare["items"].as_array_mut().unwrap() {
                item.as_object_mut()
                    .unwrap()
                    .retain(|k, _| k != "apiVersion" && k != "kind");
            }
        }
        check(id, &bare);
        let enveloped = encode_object(Flavor::Kubernetes, &object).unwrap();
        assert_eq!(enveloped[..4], PREFIX);
        let mut expected = bare.clone();
        let mut with_type = Map::new();
        with_type.insert("apiVersion".into(), json!(api_version));
        with_type.insert("kind".into(), json!(kind));
        with_type.extend(expected.as_object_mut().unwrap().clone());
        expected = Value::Object(with_type);
        assert_eq!(
            decode_object(Flavor::Kubernetes, &enveloped).unwrap(),
            expected
        );
        let unknown = k8s_pb::apimachinery::pkg::runtime::Unknown::decode(&enveloped[4..]).unwrap();
        assert_eq!(
            unknown.encode_to_vec(),
            enveloped[4..],
            "the envelope is prost's"
        );
    }
}

// R-RES-058: an envelope without contentEncoding and contentType is a plain Protobuf object;
// one naming a content encoding is refused.
#[test]
fn unset_content_fields_mean_plain_protobuf() {
    use k8s_pb::apimachinery::pkg::runtime::TypeMeta;
    use k8s_pb::apimachinery::pkg::runtime::Unknown;
    let raw = encode_message(kind_id("v1", "ConfigMap"), &json!({"data": {"a": "b"}})).unwrap();
    let envelope = |content_encoding: Option<&str>| {
        let unknown = Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some("v1".into()),
                kind: Some("ConfigMap".into()),
            }),
            raw: Some(raw.clone()),
            content_encoding: content_encoding.map(str::to_owned),
            content_type: None,
        };
        [&PREFIX[..], &unknown.encode_to_vec()].concat()
    };
    assert_eq!(
        decode_object(Flavor::Kubernetes, &envelope(None)).unwrap(),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}})
    );
    assert_eq!(
        decode_object(Flavor::Kubernetes, &envelope(Some("gzip"))),
        Err(ProtobufError::ContentEncoding)
    );
}

// R-RES-056: the platform flavor spells the group of the envelope as it serves it.
#[test]
fn the_envelope_names_the_flavor_s_group() {
    let role = json!({"apiVersion": "rbac.authorization.platform.io/v1", "kind": "Role",
        "metadata": {"name": "r"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]});
    let bytes = encode_object(Flavor::Platform, &role).unwrap();
    let unwrapped = unwrap(&bytes).unwrap();
    assert_eq!(unwrapped.api_version, "rbac.authorization.platform.io/v1");
    assert_eq!(decode_object(Flavor::Platform, &bytes).unwrap(), role);
    assert!(matches!(
        decode_object(Flavor::Kubernetes, &bytes),
        Err(ProtobufError::UnknownKind { .. })
    ));
}

use prost::Message as _;

// R-RES-057: what a Go client writes (every non-pointer field, zeros included) decodes to
// the JSON Go's encoding of the same struct gives: zeros of `omitempty` fields left out,
// pointer zeros (replicas: 0, automountServiceAccountToken: false) kept.
#[test]
fn go_client_zero_values_decode_as_go_json_does() {
    use k8s_pb::api::apps::v1 as apps;
    use k8s_pb::api::core::v1 as core;
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    let go_meta = |name: &str| meta::ObjectMeta {
        name: Some(name.into()),
        generate_name: Some(String::new()),
        namespace: Some(String::new()),
        self_link: Some(String::new()),
        uid: Some(String::new()),
        resource_version: Some(String::new()),
        generation: Some(0),
        creation_timestamp: Some(meta::Time::default()),
        ..Default::default()
    };
    let container = core::Container {
        name: Some("c".into()),
        image: Some("nginx".into()),
        image_pull_policy: Some(String::new()),
        ports: vec![core::ContainerPort {
            name: Some(String::new()),
            host_port: Some(0),
            container_port: Some(80),
            protocol: Some(String::new()),
            host_ip: Some(String::new()),
        }],
        tty: Some(false),
        ..Default::default()
    };
    let deployment = apps::Deployment {
        metadata: Some(go_meta("d")),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            paused: Some(false),
            min_ready_seconds: Some(0),
            template: Some(core::PodTemplateSpec {
                metadata: Some(go_meta("")),
                spec: Some(core::PodSpec {
                    containers: vec![container],
                    automount_service_account_token: Some(false),
                    restart_policy: Some(String::new()),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: Some(apps::DeploymentStatus::default()),
    };
    let bytes = wrap("apps/v1", "Deployment", &deployment.encode_to_vec());
    let decoded = decode_object(Flavor::Kubernetes, &bytes).unwrap();
    assert_eq!(
        decoded,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 0, "template": {"metadata": {}, "spec": {
                "containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}],
                "automountServiceAccountToken": false}}},
            "status": {}})
    );
}

// A watch frame is a 4-byte big-endian length and a WatchEvent whose object is the enveloped
// object.
#[test]
fn watch_frames_carry_the_enveloped_object() {
    let object = encode_object(Flavor::Kubernetes, &pod()).unwrap();
    let frame = watch_frame("ADDED", &object);
    let len = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(len, frame.len() - 4);
    let event = k8s_pb::apimachinery::pkg::apis::meta::v1::WatchEvent::decode(&frame[4..]).unwrap();
    assert_eq!(event.r#type.as_deref(), Some("ADDED"));
    assert_eq!(event.object.unwrap().raw.unwrap(), object);
}

//! The generator of `descriptor_table.rs` (the message table) and `k8s_pb_test_table.rs` (the
//! k8s-pb types the byte-for-byte tests re-encode with), and the test that fails when either
//! committed file is stale. Run with `APIARY_REGENERATE_PROTOBUF=1` to rewrite them.
//!
//! Inputs: k8s-pb's sources (found through `cargo metadata`), the compiled schemas of the
//! built-in kinds (the JSON names: prost snake-cased the Go JSON names, `volumeID` became
//! `volume_id`, so each field is matched to the schema's property by normalised name), and
//! `zero_fields.txt` (which Go fields' zero values Go's JSON keeps).

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::collections::HashSet;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::registry::builtin;
use crate::registry::builtin::GroupName;
use crate::schema;
use crate::schema::Node;
use crate::schema::NodeId;
use crate::schema::Schema;

/// One parsed k8s-pb field.
#[derive(Debug, Clone)]
struct PbField {
    snake: String,
    tag: u32,
    /// `string`, `bytes`, `bool`, `int32`, `int64`, `double`, `message`.
    ty: String,
    /// `optional`, `repeated`, `map` or (a struct embedded in its parent's JSON) `inline`.
    card: &'static str,
    /// The message type's full name, for message fields and message-valued maps.
    message: Option<String>,
}

/// k8s-pb's sources: messages by full name (fields in declaration order) and the kinds.
#[derive(Default)]
struct Sources {
    messages: BTreeMap<String, Vec<PbField>>,
    /// (apiVersion, kind, message name) of every `impl crate::Resource`.
    resources: Vec<(String, String, String)>,
}

fn k8s_pb_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed");
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let path = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "k8s-pb")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("k8s-pb is a dependency");
    Path::new(path)
        .parent()
        .expect("a manifest's directory")
        .join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable k8s-pb sources") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A type path relative to module `module` (`super::super::core::v1::Pod`) as a full name.
fn resolve(module: &[String], path: &str) -> String {
    let mut parts: Vec<String> = module.to_vec();
    let mut segments = path.split("::").peekable();
    if segments.peek() == Some(&"crate") {
        parts.clear();
        segments.next();
    }
    let segments: Vec<&str> = segments.collect();
    for (i, s) in segments.iter().enumerate() {
        match *s {
            "super" => {
                parts.pop();
            }
            name if i + 1 == segments.len() => parts.push(name.to_owned()),
            name => parts.push(name.to_owned()),
        }
    }
    parts.join(".")
}

/// The message type inside a field's Rust type (`Option<Box<X>>`, `Vec<X>`, `BTreeMap<String, X>`).
fn inner_type(rust: &str) -> String {
    let rust = rust
        .trim()
        .trim_end_matches(',')
        .trim_end_matches([',', ' ', '>']);
    let inner = rust
        .rsplit_once(',')
        .map_or(rust, |(_, v)| v)
        .trim_end_matches('>');
    let inner = inner.rsplit('<').next().unwrap_or(inner);
    inner.trim().to_owned()
}

fn parse_attr(attr: &str) -> (String, &'static str, u32) {
    let tag = attr
        .split("tag = \"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .and_then(|t| t.parse().ok())
        .expect("a prost tag");
    if let Some(map) = attr.split("btree_map = \"").nth(1) {
        let value = map.split('"').next().and_then(|m| m.split(", ").nth(1));
        return (value.expect("a map value type").to_owned(), "map", tag);
    }
    let body = attr.trim_start_matches("#[prost(");
    let ty = body
        .split([',', ' '])
        .next()
        .expect("a prost type")
        .to_owned();
    let card = if attr.contains("repeated") {
        "repeated"
    } else {
        "optional"
    };
    (ty, card, tag)
}

fn parse_sources(dir: &Path) -> Sources {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    files.sort();
    let mut sources = Sources::default();
    for file in files {
        let rel = file.strip_prefix(dir).expect("under src");
        let mut module: Vec<String> = rel
            .parent()
            .into_iter()
            .flat_map(|p| p.iter())
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        if rel
            .file_name()
            .is_some_and(|n| n != "mod.rs" && n != "lib.rs")
        {
            module.push(
                rel.file_stem()
                    .expect("a stem")
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        let text = std::fs::read_to_string(&file).expect("a readable source");
        parse_module(&module, &text, &mut sources);
    }
    sources
}

fn parse_module(module: &[String], text: &str, sources: &mut Sources) {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut current: Option<(String, Vec<PbField>)> = None;
    let mut resource: Option<(String, Option<String>, Option<String>)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(rest) = line.strip_prefix("pub struct ") {
            let name = rest.trim_end_matches(" {").trim_end_matches(" {}");
            current = Some((resolve(module, name), Vec::new()));
            if rest.ends_with("{}") {
                let (n, f) = current.take().expect("just set");
                sources.messages.insert(n, f);
            }
        } else if line == "}" {
            if let Some((n, f)) = current.take() {
                sources.messages.insert(n, f);
            }
            if let Some((name, Some(api_version), Some(kind))) = resource.take() {
                sources.resources.push((api_version, kind, name));
            }
        } else if line.starts_with("#[prost(") && current.is_some() {
            let (ty, card, tag) = parse_attr(line);
            let mut decl = String::new();
            let mut j = i + 1;
            while j < lines.len() {
                decl.push_str(lines[j]);
                decl.push(' ');
                let open = decl.matches('<').count();
                if lines[j].ends_with(',') && open == decl.matches('>').count() {
                    break;
                }
                j += 1;
            }
            let (snake, rust) = decl
                .trim_start_matches("pub ")
                .split_once(':')
                .expect("a field declaration");
            let message = (ty == "message").then(|| resolve(module, &inner_type(rust)));
            let fields = &mut current.as_mut().expect("inside a struct").1;
            fields.push(PbField {
                snake: snake.trim().trim_start_matches("r#").to_owned(),
                tag,
                ty,
                card,
                message,
            });
            i = j;
        } else if let Some(rest) = line.strip_prefix("impl crate::Resource for ") {
            resource = Some((resolve(module, rest.trim_end_matches(" {")), None, None));
        } else if let Some((_, api_version, kind)) = resource.as_mut() {
            let value = || line.split('"').nth(1).map(str::to_owned);
            if line.starts_with("const API_VERSION") {
                *api_version = value();
            } else if line.starts_with("const KIND") {
                *kind = value();
            }
        }
        i += 1;
    }
}

/// Lower case, letters and digits only: `volume_id` and `volumeID` both read `volumeid`.
fn normalise(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .flat_map(char::to_lowercase)
        .collect()
}

fn lower_camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn special(name: &str) -> Option<&'static str> {
    let short = name.rsplit('.').next().unwrap_or(name);
    let meta = name.starts_with("apimachinery.");
    let extensions = name.starts_with("apiextensions_apiserver.");
    Some(match short {
        "Time" if meta => "Time",
        "MicroTime" if meta => "MicroTime",
        "Quantity" if name.starts_with("apimachinery.pkg.api.resource") => "Quantity",
        "IntOrString" => "IntOrString",
        "RawExtension" | "FieldsV1" if meta => "RawJson",
        "Json" if extensions => "RawJson",
        "JsonSchemaPropsOrArray" if extensions => "SchemaOrArray",
        "JsonSchemaPropsOrBool" if extensions => "SchemaOrBool",
        "JsonSchemaPropsOrStringArray" if extensions => "SchemaOrStringArray",
        "ExtraValue" => "StringList",
        _ => return None,
    })
}

/// The schema node below a property: arrays and maps give their values' node.
fn value_node(schema: &Schema, id: NodeId) -> NodeId {
    match schema.node(id) {
        Node::Array(items) | Node::Map(items) => *items,
        _ => id,
    }
}

/// A kind of the table: group, version, kind, message and (for a resource's own kind) plural.
type KindRow = (GroupName, String, String, String, &'static str);

/// A message's place in a compiled schema.
type Place = (Arc<Schema>, NodeId);

struct Generated {
    table: String,
    k8s_pb: String,
}

/// The Go fields whose zero value Go's JSON keeps, as `(package, struct, json)` with the
/// struct normalised.
fn zero_fields() -> HashSet<(String, String, String)> {
    include_str!("zero_fields.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut parts = l.split(' ');
            Some((
                parts.next()?.to_owned(),
                normalise(parts.next()?),
                parts.next()?.to_owned(),
            ))
        })
        .collect()
}

fn generate() -> Generated {
    use k8s_openapi::api::authentication::v1::TokenRequest;
    use k8s_openapi::api::autoscaling::v1::Scale;
    use k8s_openapi::api::policy::v1::Eviction;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;

    let sources = parse_sources(&k8s_pb_dir());
    let by_kind: HashMap<(&str, &str), &str> = sources
        .resources
        .iter()
        .map(|(v, k, m)| ((v.as_str(), k.as_str()), m.as_str()))
        .collect();
    let api_version = |group: GroupName, version: &str| match group {
        GroupName::Core => version.to_owned(),
        other => format!("{}/{version}", other.storage_name()),
    };
    // Roots with a schema first, so every message that has one is named from it.
    let mut roots: Vec<(String, Option<Arc<Schema>>)> = Vec::new();
    let mut kinds: Vec<KindRow> = Vec::new();
    for row in builtin::rows() {
        let row_version = api_version(row.group, row.version);
        let Some(message) = by_kind.get(&(row_version.as_str(), row.kind)) else {
            continue;
        };
        let schema = (row.schema())().expect("built-in schemas compile");
        roots.push(((*message).to_owned(), Some(schema)));
        kinds.push((
            row.group,
            row.version.into(),
            row.kind.into(),
            (*message).into(),
            row.plural,
        ));
        let list = format!("{message}List");
        if sources.messages.contains_key(&list) {
            kinds.push((
                row.group,
                row.version.into(),
                row.list_kind.into(),
                list,
                "",
            ));
        }
    }
    let meta = "apimachinery.pkg.apis.meta.v1";
    let extra: [(&str, schema::SchemaFn); 5] = [
        (
            "api.authentication.v1.TokenRequest",
            schema::of::<TokenRequest>,
        ),
        ("api.autoscaling.v1.Scale", schema::of::<Scale>),
        ("api.policy.v1.Eviction", schema::of::<Eviction>),
        ("apimachinery.pkg.apis.meta.v1.Status", schema::of::<Status>),
        (
            "apimachinery.pkg.apis.meta.v1.DeleteOptions",
            schema::of::<DeleteOptions>,
        ),
    ];
    for (name, schema) in extra {
        roots.push((
            name.to_owned(),
            Some(schema().expect("meta schemas compile")),
        ));
    }
    for (group, version, kind, message) in [
        (
            GroupName::Plain("autoscaling"),
            "v1",
            "Scale",
            "api.autoscaling.v1.Scale",
        ),
        (
            GroupName::Plain("policy"),
            "v1",
            "Eviction",
            "api.policy.v1.Eviction",
        ),
        (
            GroupName::Domain("authentication"),
            "v1",
            "TokenRequest",
            "api.authentication.v1.TokenRequest",
        ),
        (
            GroupName::Core,
            "v1",
            "Status",
            "apimachinery.pkg.apis.meta.v1.Status",
        ),
        (
            GroupName::Domain("meta"),
            "v1",
            "Status",
            "apimachinery.pkg.apis.meta.v1.Status",
        ),
        (
            GroupName::Core,
            "v1",
            "DeleteOptions",
            "apimachinery.pkg.apis.meta.v1.DeleteOptions",
        ),
        (
            GroupName::Domain("meta"),
            "v1",
            "DeleteOptions",
            "apimachinery.pkg.apis.meta.v1.DeleteOptions",
        ),
        (
            GroupName::Domain("meta"),
            "v1",
            "WatchEvent",
            "apimachinery.pkg.apis.meta.v1.WatchEvent",
        ),
        (
            GroupName::Domain("meta"),
            "v1",
            "PartialObjectMetadata",
            "apimachinery.pkg.apis.meta.v1.PartialObjectMetadata",
        ),
        (
            GroupName::Domain("meta"),
            "v1",
            "PartialObjectMetadataList",
            "apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList",
        ),
        (
            GroupName::Domain("meta"),
            "v1beta1",
            "PartialObjectMetadata",
            "apimachinery.pkg.apis.meta.v1.PartialObjectMetadata",
        ),
        (
            GroupName::Domain("meta"),
            "v1beta1",
            "PartialObjectMetadataList",
            "apimachinery.pkg.apis.meta.v1beta1.PartialObjectMetadataList",
        ),
    ] {
        kinds.push((group, version.into(), kind.into(), message.into(), ""));
    }
    for (_, _, _, message, _) in &kinds {
        roots.push((message.clone(), None));
    }
    roots.push((format!("{meta}.ListMeta"), None));

    // Walk the messages from the roots, naming each field from the schema when there is one.
    let zero = zero_fields();
    let mut named: BTreeMap<String, Vec<(PbField, String, bool)>> = BTreeMap::new();
    let mut queue: VecDeque<(String, Option<Place>)> = roots
        .into_iter()
        .map(|(m, s)| (m, s.map(|s| (s.clone(), s.root()))))
        .collect();
    while let Some((name, schema)) = queue.pop_front() {
        if named.contains_key(&name) || special(&name).is_some() {
            continue;
        }
        let fields = sources
            .messages
            .get(&name)
            .unwrap_or_else(|| panic!("k8s-pb has no message {name}"));
        let object = schema.as_ref().and_then(|(s, id)| match s.node(*id) {
            Node::Object(o) => Some(o),
            _ => None,
        });
        let (package, struct_name) = name.rsplit_once('.').expect("a packaged name");
        let mut out = Vec::new();
        for field in fields {
            let property = object.and_then(|o| {
                o.properties
                    .iter()
                    .find(|(p, _)| normalise(p) == normalise(&field.snake))
            });
            // A message field no property names, whose fields are the parent's properties, is
            // a Go struct embedded inline (`Volume.volumeSource`: `hostPath` sits in `Volume`).
            let inline = property.is_none()
                && object.is_some_and(|o| {
                    field.message.as_ref().is_some_and(|m| {
                        sources.messages.get(m).is_some_and(|fields| {
                            fields.iter().any(|f| {
                                o.properties
                                    .iter()
                                    .any(|(p, _)| normalise(p) == normalise(&f.snake))
                            })
                        })
                    })
                });
            let json = property.map_or_else(|| lower_camel(&field.snake), |(p, _)| p.clone());
            let keep_zero =
                zero.contains(&(package.to_owned(), normalise(struct_name), json.clone()));
            if let Some(message) = &field.message {
                let child = match (&schema, property) {
                    (Some((s, _)), Some((_, id))) => Some((s.clone(), value_node(s, *id))),
                    (Some(parent), None) if inline => Some(parent.clone()),
                    _ => None,
                };
                queue.push_back((message.clone(), child));
            }
            let mut field = field.clone();
            if inline {
                field.card = "inline";
            }
            out.push((field, json, keep_zero));
        }
        named.insert(name, out);
    }
    for name in named.keys().cloned().collect::<Vec<_>>() {
        for (field, _, _) in named[&name].clone() {
            if let Some(m) = field.message.filter(|m| special(m).is_some()) {
                named.entry(m).or_default();
            }
        }
    }
    // metav1.Duration (a Go duration string in JSON) has no encoding here: no built-in kind
    // holds one.
    assert!(
        !named.contains_key(&format!("{meta}.Duration")),
        "a kind holds a metav1.Duration"
    );
    render(&named, &kinds)
}

fn render(named: &BTreeMap<String, Vec<(PbField, String, bool)>>, kinds: &[KindRow]) -> Generated {
    let ids: HashMap<&str, usize> = named
        .keys()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut table = String::from(
        "//! GENERATED by `APIARY_REGENERATE_PROTOBUF=1 cargo test -p apiary-api protobuf_table`\n\
         //! (codec/protobuf/generate_test.rs) from k8s-pb's sources and the built-in schemas: the\n\
         //! message table. Do not edit.\n\n\
         use super::descriptor::Card::*;\n\
         use super::descriptor::Field;\n\
         use super::descriptor::KindEntry;\n\
         use super::descriptor::Message;\n\
         use super::descriptor::Shape::*;\n\
         use super::descriptor::Special;\n\
         use super::descriptor::Ty::*;\n\
         use crate::registry::builtin::GroupName;\n\n\
         /// Every message, by id (sorted by name).\n\
         pub(super) static MESSAGES: &[Message] = &[\n",
    );
    for (name, fields) in named {
        let shape = special(name).map_or("Struct".to_owned(), |s| format!("Special(Special::{s})"));
        let mut by_tag: Vec<usize> = (0..fields.len()).collect();
        by_tag.sort_by_key(|i| fields[*i].0.tag);
        let by_tag: Vec<String> = by_tag.iter().map(usize::to_string).collect();
        let _ = writeln!(
            table,
            "    Message {{ name: {name:?}, shape: {shape}, by_tag: &[{}], fields: &[",
            by_tag.join(", ")
        );
        if special(name).is_none() {
            for (f, json, keep_zero) in fields {
                let ty = match (f.ty.as_str(), &f.message) {
                    ("message", Some(m)) => format!("Message({})", ids[m.as_str()]),
                    ("string", _) => "String".into(),
                    ("bytes", _) => "Bytes".into(),
                    ("bool", _) => "Bool".into(),
                    ("int32", _) => "Int32".into(),
                    ("int64", _) => "Int64".into(),
                    ("double", _) => "Double".into(),
                    (other, _) => panic!("field type {other} of {name}"),
                };
                let card = match f.card {
                    "optional" => "Optional",
                    "repeated" => "Repeated",
                    "inline" => "Inline",
                    _ => "Map",
                };
                let _ = writeln!(
                    table,
                    "        Field {{ tag: {}, json: {json:?}, ty: {ty}, card: {card}, keep_zero: {keep_zero} }},",
                    f.tag
                );
            }
        }
        table.push_str("    ] },\n");
    }
    table.push_str(
        "];\n\n/// The kinds with a message.\npub(super) static KINDS: &[KindEntry] = &[\n",
    );
    for (group, version, kind, message, plural) in kinds {
        let group = match group {
            GroupName::Core => "GroupName::Core".to_owned(),
            GroupName::Plain(g) => format!("GroupName::Plain({g:?})"),
            GroupName::Domain(g) => format!("GroupName::Domain({g:?})"),
        };
        let _ = writeln!(
            table,
            "    KindEntry {{ group: {group}, version: {version:?}, kind: {kind:?}, plural: {plural:?}, message: {} }},",
            ids[message.as_str()]
        );
    }
    table.push_str("];\n");

    let mut k8s_pb = String::from(
        "//! GENERATED with descriptor_table.rs (see generate_test.rs): re-encodes message bytes\n\
         //! through the k8s-pb type of each message of the table. Do not edit.\n\n\
         use prost::Message as _;\n\n\
         /// `bytes` decoded as message `name`'s k8s-pb type and encoded again by prost.\n\
         pub(super) fn reencode(name: &str, bytes: &[u8]) -> Result<Vec<u8>, prost::DecodeError> {\n\
         \x20   Ok(match name {\n",
    );
    for name in named.keys() {
        let path = name.replace('.', "::");
        let _ = writeln!(
            k8s_pb,
            "        {name:?} => k8s_pb::{path}::decode(bytes)?.encode_to_vec(),"
        );
    }
    k8s_pb.push_str("        other => panic!(\"no k8s-pb type for {other}\"),\n    })\n}\n");
    Generated { table, k8s_pb }
}

// The committed message table is what k8s-pb's sources and the schemas generate today.
#[test]
fn protobuf_table_is_fresh() {
    let generated = generate();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/codec/protobuf");
    let files = [
        ("descriptor_table.rs", &generated.table),
        ("k8s_pb_test_table.rs", &generated.k8s_pb),
    ];
    for (file, text) in files {
        let path = dir.join(file);
        if std::env::var_os("APIARY_REGENERATE_PROTOBUF").is_some() {
            std::fs::write(&path, text).expect("writable source tree");
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == *text,
            "{file} is stale: run APIARY_REGENERATE_PROTOBUF=1 cargo test -p apiary-api protobuf_table"
        );
    }
}

//! One compiled node of a structural schema: its type and `x-kubernetes-*` markers (what
//! pruning, defaulting and decoding follow) and its value validations (what
//! [`validate`](super::StructuralSchema::validate) checks), compiled from a CRD version's
//! `openAPIV3Schema` once, at most [`MAX_DEPTH`] levels deep.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::Map;
use serde_json::Value;

use super::format;

/// An index into a [`StructuralSchema`](super::StructuralSchema)'s nodes.
pub(super) type Id = usize;

/// The deepest a schema may nest (the CRD validation's limit).
pub(super) const MAX_DEPTH: usize = 64;

/// How a list's items are told apart (`x-kubernetes-list-type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ListType {
    /// `atomic` (or unset): no constraint.
    Atomic,
    /// `set`: every item unique.
    Set,
    /// `map`: items are objects unique by the `x-kubernetes-list-map-keys`.
    Map(Vec<String>),
}

/// A schema node.
#[derive(Debug, Clone)]
pub(super) struct Node {
    /// `type` (empty when unset).
    pub kind: String,
    /// `nullable: true`.
    pub nullable: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown: bool,
    /// `x-kubernetes-embedded-resource: true`.
    pub embedded: bool,
    /// `x-kubernetes-int-or-string: true`.
    pub int_or_string: bool,
    /// `properties`, by name.
    pub properties: BTreeMap<String, Id>,
    /// `additionalProperties` as a schema.
    pub additional: Option<Id>,
    /// `items`.
    pub items: Option<Id>,
    /// `default`, pruned by the schema.
    pub default: Option<Value>,
    /// `x-kubernetes-list-type` with its keys.
    pub list_type: ListType,
    /// `x-kubernetes-map-type: atomic` (server-side apply replaces the object whole).
    pub map_atomic: bool,
    /// The value validations.
    pub checks: Checks,
}

/// The value validations of a node (kube-openapi's validators).
#[derive(Debug, Clone, Default)]
pub(super) struct Checks {
    /// `format`, as validation keeps it (unsupported formats are dropped, as Kubernetes
    /// strips them).
    pub format: String,
    /// `enum`.
    pub enumeration: Vec<Value>,
    /// `maximum` and `exclusiveMaximum`.
    pub maximum: Option<(f64, bool)>,
    /// `minimum` and `exclusiveMinimum`.
    pub minimum: Option<(f64, bool)>,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `maxLength`.
    pub max_length: Option<i64>,
    /// `minLength`.
    pub min_length: Option<i64>,
    /// `pattern`, as written and compiled.
    pub pattern: Option<(String, Regex)>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `required`.
    pub required: Vec<String>,
    /// `allOf`.
    pub all_of: Vec<Id>,
    /// `anyOf`.
    pub any_of: Vec<Id>,
    /// `oneOf`.
    pub one_of: Vec<Id>,
    /// `not`.
    pub not: Option<Id>,
}

impl Node {
    /// The types validation checks a value against (`integer,string` for int-or-string).
    pub fn types(&self) -> Vec<&str> {
        if self.int_or_string {
            vec!["integer", "string"]
        } else if self.kind.is_empty() {
            Vec::new()
        } else {
            vec![self.kind.as_str()]
        }
    }

    /// The node of the object field `name`: a property, or the additional properties.
    pub fn field(&self, name: &str) -> Option<Id> {
        self.properties.get(name).copied().or(self.additional)
    }
}

/// The format validation keeps for a node of `kind` (Kubernetes strips the others).
fn kept_format(kind: &str, format: &str) -> String {
    let kept = match kind {
        "" | "string" => format::known(&format.replace('-', "")),
        "integer" => matches!(format, "int32" | "int64"),
        "number" => matches!(format, "float" | "double"),
        _ => false,
    };
    if kept {
        format.to_owned()
    } else {
        String::new()
    }
}

/// Builds the node arena from a schema value.
#[derive(Default)]
pub(super) struct Compiler {
    /// The nodes compiled so far.
    pub nodes: Vec<Node>,
}

impl Compiler {
    /// Compiles `schema` (at `depth`) and its children; returns its id.
    pub fn compile(&mut self, schema: &Value, depth: usize) -> Result<Id, String> {
        if depth > MAX_DEPTH {
            return Err(format!("the schema nests deeper than {MAX_DEPTH} levels"));
        }
        let Value::Object(s) = schema else {
            return Err("a schema must be an object".to_owned());
        };
        let id = self.nodes.len();
        let kind = str_of(s, "type").to_owned();
        self.nodes.push(Node {
            nullable: bool_of(s, "nullable"),
            preserve_unknown: bool_of(s, "x-kubernetes-preserve-unknown-fields"),
            embedded: bool_of(s, "x-kubernetes-embedded-resource"),
            int_or_string: bool_of(s, "x-kubernetes-int-or-string"),
            properties: BTreeMap::new(),
            additional: None,
            items: None,
            default: s.get("default").cloned(),
            list_type: match str_of(s, "x-kubernetes-list-type") {
                "set" => ListType::Set,
                "map" => ListType::Map(strings_of(s, "x-kubernetes-list-map-keys")),
                _ => ListType::Atomic,
            },
            map_atomic: str_of(s, "x-kubernetes-map-type") == "atomic",
            checks: Checks::default(),
            kind,
        });
        let mut properties = BTreeMap::new();
        if let Some(Value::Object(props)) = s.get("properties") {
            for (name, sub) in props {
                properties.insert(name.clone(), self.compile(sub, depth + 1)?);
            }
        }
        let additional = match s.get("additionalProperties") {
            Some(sub @ Value::Object(_)) => Some(self.compile(sub, depth + 1)?),
            // Any other key is kept, with no schema below it (its objects lose their fields).
            Some(Value::Bool(true)) => Some(self.compile(&Value::Object(Map::new()), depth + 1)?),
            _ => None,
        };
        let items = match s.get("items") {
            Some(sub @ Value::Object(_)) => Some(self.compile(sub, depth + 1)?),
            _ => None,
        };
        let checks = self.checks(s, depth)?;
        let node = &mut self.nodes[id];
        node.properties = properties;
        node.additional = additional;
        node.items = items;
        node.checks = checks;
        Ok(id)
    }

    fn checks(&mut self, s: &Map<String, Value>, depth: usize) -> Result<Checks, String> {
        let number = |key: &str| s.get(key).and_then(Value::as_f64);
        let count = |key: &str| s.get(key).and_then(Value::as_i64);
        let pattern = match s.get("pattern").and_then(Value::as_str) {
            Some(p) => Some((
                p.to_owned(),
                Regex::new(p).map_err(|e| format!("pattern {p:?} does not compile: {e}"))?,
            )),
            None => None,
        };
        let mut branches = |key: &str| -> Result<Vec<Id>, String> {
            match s.get(key) {
                Some(Value::Array(list)) => {
                    list.iter().map(|b| self.compile(b, depth + 1)).collect()
                }
                _ => Ok(Vec::new()),
            }
        };
        let all_of = branches("allOf")?;
        let any_of = branches("anyOf")?;
        let one_of = branches("oneOf")?;
        let not = match s.get("not") {
            Some(sub @ Value::Object(_)) => Some(self.compile(sub, depth + 1)?),
            _ => None,
        };
        Ok(Checks {
            format: kept_format(str_of(s, "type"), str_of(s, "format")),
            enumeration: match s.get("enum") {
                Some(Value::Array(values)) => values.clone(),
                _ => Vec::new(),
            },
            maximum: number("maximum").map(|m| (m, bool_of(s, "exclusiveMaximum"))),
            minimum: number("minimum").map(|m| (m, bool_of(s, "exclusiveMinimum"))),
            multiple_of: number("multipleOf"),
            max_length: count("maxLength"),
            min_length: count("minLength"),
            pattern,
            max_items: count("maxItems"),
            min_items: count("minItems"),
            unique_items: bool_of(s, "uniqueItems"),
            max_properties: count("maxProperties"),
            min_properties: count("minProperties"),
            required: strings_of(s, "required"),
            all_of,
            any_of,
            one_of,
            not,
        })
    }
}

fn str_of<'a>(s: &'a Map<String, Value>, key: &str) -> &'a str {
    s.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn bool_of(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or_default()
}

fn strings_of(s: &Map<String, Value>, key: &str) -> Vec<String> {
    match s.get(key) {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

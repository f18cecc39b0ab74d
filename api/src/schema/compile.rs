//! Turns a schemars JSON schema (with its `$defs`) into a [`Schema`] node arena: each
//! definition is compiled once, so recursive types (JSONSchemaProps) close into cycles.

use std::collections::HashMap;

use serde_json::Map;
use serde_json::Value;

use super::Node;
use super::NodeId;
use super::Object;
use super::Scalar;
use super::Schema;

/// Why a generated schema could not be compiled (a bug in the generator or here, never in a
/// request).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// A `$ref` names a definition the schema does not carry.
    #[error("schema reference {0:?} names no definition")]
    UnknownRef(String),
}

/// The prefixes a schemars `$ref` may carry, by generator settings.
const REF_PREFIXES: [&str; 2] = ["#/$defs/", "#/definitions/"];

struct Compiler<'a> {
    defs: Option<&'a Map<String, Value>>,
    nodes: Vec<Node>,
    by_name: HashMap<&'a str, NodeId>,
}

/// The definitions whose Go types decode in their own way, by name.
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";

/// Compiles a root schema as `SchemaGenerator::into_root_schema_for` produces it; `name` is
/// the root definition's name (the kind's Go type, for error messages).
pub(super) fn compile(root: &Value, name: &str) -> Result<Schema, CompileError> {
    let defs = ["$defs", "definitions"]
        .iter()
        .find_map(|k| root.get(*k).and_then(Value::as_object));
    let mut c = Compiler {
        defs,
        nodes: Vec::new(),
        by_name: HashMap::new(),
    };
    let node = c.node(root, name)?;
    c.nodes.push(node);
    let root = c.nodes.len() - 1;
    Ok(Schema {
        nodes: c.nodes,
        root,
    })
}

impl<'a> Compiler<'a> {
    /// The node of `schema`: a reference resolves to its definition's one node.
    fn id_of(&mut self, schema: &'a Value) -> Result<NodeId, CompileError> {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            return self.definition(reference);
        }
        // `{allOf: [{$ref}], description}` is how OpenAPI 3 settings wrap a described ref.
        if let Some([only]) = schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            return self.id_of(only);
        }
        let node = self.node(schema, "")?;
        self.nodes.push(node);
        Ok(self.nodes.len() - 1)
    }

    fn definition(&mut self, reference: &'a str) -> Result<NodeId, CompileError> {
        let name = REF_PREFIXES
            .iter()
            .find_map(|p| reference.strip_prefix(p))
            .unwrap_or(reference);
        if let Some(id) = self.by_name.get(name) {
            return Ok(*id);
        }
        let body = self
            .defs
            .and_then(|d| d.get(name))
            .ok_or_else(|| CompileError::UnknownRef(reference.to_owned()))?;
        // Reserve the slot first, so a reference back to this definition finds it.
        let id = self.nodes.len();
        self.nodes.push(Node::Any);
        self.by_name.insert(name, id);
        self.nodes[id] = self.node(body, name)?;
        Ok(id)
    }

    /// The node of `schema`, the definition `name` (empty: inline).
    fn node(&mut self, schema: &'a Value, name: &str) -> Result<Node, CompileError> {
        if name == QUANTITY {
            return Ok(Node::Scalar(Scalar::Quantity));
        }
        if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            return Ok(Node::Scalar(Scalar::IntOrString));
        }
        let format = schema.get("format").and_then(Value::as_str);
        let node = match schema.get("type").and_then(Value::as_str) {
            Some("object") => {
                let properties = schema.get("properties").and_then(Value::as_object);
                let additional = schema.get("additionalProperties").filter(|a| a.is_object());
                match (properties, additional) {
                    (Some(props), _) => {
                        let mut properties = Vec::with_capacity(props.len());
                        for (prop_name, prop) in props {
                            properties.push((prop_name.clone(), self.id_of(prop)?));
                        }
                        let required = schema
                            .get("required")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect();
                        Node::Object(Object {
                            name: name.to_owned(),
                            properties,
                            required,
                        })
                    }
                    (None, Some(values)) => Node::Map(self.id_of(values)?),
                    // No properties and no value schema: free-form (RawExtension, FieldsV1).
                    (None, None) => Node::Any,
                }
            }
            Some("array") => match schema.get("items") {
                Some(items) => Node::Array(self.id_of(items)?),
                None => Node::Any,
            },
            Some("string") => Node::Scalar(match format {
                Some("byte") => Scalar::Bytes,
                Some("date-time") => Scalar::Time {
                    micro: name == MICRO_TIME,
                },
                _ => Scalar::String,
            }),
            Some("integer") if format == Some("int32") => Node::Scalar(Scalar::Int32),
            Some("integer") => Node::Scalar(Scalar::Int64),
            Some("number") => Node::Scalar(Scalar::Number),
            Some("boolean") => Node::Scalar(Scalar::Bool),
            Some(_) | None => Node::Any,
        };
        Ok(node)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use serde_json::json;

    use super::super::of;
    use super::*;

    #[test]
    fn config_map_has_its_fields_and_string_maps() {
        let s = of::<ConfigMap>().expect("compiles");
        let Node::Object(root) = s.node(s.root()) else {
            panic!("root is an object");
        };
        assert_eq!(root.go_type(), "v1.ConfigMap");
        assert_eq!(root.required, ["metadata"]);
        let names: Vec<&str> = root.properties.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "apiVersion",
                "binaryData",
                "data",
                "immutable",
                "kind",
                "metadata"
            ]
        );
        let string = Node::Scalar(Scalar::String);
        assert_eq!(s.lookup(&["data", "*"]), Some(&string));
        assert_eq!(
            s.lookup(&["binaryData", "*"]),
            Some(&Node::Scalar(Scalar::Bytes))
        );
        assert_eq!(s.lookup(&["metadata", "labels", "*"]), Some(&string));
        assert_eq!(
            s.lookup(&["metadata", "creationTimestamp"]),
            Some(&Node::Scalar(Scalar::Time { micro: false }))
        );
        assert_eq!(
            s.lookup(&["metadata", "managedFields", "[]", "fieldsV1"]),
            Some(&Node::Any)
        );
        assert_eq!(s.lookup(&["data", "*", "x"]), None);
        assert_eq!(s.lookup(&["bogus"]), None);
    }

    #[test]
    fn deployment_reaches_its_containers() {
        let s = of::<Deployment>().expect("compiles");
        let container = ["spec", "template", "spec", "containers", "[]"];
        let Some(Node::Object(c)) = s.lookup(&container) else {
            panic!("containers hold objects");
        };
        assert!(c.property("imagePullPolicy").is_some());
        assert!(c.property("imagePullPolice").is_none());
        assert_eq!(
            (c.struct_name(), c.go_type().as_str()),
            ("Container", "v1.Container")
        );
        assert_eq!(c.required, ["name"]);
        let port = [&container[..], &["ports", "[]", "containerPort"]].concat();
        assert_eq!(s.lookup(&port), Some(&Node::Scalar(Scalar::Int32)));
        let limits = [&container[..], &["resources", "limits", "*"]].concat();
        assert_eq!(s.lookup(&limits), Some(&Node::Scalar(Scalar::Quantity)));
        assert_eq!(
            s.lookup(&["spec", "strategy", "rollingUpdate", "maxSurge"]),
            Some(&Node::Scalar(Scalar::IntOrString))
        );
        assert_eq!(
            s.lookup(&["spec", "template", "spec", "activeDeadlineSeconds"]),
            Some(&Node::Scalar(Scalar::Int64))
        );
    }

    #[test]
    fn recursive_definitions_close_into_cycles() {
        let s = of::<CustomResourceDefinition>().expect("compiles");
        let props = [
            "spec",
            "versions",
            "[]",
            "schema",
            "openAPIV3Schema",
            "properties",
            "*",
        ];
        let deeper = [&props[..], &props[5..]].concat();
        assert!(matches!(s.lookup(&props), Some(Node::Object(_))));
        assert_eq!(s.lookup(&props), s.lookup(&deeper));
    }

    #[test]
    fn a_dangling_reference_is_an_error() {
        let root = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}});
        assert_eq!(
            compile(&root, "x"),
            Err(CompileError::UnknownRef("#/$defs/missing".into()))
        );
    }
}

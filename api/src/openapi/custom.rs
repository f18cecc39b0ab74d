//! A custom kind's schema in the OpenAPI documents, as apiextensions publishes it: its
//! definition's `openAPIV3Schema` with the standard `apiVersion`, `kind` and `metadata`
//! properties added; in Swagger 2.0 without what that format cannot say (`nullable`,
//! `anyOf`, `oneOf`, `not`), as Kubernetes strips them there.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::components::Spec;
use super::components::meta;

/// The keywords Swagger 2.0 does not have.
const NOT_IN_V2: [&str; 4] = ["nullable", "anyOf", "oneOf", "not"];

/// The description Kubernetes gives a kind's `apiVersion`.
const API_VERSION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
/// The description Kubernetes gives a kind's `kind`.
const KIND: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
/// The description Kubernetes gives a kind's `metadata`.
const METADATA: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// `schema` (a CRD version's `openAPIV3Schema`) as the document's definition of its kind.
pub fn kind_schema(spec: Spec, schema: &Value) -> Value {
    let mut kind = schema.clone();
    if spec == Spec::V2 {
        strip_v3_only(&mut kind);
    }
    let Value::Object(root) = &mut kind else {
        return kind;
    };
    let properties = root
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(properties) = properties {
        properties.insert(
            "apiVersion".into(),
            json!({"description": API_VERSION, "type": "string"}),
        );
        properties.insert(
            "kind".into(),
            json!({"description": KIND, "type": "string"}),
        );
        let metadata = match spec {
            Spec::V2 => json!({"$ref": format!("{}{}", spec.ref_prefix(), meta("ObjectMeta")),
                               "description": METADATA}),
            Spec::V3 => json!({"allOf": [spec.reference(&meta("ObjectMeta"))],
                               "description": METADATA}),
        };
        properties.insert("metadata".into(), metadata);
    }
    kind
}

/// Removes the keywords Swagger 2.0 lacks, at every level (the schema is a validated CRD's,
/// so its depth is bounded).
fn strip_v3_only(schema: &mut Value) {
    match schema {
        Value::Object(m) => {
            for keyword in NOT_IN_V2 {
                m.remove(keyword);
            }
            m.values_mut().for_each(strip_v3_only);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_v3_only),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The standard fields are added; Swagger 2.0 loses the keywords it lacks.
    #[test]
    fn a_custom_kind_gets_the_standard_fields() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "nullable": true,
                     "properties": {"n": {"anyOf": [{"type": "integer"}], "type": "integer"}}}}});
        let v3 = kind_schema(Spec::V3, &schema);
        assert_eq!(v3["properties"]["spec"]["nullable"], true);
        assert_eq!(v3["properties"]["kind"]["type"], "string");
        assert_eq!(
            v3["properties"]["metadata"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        let v2 = kind_schema(Spec::V2, &schema);
        assert!(v2["properties"]["spec"].get("nullable").is_none());
        assert!(
            v2["properties"]["spec"]["properties"]["n"]
                .get("anyOf")
                .is_none()
        );
        assert_eq!(
            v2["properties"]["metadata"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
    }
}

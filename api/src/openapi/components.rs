//! The schemas of the documents: every served kind's schema from k8s-openapi's schemars
//! (definition names as upstream's, `io.k8s.api.apps.v1.Deployment`), the list kinds, and
//! the meta/v1 types the operations use, with `x-kubernetes-group-version-kind` on each kind
//! (groups spelled as the flavor serves them), the list/map/patch markers on the properties,
//! and `metadata` dropped from `required` (the Rust field is not optional, Kubernetes' is).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta_v1;
use k8s_openapi::apimachinery::pkg::version::Info;
use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::custom;
use super::markers;
use super::served::KindSchema;
use super::served::Served;

/// The meta/v1 prefix of definition names.
const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";

/// Which OpenAPI version a document is, which decides how references look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spec {
    /// Swagger 2.0: `#/definitions/`, `$ref` beside its `description`.
    V2,
    /// OpenAPI 3.0: `#/components/schemas/`, a described `$ref` wrapped in `allOf`.
    V3,
}

impl Spec {
    /// The prefix of a reference to a definition.
    pub fn ref_prefix(self) -> &'static str {
        match self {
            Self::V2 => "#/definitions/",
            Self::V3 => "#/components/schemas/",
        }
    }

    /// A reference to the definition `name`.
    pub fn reference(self, name: &str) -> Value {
        json!({"$ref": format!("{}{name}", self.ref_prefix())})
    }

    /// A reference carrying a description, in the version's shape.
    fn described_reference(self, name: &str, description: &str) -> Value {
        match self {
            Self::V2 => {
                json!({"$ref": format!("{}{name}", self.ref_prefix()), "description": description})
            }
            Self::V3 => json!({"allOf": [self.reference(name)], "description": description}),
        }
    }

    fn generator(self) -> SchemaGenerator {
        match self {
            Self::V2 => SchemaSettings::draft07().with(|s| {
                s.definitions_path = "/definitions".into();
                s.meta_schema = None;
                // Swagger 2.0 keeps `$ref` next to `description`, as upstream's v2 does.
                s.transforms.clear();
            }),
            Self::V3 => SchemaSettings::openapi3().with(|s| s.meta_schema = None),
        }
        .into_generator()
    }
}

/// The definition name of a meta/v1 type (`Status` -> `io.k8s...meta.v1.Status`).
pub fn meta(name: &str) -> String {
    format!("{META}{name}")
}

/// The definition name of `io.k8s.apimachinery.pkg.version.Info` (`/version`).
pub const VERSION_INFO: &str = "io.k8s.apimachinery.pkg.version.Info";

/// The definitions of one document version, and where each served row's kinds live.
pub struct Definitions {
    /// Every definition by name.
    pub schemas: Map<String, Value>,
    /// For each served row (same order): its kind's and its list kind's definition names.
    pub kinds: Vec<KindNames>,
}

/// The definition names of one served row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindNames {
    /// The kind (`io.k8s.api.apps.v1.Deployment`).
    pub kind: String,
    /// The list kind (`io.k8s.api.apps.v1.DeploymentList`).
    pub list: String,
}

/// Builds the definitions of everything `served` needs, for `spec`.
pub fn definitions(served: &[Served], spec: Spec) -> Definitions {
    let mut generator = spec.generator();
    let kinds: Vec<KindNames> = served
        .iter()
        .map(|s| {
            let kind = match &s.schema {
                KindSchema::Builtin(json_schema) => json_schema(&mut generator)
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.rsplit('/').next())
                    .unwrap_or_default()
                    .to_owned(),
                KindSchema::Custom { name, .. } => name.clone(),
            };
            let list = match kind.rsplit_once('.') {
                Some((package, _)) => format!("{package}.{}", s.resource.list_kind),
                None => s.resource.list_kind.clone(),
            };
            KindNames { kind, list }
        })
        .collect();
    generator.subschema_for::<meta_v1::APIGroup>();
    generator.subschema_for::<meta_v1::APIGroupList>();
    generator.subschema_for::<meta_v1::APIResourceList>();
    generator.subschema_for::<meta_v1::APIVersions>();
    generator.subschema_for::<meta_v1::DeleteOptions>();
    generator.subschema_for::<meta_v1::ListMeta>();
    generator.subschema_for::<meta_v1::Patch>();
    generator.subschema_for::<meta_v1::Status>();
    generator.subschema_for::<meta_v1::WatchEvent<meta_v1::Status>>();
    generator.subschema_for::<Info>();
    let mut schemas = generator.take_definitions(true);
    markers::mark(&mut schemas);
    for s in served {
        if let KindSchema::Custom { name, schema } = &s.schema {
            schemas.insert(name.clone(), custom::kind_schema(spec, schema));
        }
    }

    let mut gvks: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut add = |name: &str, group: &str, version: &str, kind: &str| {
        let gvk = json!({"group": group, "kind": kind, "version": version});
        let list = gvks.entry(name.to_owned()).or_default();
        if !list.contains(&gvk) {
            list.push(gvk);
        }
    };
    for (s, names) in served.iter().zip(&kinds) {
        let r = &s.resource;
        add(&names.kind, &r.group, &r.version, &r.kind);
        // Every group version answers deletes with these two meta kinds.
        add(
            &meta("DeleteOptions"),
            &r.group,
            &r.version,
            "DeleteOptions",
        );
        add(&meta("WatchEvent"), &r.group, &r.version, "WatchEvent");
        // Computed kinds that are only created (the reviews, bindings) have no list kind.
        if r.list_kind.is_empty() {
            continue;
        }
        add(&names.list, &r.group, &r.version, &r.list_kind);
        if !schemas.contains_key(&names.list) {
            let list = list_schema(spec, &schemas, names, &r.kind, &r.list_kind);
            schemas.insert(names.list.clone(), list);
        }
    }
    add(&meta("Status"), "", "v1", "Status");
    for (name, list) in gvks {
        if let Some(Value::Object(schema)) = schemas.get_mut(&name) {
            drop_required_metadata(schema);
            schema.insert("x-kubernetes-group-version-kind".into(), list.into());
        }
    }
    Definitions { schemas, kinds }
}

/// The schema of a list kind (k8s-openapi has none: its `List<T>` is generic).
fn list_schema(
    spec: Spec,
    schemas: &Map<String, Value>,
    names: &KindNames,
    kind: &str,
    list_kind: &str,
) -> Value {
    // apiVersion and kind read as in every kind; take the kind's own text.
    let property = |name: &str| {
        schemas
            .get(&names.kind)
            .and_then(|k| k.pointer(&format!("/properties/{name}")))
            .cloned()
            .unwrap_or_else(|| json!({"type": "string"}))
    };
    json!({
        "description": format!("{list_kind} is a list of {kind} objects."),
        "type": "object",
        "properties": {
            "apiVersion": property("apiVersion"),
            "items": {
                "description": format!("Items is the list of {kind} objects."),
                "type": "array",
                "items": spec.reference(&names.kind),
            },
            "kind": property("kind"),
            "metadata": spec.described_reference(
                &meta("ListMeta"),
                "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
            ),
        },
        "required": ["items"],
    })
}

fn drop_required_metadata(schema: &mut Map<String, Value>) {
    let Some(Value::Array(required)) = schema.get_mut("required") else {
        return;
    };
    required.retain(|r| r != "metadata");
    if required.is_empty() {
        schema.remove("required");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flavor::Flavor;
    use crate::openapi::served::served;
    use crate::registry::Registry;

    #[test]
    fn kinds_carry_their_group_version_kind_in_the_flavor() {
        let registry = Registry::builtin(Flavor::Platform);
        let served = served(&registry, Flavor::Platform);
        let defs = definitions(&served, Spec::V3);
        let role = &defs.schemas["io.k8s.api.rbac.v1.ClusterRole"];
        assert_eq!(
            role["x-kubernetes-group-version-kind"],
            json!([{"group": "rbac.authorization.platform.io", "kind": "ClusterRole", "version": "v1"}])
        );
        let deployment = &defs.schemas["io.k8s.api.apps.v1.Deployment"];
        assert!(
            !deployment["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|f| f == "metadata"))
        );
        assert_eq!(
            deployment["properties"]["spec"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"
        );
        let list = &defs.schemas["io.k8s.api.apps.v1.DeploymentList"];
        assert_eq!(
            list["x-kubernetes-group-version-kind"][0]["kind"],
            "DeploymentList"
        );
        let delete = defs.schemas[&meta("DeleteOptions")]["x-kubernetes-group-version-kind"]
            .as_array()
            .map_or(0, Vec::len);
        assert!(
            delete > 10,
            "one DeleteOptions GVK per served group version"
        );

        let containers = &defs.schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
        assert_eq!(containers["x-kubernetes-list-type"], "map");
        assert_eq!(containers["x-kubernetes-list-map-keys"], json!(["name"]));

        let v2 = definitions(&served, Spec::V2);
        assert_eq!(
            v2.schemas["io.k8s.api.apps.v1.Deployment"]["properties"]["spec"]["$ref"],
            "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"
        );
    }
}

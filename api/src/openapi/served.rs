//! The served rows as the OpenAPI documents see them: each served resource type with its
//! group's name for operation ids and its schema (a built-in row's JSON schema generator, or
//! a custom kind's schema from its definition), and the group versions they fall into.

use std::sync::Arc;

use serde_json::Value;

use crate::flavor::Flavor;
use crate::registry::Registry;
use crate::registry::ResourceType;
use crate::registry::builtin;
use crate::registry::builtin::GroupName;
use crate::registry::builtin::JsonSchemaFn;

/// Where a served kind's schema comes from.
#[derive(Clone)]
pub enum KindSchema {
    /// A built-in row's: adds the kind's schema to a generator.
    Builtin(JsonSchemaFn),
    /// A custom kind's `openAPIV3Schema`, under its definition name
    /// (`com.example.stable.v1.CronTab`: the group reversed, the version, the kind).
    Custom {
        /// The definition name.
        name: String,
        /// The schema, as its definition gives it.
        schema: Arc<Value>,
    },
}

/// One served resource type.
#[derive(Clone)]
pub struct Served {
    /// The type as served (group in the flavor, served subresources only).
    pub resource: ResourceType,
    /// The group as operation ids spell it: `core`, a built-in group without the flavor's
    /// domain (ids do not depend on the flavor), a custom group as it is.
    pub operation_group: String,
    /// The kind's schema.
    pub schema: KindSchema,
}

impl Served {
    /// The document key of its group version: `api/v1` or `apis/<group>/<version>`.
    pub fn group_version_key(&self) -> String {
        group_version_key(&self.resource.group, &self.resource.version)
    }

    /// The group and version as operation ids spell them (`CoreV1`, `RbacAuthorizationV1`).
    pub fn operation_prefix(&self) -> String {
        let mut out: String = self.operation_group.split('.').map(capitalized).collect();
        out.push_str(&capitalized(&self.resource.version));
        out
    }

    /// The tag Kubernetes puts on its operations (`core_v1`, `rbacAuthorization_v1`).
    pub fn tag(&self) -> String {
        let prefix = self.operation_prefix();
        let group_part = &prefix[..prefix.len() - self.resource.version.len()];
        let mut chars = group_part.chars();
        let lowered: String = chars
            .next()
            .map(|c| c.to_ascii_lowercase())
            .into_iter()
            .chain(chars)
            .collect();
        format!("{lowered}_{}", self.resource.version)
    }
}

/// The document key of a group version: `api/v1` or `apis/<group>/<version>`.
pub fn group_version_key(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `word` with its first letter in upper case (`apps` → `Apps`), as operation ids and
/// kind-name prefixes spell group parts.
pub fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase())
        .into_iter()
        .chain(chars)
        .collect()
}

/// Every type `registry` serves in `flavor`, in discovery order: the built-in ones with their
/// table row's data, then the custom ones listed in discovery.
pub fn served(registry: &Registry, flavor: Flavor) -> Vec<Served> {
    let rows = builtin::rows();
    let custom = (registry.custom_resources().served_stores().into_iter()).filter_map(|store| {
        let resource = store.resource().clone();
        let schema = store.custom()?.schema.clone();
        let reversed: Vec<&str> = resource.group.split('.').rev().collect();
        let name = format!(
            "{}.{}.{}",
            reversed.join("."),
            resource.version,
            resource.kind
        );
        Some(Served {
            operation_group: resource.group.clone(),
            schema: KindSchema::Custom { name, schema },
            resource,
        })
    });
    let builtin = registry.stores().filter_map(|store| {
        let resource = store.resource();
        let row = rows.iter().find(|row| {
            let t = row.resource_type(flavor);
            t.group == resource.group
                && t.version == resource.version
                && t.plural == resource.plural
        })?;
        let operation_group = match row.group {
            GroupName::Core => "core",
            GroupName::Plain(name) | GroupName::Domain(name) => name,
        };
        Some(Served {
            resource: resource.clone(),
            operation_group: operation_group.to_owned(),
            schema: KindSchema::Builtin(row.json_schema()),
        })
    });
    builtin.chain(custom).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_names_follow_kubernetes() {
        let registry = Registry::builtin(Flavor::Platform);
        let all = served(&registry, Flavor::Platform);
        assert_eq!(all.len(), registry.stores().count());
        let find = |plural: &str| {
            all.iter()
                .find(|s| s.resource.plural == plural)
                .unwrap_or_else(|| panic!("{plural} served"))
        };
        let roles = find("clusterroles");
        assert_eq!(roles.operation_prefix(), "RbacAuthorizationV1");
        assert_eq!(roles.tag(), "rbacAuthorization_v1");
        assert_eq!(
            roles.group_version_key(),
            "apis/rbac.authorization.platform.io/v1"
        );
        assert_eq!(find("configmaps").operation_prefix(), "CoreV1");
        assert_eq!(find("configmaps").group_version_key(), "api/v1");
        assert_eq!(
            find("flowschemas").operation_prefix(),
            "FlowcontrolApiserverV1"
        );
        assert_eq!(find("deployments").tag(), "apps_v1");
    }
}

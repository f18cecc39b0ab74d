//! One CustomResourceDefinition as the table serves it: each served version as a resource
//! type (kind, list kind, singular, short names and categories from `status.acceptedNames`,
//! the plural of the path from the spec) with a store whose objects live under the storage
//! version's keys, so every version reads and writes one set of objects.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::compiled::Compiled;
use super::conversion::CustomConversion;
use super::conversion::WebhookCalls;
use super::strategy::CustomResourceStrategy;
use super::version_order::compare_versions;
use crate::flavor::Flavor;
use crate::random::RandomSource;
use crate::registry::CRUD_VERBS;
use crate::registry::CustomKind;
use crate::registry::ResourceType;
use crate::registry::ScalePaths;
use crate::registry::Scope;
use crate::registry::StorageLocation;
use crate::registry::Store;
use crate::registry::conversion::VersionConversion;

/// What every custom store is built with (the registry's settings).
#[derive(Clone)]
pub(super) struct Settings {
    pub flavor: Flavor,
    pub max_object_bytes: usize,
    pub random: RandomSource,
    /// How conversion webhooks are called; `None`: they are not (their conversions fail).
    pub webhooks: Option<Arc<WebhookCalls>>,
    /// The server's admission chain.
    pub admission: Option<Arc<crate::admission::Admission>>,
}

/// One definition's served versions.
#[derive(Clone)]
pub(super) struct Definition {
    /// The definition's uid and generation: what its compiled versions were compiled from.
    identity: (String, i64),
    /// Each version's compiled parts, by version name.
    compiled: BTreeMap<String, Arc<Compiled>>,
    /// Whether its names are accepted or it is established: its versions are served
    /// (kube-apiserver's rule; a definition in neither state is not found).
    pub serving: bool,
    /// Whether it is established: discovery lists it.
    pub established: bool,
    /// The served versions' stores, in version priority order.
    pub stores: Vec<Arc<Store>>,
}

fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn strings_at(value: &Value, pointer: &str) -> Vec<String> {
    (value.pointer(pointer).and_then(Value::as_array).into_iter())
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Whether condition `kind` of the definition is `True`.
fn condition_true(crd: &Value, kind: &str) -> bool {
    (crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter())
    .flatten()
    .any(|c| str_at(c, "/type") == kind && str_at(c, "/status") == "True")
}

/// The accepted name at `field`, or the spec's while none is accepted.
fn name_of(crd: &Value, field: &str) -> String {
    match str_at(crd, &format!("/status/acceptedNames/{field}")) {
        "" => str_at(crd, &format!("/spec/names/{field}")).to_owned(),
        accepted => accepted.to_owned(),
    }
}

/// The accepted list at `field` (short names, categories), or the spec's while no kind is
/// accepted.
fn names_of(crd: &Value, field: &str) -> Vec<String> {
    match str_at(crd, "/status/acceptedNames/kind") {
        "" => strings_at(crd, &format!("/spec/names/{field}")),
        _ => strings_at(crd, &format!("/status/acceptedNames/{field}")),
    }
}

/// The resource type of `version` of `crd`, stored as `storage_version`.
fn resource_type(crd: &Value, version: &Value, storage_version: &str) -> ResourceType {
    let group = str_at(crd, "/spec/group").to_owned();
    let plural = str_at(crd, "/spec/names/plural").to_owned();
    let kind = name_of(crd, "kind");
    let list_kind = match name_of(crd, "listKind") {
        list if list.is_empty() => format!("{kind}List"),
        list => list,
    };
    let subresources = ["scale", "status"]
        .into_iter()
        .filter(|s| version.pointer(&format!("/subresources/{s}")).is_some())
        .map(str::to_owned)
        .collect();
    ResourceType {
        version: str_at(version, "/name").to_owned(),
        singular: match name_of(crd, "singular") {
            singular if singular.is_empty() => kind.to_lowercase(),
            singular => singular,
        },
        short_names: names_of(crd, "shortNames"),
        categories: names_of(crd, "categories"),
        scope: match str_at(crd, "/spec/scope") {
            "Cluster" => Scope::Cluster,
            _ => Scope::Namespaced,
        },
        verbs: CRUD_VERBS.iter().map(|v| (*v).to_owned()).collect(),
        subresources,
        storage: StorageLocation {
            key_group: group.clone(),
            plural: plural.clone(),
            group: group.clone(),
            version: storage_version.to_owned(),
            kind: kind.clone(),
        },
        returns_deleted_object: false,
        group,
        kind,
        list_kind,
        plural,
    }
}

/// The warning of a deprecated `version`: its `deprecationWarning`, else Kubernetes' default
/// naming the served, not deprecated version of highest priority above it.
fn deprecation_warning(crd: &Value, version: &Value) -> Option<String> {
    if version.get("deprecated").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    if let Some(warning) = version.get("deprecationWarning").and_then(Value::as_str) {
        return Some(warning.to_owned());
    }
    let (group, kind) = (str_at(crd, "/spec/group"), str_at(crd, "/spec/names/kind"));
    let name = str_at(version, "/name");
    let newer = (crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter())
    .flatten()
    .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
    .filter(|v| v.get("deprecated").and_then(Value::as_bool) != Some(true))
    .map(|v| str_at(v, "/name"))
    .filter(|v| compare_versions(v, name).is_lt())
    .min_by(|a, b| compare_versions(a, b));
    Some(match newer {
        Some(newer) => format!("{group}/{name} {kind} is deprecated; use {group}/{newer} {kind}"),
        None => format!("{group}/{name} {kind} is deprecated"),
    })
}

/// The store of `version` of `crd`, on its own (the storage version's) storage.
fn store_of(
    crd: &Value,
    version: &Value,
    storage_version: &str,
    compiled: &Compiled,
    flavor: Flavor,
) -> Store {
    let scale = version.pointer("/subresources/scale").map(|scale| {
        ScalePaths::new(
            str_at(scale, "/specReplicasPath"),
            str_at(scale, "/statusReplicasPath"),
            scale.get("labelSelectorPath").and_then(Value::as_str),
        )
    });
    let strategy = CustomResourceStrategy {
        status: version.pointer("/subresources/status").is_some(),
        scale: scale.clone(),
        selectable: (version
            .get("selectableFields")
            .and_then(Value::as_array)
            .into_iter())
        .flatten()
        .map(|f| str_at(f, "/jsonPath").to_owned())
        .collect(),
        structural: compiled.structural.clone(),
        rules: compiled.rules.clone(),
        namespace_finalizer: flavor.namespace_finalizer(),
    };
    let kind = CustomKind {
        terminating: crd.pointer("/metadata/deletionTimestamp").is_some(),
        scale,
        schema: compiled.schema.clone(),
        deprecation: deprecation_warning(crd, version),
        columns: compiled.columns.clone(),
    };
    let store = Store::new(
        resource_type(crd, version, storage_version),
        Box::new(strategy),
    )
    .custom_kind(kind);
    match &compiled.structural {
        Some(structural) => store.with_compiled_schema(structural.decode_schema()),
        None => store,
    }
}

/// The served versions of `crd`; `previous` is the definition the table held for it, whose
/// compiled versions are taken again while its uid and generation are the same.
pub(super) fn definition(
    crd: &Value,
    settings: &Settings,
    previous: Option<&Definition>,
) -> Definition {
    let versions: Vec<&Value> = (crd.pointer("/spec/versions").and_then(Value::as_array))
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    let identity = (
        str_at(crd, "/metadata/uid").to_owned(),
        crd.pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0),
    );
    let compiled: BTreeMap<String, Arc<Compiled>> = match previous {
        Some(previous) if previous.identity == identity => previous.compiled.clone(),
        _ => (versions.iter())
            .map(|v| (str_at(v, "/name").to_owned(), Arc::new(Compiled::new(v))))
            .collect(),
    };
    let compiled_of = |version: &Value| {
        (compiled.get(str_at(version, "/name")).cloned())
            .unwrap_or_else(|| Arc::new(Compiled::new(version)))
    };
    let storage = versions
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true));
    let mut served: Vec<&Value> = versions
        .iter()
        .copied()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .collect();
    served.sort_by(|a, b| compare_versions(str_at(a, "/name"), str_at(b, "/name")));
    let conversion: Arc<dyn VersionConversion> =
        Arc::new(CustomConversion::of(crd, settings.webhooks.as_ref()));
    let stores = match storage {
        None => Vec::new(),
        Some(storage) => {
            let storage_version = str_at(storage, "/name");
            let home = || {
                store_of(
                    crd,
                    storage,
                    storage_version,
                    &compiled_of(storage),
                    settings.flavor,
                )
                .reading_versions(conversion.clone(), settings.flavor)
            };
            served
                .into_iter()
                .map(|version| {
                    let store = store_of(
                        crd,
                        version,
                        storage_version,
                        &compiled_of(version),
                        settings.flavor,
                    );
                    let store = if str_at(version, "/name") == storage_version {
                        store.reading_versions(conversion.clone(), settings.flavor)
                    } else {
                        store.stored_in_versions(home(), conversion.clone(), settings.flavor)
                    };
                    let store = store
                        .with_max_object_bytes(settings.max_object_bytes)
                        .with_random(&settings.random);
                    Arc::new(match &settings.admission {
                        Some(admission) => store.with_admission(admission.clone()),
                        None => store,
                    })
                })
                .collect()
        }
    };
    let established = condition_true(crd, "Established");
    Definition {
        identity,
        compiled,
        serving: established || condition_true(crd, "NamesAccepted"),
        established,
        stores,
    }
}

//! CustomResourceDefinition (`apiextensions/v1`): Kubernetes' defaults (singular and list
//! kind from the kind, conversion `None`, webhook service port 443), the stored versions kept
//! in status, and its validation: the name `<plural>.<group>`, the spec's own rules
//! ([`spec`]), each version's schema ([`schema`], structural per [`structural`]), selectable
//! fields ([`path`]), and on update the fields that may not change. A first delete marks the
//! CRD for its cleanup finalizer ([`lifecycle`]); a `status` write takes everything but the
//! spec from the body, as Kubernetes' status strategy does (the finalizer controller removes
//! its finalizer that way), and is validated as that strategy validates it: the status, not
//! the spec.

mod conversion;
pub mod lifecycle;
mod markers;
mod path;
mod rules;
mod schema;
mod spec;
#[cfg(test)]
mod status_tests;
mod structural;
#[cfg(test)]
mod tests;
mod view;

use chrono::DateTime;
use chrono::Utc;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Map;
use serde_json::Value;

use crate::flavor::Flavor;
use crate::registry::DeleteAction;
use crate::registry::DeleteOptions;
use crate::registry::Strategy;
use crate::registry::plan_delete;
use crate::validation::FieldError;
use view::Spec;

/// The strategy of `apiextensions/v1` CustomResourceDefinition.
#[derive(Debug)]
pub struct CustomResourceDefinitionStrategy {
    /// The naming flavor: it spells the cleanup finalizer.
    flavor: Flavor,
}

impl CustomResourceDefinitionStrategy {
    /// The strategy of `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        Self { flavor }
    }
}

impl Default for CustomResourceDefinitionStrategy {
    /// The strategy of the Kubernetes flavor.
    fn default() -> Self {
        Self::new(Flavor::Kubernetes)
    }
}

fn object_at<'a>(obj: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    let map = obj.as_object_mut()?;
    let entry = map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if entry.is_null() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut()
}

/// The name of the storage version, if exactly one is marked.
fn storage_version(crd: &Value) -> Option<String> {
    let spec = Spec::of(crd);
    let mut storage = spec.versions.iter().filter(|v| v.storage);
    match (storage.next(), storage.next()) {
        (Some(v), None) => Some(v.name.to_owned()),
        _ => None,
    }
}

/// Adds the storage version to `status.storedVersions` when it is not there yet.
fn record_storage_version(crd: &mut Value) {
    let Some(version) = storage_version(crd) else {
        return;
    };
    let Some(status) = object_at(crd, "status") else {
        return;
    };
    let stored = status
        .entry("storedVersions".to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !stored.is_array() {
        *stored = Value::Array(Vec::new());
    }
    if let Some(list) = stored.as_array_mut()
        && !list.iter().any(|v| v.as_str() == Some(&version))
    {
        list.push(version.into());
    }
}

/// The schemas of every version: present (v1 requires one per version), and valid.
fn validate_schemas(spec: &Spec<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(validation) = spec.validation.top {
        errs.extend(schema::validate_validation(
            validation,
            spec.any_status(),
            "spec.validation",
        ));
    } else {
        for (i, version) in spec.versions.iter().enumerate() {
            let path = format!("spec.versions[{i}].schema");
            match spec.validation.of(version, "schema") {
                Some(v) if v.get("openAPIV3Schema").is_some_and(|s| !s.is_null()) => {
                    let status = spec
                        .subresources_of(version)
                        .and_then(|s| s.get("status"))
                        .is_some_and(|s| !s.is_null());
                    errs.extend(schema::validate_validation(v, status, &path));
                }
                _ => errs.push(FieldError::required(format!("{path}.openAPIV3Schema"), "")),
            }
        }
    }
    errs.extend(validate_selectable_fields(spec));
    errs
}

/// The `openAPIV3Schema` of a version's (or the lifted) `schema`.
fn schema_of(validation: Option<&Value>) -> Option<&Value> {
    validation
        .and_then(|v| v.get("openAPIV3Schema"))
        .filter(|s| !s.is_null())
}

/// Selectable fields, top-level (lifted) or per version, against the schema they select in.
fn validate_selectable_fields(spec: &Spec<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(fields) = spec.selectable_fields.top.and_then(Value::as_array) {
        match schema_of(spec.validation.top) {
            Some(schema) => errs.extend(path::validate_selectable_fields(
                fields,
                schema,
                "spec.selectableFields",
            )),
            None => errs.push(FieldError::invalid(
                "spec.selectableFields",
                "",
                "may only be set when validations.schema is included",
            )),
        }
    }
    for (i, version) in spec.versions.iter().enumerate() {
        let Some(fields) = spec
            .selectable_fields
            .of(version, "selectableFields")
            .and_then(Value::as_array)
        else {
            continue;
        };
        let path = format!("spec.versions[{i}].selectableFields");
        match schema_of(
            spec.validation
                .of(version, "schema")
                .or(spec.validation.top),
        ) {
            Some(schema) => errs.extend(path::validate_selectable_fields(fields, schema, &path)),
            None => errs.push(FieldError::invalid(
                path,
                "",
                "may only be set when `version.schema.openAPIV3Schema` is not included",
            )),
        }
    }
    errs
}

/// What a CRD is checked for on create and on an update of its spec, beyond the generic
/// metadata rules.
fn validate_crd(crd: &Value) -> Vec<FieldError> {
    let spec = Spec::of(crd);
    let mut errs = Vec::new();
    let name = crd
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let required = format!("{}.{}", spec.str("/names/plural"), spec.str("/group"));
    if !name.is_empty() && name != required {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    errs.extend(spec::validate_spec(&spec));
    errs.extend(validate_schemas(&spec));
    let accepted = crd.pointer("/status/acceptedNames").unwrap_or(&Value::Null);
    errs.extend(spec::validate_names(accepted, "status.acceptedNames"));
    errs.extend(spec::validate_stored_versions(crd, &spec));
    errs
}

/// The status rules of a CRD whose spec is unchanged: its accepted names, and its stored
/// versions against the spec.
fn validate_status(crd: &Value) -> Vec<FieldError> {
    let accepted = crd.pointer("/status/acceptedNames").unwrap_or(&Value::Null);
    let mut errs = spec::validate_names(accepted, "status.acceptedNames");
    errs.extend(spec::validate_stored_versions(crd, &Spec::of(crd)));
    errs
}

/// `errs` without the missing required fields the store reports itself on an update (it
/// looks for them before the update's own validation, and would otherwise report them
/// twice).
fn without_required_fields(crd: &Value, mut errs: Vec<FieldError>) -> Vec<FieldError> {
    let mut required = Vec::new();
    if let Ok(schema) = crate::schema::of::<CustomResourceDefinition>() {
        crate::schema::missing_required(&schema, crd, &mut required);
    }
    errs.retain(|e| {
        !required
            .iter()
            .any(|r| r.field == e.field && r.kind == e.kind)
    });
    errs
}

/// What depends on the object before the write (`None` on create): a recognized review
/// version, the API-approval annotation, `preserveUnknownFields`.
fn validate_transition(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = conversion::validate_recognized_review_version(crd, old);
    errs.extend(spec::validate_api_approval(crd, old, &Spec::of(crd)));
    errs.extend(spec::validate_preserve_unknown_fields(crd, old));
    errs
}

impl Strategy for CustomResourceDefinitionStrategy {
    /// apiextensions-apiserver validates a CRD's metadata with apimachinery's rules only: its
    /// cleanup finalizer has a domain but no `/`.
    fn core_finalizer_rule(&self) -> bool {
        false
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    /// Kubernetes' v1 defaults: `names.singular` (the kind, lowercased), `names.listKind`
    /// (the kind + `List`), `conversion.strategy: None`, a webhook service's port 443.
    fn default_fields(&self, obj: &mut Value) {
        let Some(spec) = object_at(obj, "spec") else {
            return;
        };
        if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
            let kind = names
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let empty = |names: &Map<String, Value>, key: &str| {
                names
                    .get(key)
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
            };
            if empty(names, "singular") {
                names.insert("singular".to_owned(), kind.to_lowercase().into());
            }
            if empty(names, "listKind") && !kind.is_empty() {
                names.insert("listKind".to_owned(), format!("{kind}List").into());
            }
        }
        let conversion = spec
            .entry("conversion".to_owned())
            .or_insert_with(|| serde_json::json!({ "strategy": "None" }));
        if let Some(service) = conversion
            .pointer_mut("/webhook/clientConfig/service")
            .and_then(Value::as_object_mut)
        {
            service.entry("port".to_owned()).or_insert(443.into());
        }
    }

    /// A new CRD's status holds only its storage version (and the names no controller has
    /// accepted yet).
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert(
                "status".to_owned(),
                serde_json::json!({ "acceptedNames": { "kind": "", "plural": "" } }),
            );
        }
        record_storage_version(obj);
    }

    /// An update keeps the stored versions and adds a new storage version to them.
    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        record_storage_version(new);
    }

    /// A `status` write takes the body but its spec (the spec stays as stored); unlike the
    /// generic status rule, labels, annotations and finalizers come from the body too, as
    /// Kubernetes' CRD status strategy leaves them.
    fn prepare_for_subresource_update(&self, subresource: &str, new: &mut Value, old: &Value) {
        if subresource != "status" {
            return;
        }
        if let Some(map) = new.as_object_mut() {
            match old.get("spec") {
                Some(spec) => map.insert("spec".to_owned(), spec.clone()),
                None => map.remove("spec"),
            };
        }
    }

    /// The first delete keeps the CRD, marked for its cleanup finalizer with `Terminating`
    /// pending, whatever the options ask (Kubernetes' CRD `REST.Delete`); a later one is the
    /// generic store's.
    fn before_delete(
        &self,
        obj: &mut Value,
        now: DateTime<Utc>,
        options: &DeleteOptions,
    ) -> DeleteAction {
        if obj.pointer("/metadata/deletionTimestamp").is_none() {
            lifecycle::mark_for_deletion(obj, now, self.flavor);
            return DeleteAction::Mark;
        }
        plan_delete(obj, now, options, self.gc_policy(), None)
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_crd(obj);
        errs.extend(validate_transition(obj, None));
        errs
    }

    /// A `status` write is checked as Kubernetes checks one
    /// (`ValidateUpdateCustomResourceDefinitionStatus`): the accepted names, and the stored
    /// versions against the spec, so a spec that validation grew stricter about never blocks
    /// a controller's status write.
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_status(new);
        errs.extend(validate_transition(new, Some(old)));
        errs
    }

    fn status_validated_alone(&self) -> bool {
        true
    }

    /// An update is checked whole; besides, the group and plural never change, and scope and
    /// kind not once the CRD is established.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = without_required_fields(new, validate_crd(new));
        errs.extend(validate_transition(new, Some(old)));
        let mut immutable = vec![
            ("/spec/group", "spec.group"),
            ("/spec/names/plural", "spec.names.plural"),
        ];
        if lifecycle::is_true(old, lifecycle::ESTABLISHED) {
            immutable.push(("/spec/scope", "spec.scope"));
            immutable.push(("/spec/names/kind", "spec.names.kind"));
        }
        for (pointer, path) in immutable {
            let value = new.pointer(pointer).cloned().unwrap_or(Value::Null);
            if Some(&value) != old.pointer(pointer) {
                errs.push(FieldError::invalid(path, value, "field is immutable"));
            }
        }
        errs
    }
}

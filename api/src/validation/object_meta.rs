//! `metadata` of every object, as Kubernetes' `ValidateObjectMeta` (with core's finalizer-name
//! rule) and `ValidateObjectMetaUpdate` check it: names, namespace, labels, annotations,
//! owner references and finalizers; on update, no new finalizers once deletion has begun.

use std::collections::BTreeSet;

use serde_json::Map;
use serde_json::Value;

use super::FieldError;
use super::NameRule;
use super::labels::validate_labels;
use super::labels::validate_qualified_name;
use super::validate_dns_label;
use crate::error::excerpt;
use crate::flavor::Flavor;

/// The largest total size of an object's annotations, keys plus values, in bytes.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// The garbage collector's finalizers, which need no domain; the flavor's namespace
/// finalizer is the third standard name.
const GC_FINALIZERS: [&str; 2] = ["orphan", "foregroundDeletion"];

fn meta_of(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

fn str_of<'a>(map: &'a Map<String, Value>, field: &str) -> &'a str {
    map.get(field).and_then(Value::as_str).unwrap_or_default()
}

fn strings(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Kubernetes' `ValidateObjectMeta` of `obj` (created or updated), whose name follows `rule`
/// and which lives in a namespace when `namespaced`: every problem, each at its
/// `metadata.*` path. A built-in kind (`builtin`: its flavor) also follows core's finalizer
/// rule; a custom resource only the generic one, as upstream.
pub fn validate_object_meta(
    obj: &Value,
    rule: NameRule,
    namespaced: bool,
    builtin: Option<Flavor>,
) -> Vec<FieldError> {
    let empty = Map::new();
    let meta = meta_of(obj).unwrap_or(&empty);
    let mut errs = Vec::new();
    let generate_name = str_of(meta, "generateName");
    if !generate_name.is_empty() {
        for msg in rule.check(generate_name, true) {
            errs.push(FieldError::invalid(
                "metadata.generateName",
                generate_name,
                msg,
            ));
        }
    }
    let name = str_of(meta, "name");
    if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for msg in rule.check(name, false) {
            errs.push(FieldError::invalid("metadata.name", name, msg));
        }
    }
    let namespace = str_of(meta, "namespace");
    if namespaced && namespace.is_empty() {
        errs.push(FieldError::required("metadata.namespace", ""));
    } else if namespaced {
        for msg in validate_dns_label(namespace) {
            errs.push(FieldError::invalid("metadata.namespace", namespace, msg));
        }
    } else if !namespace.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    errs.extend(validate_labels(meta.get("labels"), "metadata.labels"));
    errs.extend(validate_annotations(meta.get("annotations")));
    errs.extend(validate_owner_references(meta.get("ownerReferences")));
    let finalizers = strings(meta.get("finalizers"));
    errs.extend(validate_finalizer_names(&finalizers, "metadata.finalizers"));
    if let Some(flavor) = builtin {
        for (i, finalizer) in finalizers.iter().enumerate() {
            let path = format!("metadata.finalizers[{i}]");
            errs.extend(validate_standard_finalizer(finalizer, &path, flavor));
        }
    }
    errs
}

/// Kubernetes' `ValidateAnnotations`: keys are qualified names in any case, and keys plus
/// values stay within 256 KiB.
fn validate_annotations(annotations: Option<&Value>) -> Vec<FieldError> {
    let Some(Value::Object(map)) = annotations else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    let mut size = 0usize;
    for (key, value) in map {
        for msg in validate_qualified_name(&key.to_lowercase()) {
            errs.push(FieldError::invalid(
                "metadata.annotations",
                key.as_str(),
                msg,
            ));
        }
        size += key.len() + value.as_str().map_or(0, str::len);
    }
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(
            "metadata.annotations",
            TOTAL_ANNOTATION_SIZE_LIMIT,
        ));
    }
    errs
}

/// The version of an `apiVersion` (`v1`, `group/v1`) as Kubernetes' `ParseGroupVersion`
/// reads it: empty when absent or malformed.
fn version_of(api_version: &str) -> &str {
    match api_version.split_once('/') {
        None => api_version,
        Some((_, version)) if !version.contains('/') => version,
        Some(_) => "",
    }
}

/// Kubernetes' `ValidateOwnerReferences`: each reference names its owner fully, no core
/// Event owns anything, and at most one reference is the controller. As upstream, the
/// errors name the list, not the entry.
fn validate_owner_references(refs: Option<&Value>) -> Vec<FieldError> {
    const PATH: &str = "metadata.ownerReferences";
    let Some(list) = refs.and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    let mut controller: Option<String> = None;
    for reference in list {
        let Some(r) = reference.as_object() else {
            continue;
        };
        let api_version = str_of(r, "apiVersion");
        let kind = str_of(r, "kind");
        let version = version_of(api_version);
        if version.is_empty() {
            errs.push(FieldError::invalid(
                format!("{PATH}.apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        for field in ["kind", "name", "uid"] {
            if str_of(r, field).is_empty() {
                errs.push(FieldError::invalid(
                    format!("{PATH}.{field}"),
                    "",
                    "must not be empty",
                ));
            }
        }
        if api_version == "v1" && kind == "Event" {
            errs.push(FieldError::invalid(
                PATH,
                reference.clone(),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{kind}/{}", str_of(r, "name"));
            match &controller {
                Some(first) => errs.push(FieldError::invalid(
                    PATH,
                    Value::Array(list.clone()),
                    format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {} and {}",
                        excerpt(first),
                        excerpt(&current)
                    ),
                )),
                None => controller = Some(current),
            }
        }
    }
    errs
}

/// Apimachinery's finalizer rule: each a qualified name (errors at `path`), and not both
/// `orphan` and `foregroundDeletion`.
fn validate_finalizer_names(finalizers: &[&str], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for finalizer in finalizers {
        for msg in validate_qualified_name(finalizer) {
            errs.push(FieldError::invalid(path, *finalizer, msg));
        }
    }
    if GC_FINALIZERS.iter().all(|gc| finalizers.contains(gc)) {
        errs.push(FieldError::invalid(
            path,
            finalizers.to_vec(),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errs
}

/// Core's finalizer rule (`validateKubeFinalizerName`): a name without a domain must be a
/// standard one (the garbage collector's, or `flavor`'s namespace finalizer).
fn validate_standard_finalizer(finalizer: &str, path: &str, flavor: Flavor) -> Option<FieldError> {
    let standard = GC_FINALIZERS.contains(&finalizer) || finalizer == flavor.namespace_finalizer();
    (!finalizer.contains('/') && !standard).then(|| {
        FieldError::invalid(
            path,
            finalizer,
            "name is neither a standard finalizer name nor is it fully qualified",
        )
    })
}

/// Core's `validateFinalizerName` of one finalizer at `path` (a namespace's
/// `spec.finalizers`): a qualified name, and a standard one when it has no domain.
pub fn validate_finalizer_name(finalizer: &str, path: &str, flavor: Flavor) -> Vec<FieldError> {
    let mut errs = validate_finalizer_names(&[finalizer], path);
    errs.extend(validate_standard_finalizer(finalizer, path, flavor));
    errs
}

/// Kubernetes' `ValidateObjectMetaUpdate` beyond what the store keeps from `old` itself
/// (uid, timestamps, generation): an object being deleted gains no finalizers.
pub fn validate_object_meta_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let Some(old_meta) = meta_of(old).filter(|m| m.contains_key("deletionTimestamp")) else {
        return Vec::new();
    };
    let old_finalizers: BTreeSet<&str> = strings(old_meta.get("finalizers")).into_iter().collect();
    let added: BTreeSet<&str> = strings(meta_of(new).and_then(|m| m.get("finalizers")))
        .into_iter()
        .filter(|f| !old_finalizers.contains(f))
        .collect();
    if added.is_empty() {
        return Vec::new();
    }
    let listed: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
    vec![FieldError::forbidden(
        "metadata.finalizers",
        format!(
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
            excerpt(&listed.join(", "))
        ),
    )]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rendered(meta: Value) -> Vec<String> {
        let obj = json!({ "metadata": meta });
        validate_object_meta(&obj, NameRule::DnsSubdomain, true, Some(Flavor::Kubernetes))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_valid_meta_has_no_errors() {
        let meta = json!({
            "name": "a", "namespace": "ns",
            "labels": {"app": "web", "example.com/tier": ""},
            "annotations": {"Example.com/Note": "anything at all"},
            "finalizers": ["kubernetes", "example.com/hold"],
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u", "controller": true},
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "v"}
            ]
        });
        assert!(rendered(meta).is_empty());
    }

    // R-RES-011
    #[test]
    fn names_and_namespace() {
        assert_eq!(
            rendered(json!({"namespace": "ns"})),
            vec!["metadata.name: Required value: name or generateName is required"]
        );
        assert_eq!(
            rendered(json!({"name": "a"})),
            vec!["metadata.namespace: Required value"]
        );
        let obj = json!({"metadata": {"name": "a", "namespace": "ns"}});
        assert_eq!(
            validate_object_meta(&obj, NameRule::DnsSubdomain, false, None)[0].to_string(),
            "metadata.namespace: Forbidden: not allowed on this type"
        );
        let bad = rendered(json!({"name": "a", "namespace": "ns", "generateName": "Web-"}));
        assert_eq!(bad.len(), 1);
        assert!(bad[0].starts_with(
            r#"metadata.generateName: Invalid value: "Web-": a lowercase RFC 1123 subdomain"#
        ));
    }

    // R-RES-028
    #[test]
    fn labels_are_checked() {
        let errs = rendered(json!({"name": "a", "namespace": "ns", "labels": {"a b": "x"}}));
        assert_eq!(
            errs,
            vec![
                r#"metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#
            ]
        );
    }

    // R-RES-028
    #[test]
    fn annotations_keys_and_total_size() {
        let errs = rendered(json!({"name": "a", "namespace": "ns", "annotations": {"a/b/c": "x"}}));
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with(
            r#"metadata.annotations: Invalid value: "a/b/c": a qualified name must consist"#
        ));
        let key = "k".repeat(10);
        let at_limit = "v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT - key.len());
        assert!(
            rendered(
                json!({"name": "a", "namespace": "ns", "annotations": {key.clone(): at_limit}})
            )
            .is_empty()
        );
        let over = "v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT - key.len() + 1);
        assert_eq!(
            rendered(json!({"name": "a", "namespace": "ns", "annotations": {key: over}})),
            vec!["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }

    // R-RES-027
    #[test]
    fn finalizers() {
        assert_eq!(
            rendered(json!({"name": "a", "namespace": "ns", "finalizers": ["kubernetes", "x"]})),
            vec![
                r#"metadata.finalizers[1]: Invalid value: "x": name is neither a standard finalizer name nor is it fully qualified"#
            ]
        );
        let bad =
            rendered(json!({"name": "a", "namespace": "ns", "finalizers": ["example.com/a b"]}));
        assert_eq!(bad.len(), 1);
        assert!(bad[0].starts_with(
            r#"metadata.finalizers: Invalid value: "example.com/a b": name part must consist"#
        ));
        assert_eq!(
            rendered(
                json!({"name": "a", "namespace": "ns", "finalizers": ["orphan", "foregroundDeletion"]})
            ),
            vec![
                r#"metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set"#
            ]
        );
    }

    #[test]
    fn owner_references() {
        let errs = rendered(json!({"name": "a", "namespace": "ns", "ownerReferences": [{}]}));
        assert_eq!(
            errs,
            vec![
                r#"metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty"#,
                r#"metadata.ownerReferences.kind: Invalid value: "": must not be empty"#,
                r#"metadata.ownerReferences.name: Invalid value: "": must not be empty"#,
                r#"metadata.ownerReferences.uid: Invalid value: "": must not be empty"#,
            ]
        );
        let two = json!([
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "uid": "1", "controller": true},
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "b", "uid": "2", "controller": true}
        ]);
        let errs = rendered(json!({"name": "a", "namespace": "ns", "ownerReferences": two}));
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with("metadata.ownerReferences: Invalid value: ["));
        assert!(errs[0].ends_with(r#": Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and ReplicaSet/b"#));
        let event = json!([{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"}]);
        let errs = rendered(json!({"name": "a", "namespace": "ns", "ownerReferences": event}));
        assert_eq!(errs.len(), 1);
        assert!(errs[0].ends_with("/v1, Kind=Event is disallowed from being an owner"));
        let slashes = json!([{"apiVersion": "a/b/c", "kind": "K", "name": "e", "uid": "1"}]);
        assert_eq!(
            rendered(json!({"name": "a", "namespace": "ns", "ownerReferences": slashes})),
            vec![
                r#"metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty"#
            ]
        );
    }

    // R-RES-027, R-RES-060: once deletion has begun, finalizers may go but not come.
    #[test]
    fn no_new_finalizers_while_deleting() {
        let old = json!({"metadata": {"deletionTimestamp": "t", "finalizers": ["example.com/a"]}});
        let removed = json!({"metadata": {"finalizers": []}});
        assert!(validate_object_meta_update(&removed, &old).is_empty());
        let added = json!({"metadata": {"finalizers": ["example.com/a", "example.com/c", "example.com/b"]}});
        assert_eq!(
            validate_object_meta_update(&added, &old)[0].to_string(),
            r#"metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b", "example.com/c"}"#
        );
        let live = json!({"metadata": {"finalizers": []}});
        assert!(validate_object_meta_update(&added, &live).is_empty());
    }
}

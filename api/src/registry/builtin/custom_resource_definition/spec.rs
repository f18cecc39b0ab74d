//! Kubernetes' rules for a CRD's spec outside its schemas: group, scope, names, versions
//! (exactly one storage version, unique RFC 1035 names, deprecation warnings), subresources,
//! printer columns, the stored versions in status, the API-approval annotation of protected groups and
//! `preserveUnknownFields`.

use serde_json::Value;

use super::conversion;
use super::view::Spec;
use super::view::Version;
use super::view::str_of;
use super::view::strings_of;
use crate::validation::FieldError;
use crate::validation::validate_dns_subdomain;
use crate::validation::validate_dns1035_label;

/// The types a printer column may have.
const COLUMN_TYPES: &[&str] = &["boolean", "date", "integer", "number", "string"];
/// The formats a printer column may have.
const COLUMN_FORMATS: &[&str] = &[
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];
/// The annotation that records the approval of an API in a protected group.
pub const API_APPROVED: &str = "api-approved.kubernetes.io";
/// The longest deprecation warning, in bytes.
const MAX_DEPRECATION_WARNING: usize = 256;

/// `spec.group`, `spec.scope`, the versions and names, subresources, columns and
/// conversion (Kubernetes' `validateCustomResourceDefinitionSpec`, without the schemas).
pub fn validate_spec(spec: &Spec<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let group = spec.str("/group");
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else if let msgs @ [_, ..] = validate_dns_subdomain(group).as_slice() {
        errs.push(FieldError::invalid("spec.group", group, msgs.join(",")));
    } else if !group.contains('.') {
        errs.push(FieldError::invalid(
            "spec.group",
            group,
            "should be a domain with at least one dot",
        ));
    }
    match spec.str("/scope") {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            other,
            &["Cluster", "Namespaced"],
        )),
    }
    errs.extend(validate_versions(spec));
    for (field, name) in [
        ("plural", "plural"),
        ("singular", "singular"),
        ("kind", "kind"),
        ("listKind", "listKind"),
    ] {
        if spec.str(&format!("/names/{field}")).is_empty() {
            errs.push(FieldError::required(format!("spec.names.{name}"), ""));
        }
    }
    let names = spec.raw.get("names").unwrap_or(&Value::Null);
    errs.extend(validate_names(names, "spec.names"));
    if let Some(subresources) = spec.subresources.top {
        errs.extend(validate_subresources(subresources, "spec.subresources"));
    }
    if let Some(columns) = spec.columns.top.and_then(Value::as_array) {
        for (i, column) in columns.iter().enumerate() {
            errs.extend(validate_column(
                column,
                &format!("spec.additionalPrinterColumns[{i}]"),
            ));
        }
    }
    errs.extend(conversion::validate_conversion(spec));
    errs
}

/// The versions: RFC 1035 names, unique, exactly one storage version, and each one's
/// deprecation warning, subresources and columns.
fn validate_versions(spec: &Spec<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut unique = true;
    for (i, version) in spec.versions.iter().enumerate() {
        if !seen.insert(version.name) {
            unique = false;
        }
        let path = format!("spec.versions[{i}]");
        let msgs = validate_dns1035_label(version.name);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.name"),
                version.name,
                msgs.join(","),
            ));
        }
        errs.extend(validate_version(spec, version, &path));
    }
    let versions = spec.raw.get("versions").cloned().unwrap_or(Value::Null);
    if !unique {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions.clone(),
            "must contain unique version names",
        ));
    }
    if spec.versions.iter().filter(|v| v.storage).count() != 1 {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions,
            "must have exactly one version marked as storage version",
        ));
    }
    errs
}

/// One version's own deprecation warning, subresources and printer columns.
fn validate_version(spec: &Spec<'_>, version: &Version<'_>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let deprecated = version
        .raw
        .get("deprecated")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if let Some(warning) = version
        .raw
        .get("deprecationWarning")
        .and_then(Value::as_str)
    {
        for msg in deprecation_warning_problems(deprecated, warning) {
            errs.push(FieldError::invalid(
                format!("{path}.deprecationWarning"),
                warning,
                msg,
            ));
        }
    }
    if let Some(subresources) = spec.subresources.of(version, "subresources") {
        errs.extend(validate_subresources(
            subresources,
            &format!("{path}.subresources"),
        ));
    }
    if let Some(columns) = spec
        .columns
        .of(version, "additionalPrinterColumns")
        .and_then(Value::as_array)
    {
        for (i, column) in columns.iter().enumerate() {
            errs.extend(validate_column(
                column,
                &format!("{path}.additionalPrinterColumns[{i}]"),
            ));
        }
    }
    errs
}

/// Kubernetes' `validateDeprecationWarning`.
fn deprecation_warning_problems(deprecated: bool, warning: &str) -> Vec<String> {
    if !deprecated {
        return vec!["can only be set for deprecated versions".to_owned()];
    }
    let mut problems = Vec::new();
    if warning.len() > MAX_DEPRECATION_WARNING {
        problems.push(format!(
            "must be <= {MAX_DEPRECATION_WARNING} characters long"
        ));
    }
    if warning.is_empty() {
        problems.push("must not be an empty string".to_owned());
    }
    if let Some((i, _)) = warning.char_indices().find(|(_, c)| c.is_control()) {
        problems.push(format!(
            "must only contain printable UTF-8 characters; non-printable character found at index {i}"
        ));
    }
    problems
}

/// Kubernetes' `ValidateCustomResourceDefinitionNames` (for `spec.names` and
/// `status.acceptedNames`): RFC 1035 labels, kinds matching one when lowercased.
pub fn validate_names(names: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["plural", "singular"] {
        let value = str_of(names, field);
        let msgs = validate_dns1035_label(value);
        if !value.is_empty() && !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                value,
                msgs.join(","),
            ));
        }
    }
    for field in ["kind", "listKind"] {
        let value = str_of(names, field);
        let msgs = validate_dns1035_label(&value.to_lowercase());
        if !value.is_empty() && !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                value,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    msgs.join(",")
                ),
            ));
        }
    }
    for field in ["shortNames", "categories"] {
        for (i, value) in strings_of(names, field).into_iter().enumerate() {
            let msgs = validate_dns1035_label(value);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(
                    format!("{path}.{field}[{i}]"),
                    value,
                    msgs.join(","),
                ));
            }
        }
    }
    let kind = str_of(names, "kind");
    if !kind.is_empty() && kind == str_of(names, "listKind") {
        errs.push(FieldError::invalid(
            format!("{path}.listKind"),
            kind,
            "kind and listKind may not be the same",
        ));
    }
    errs
}

/// Kubernetes' `validateSimpleJSONPath`.
fn simple_json_path_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        Some("must not be empty")
    } else if !path.starts_with('.') {
        Some("must be a simple json path starting with .")
    } else {
        None
    }
}

/// The scale subresource's paths (Kubernetes' `ValidateCustomResourceDefinitionSubresources`).
fn validate_subresources(subresources: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(scale) = subresources.get("scale").filter(|s| !s.is_null()) else {
        return errs;
    };
    let checks = [
        (
            "specReplicasPath",
            true,
            &[".spec."][..],
            "should be a json path under .spec",
        ),
        (
            "statusReplicasPath",
            true,
            &[".status."][..],
            "should be a json path under .status",
        ),
        (
            "labelSelectorPath",
            false,
            &[".spec.", ".status."][..],
            "should be a json path under either .spec or .status",
        ),
    ];
    for (field, required, prefixes, under) in checks {
        let value = str_of(scale, field);
        let at = format!("{path}.scale.{field}");
        if value.is_empty() {
            if required {
                errs.push(FieldError::required(at, ""));
            }
        } else if let Some(problem) = simple_json_path_problem(value) {
            errs.push(FieldError::invalid(at, value, problem));
        } else if !prefixes.iter().any(|p| value.starts_with(p)) {
            errs.push(FieldError::invalid(at, value, under));
        }
    }
    errs
}

/// One printer column (Kubernetes' `ValidateCustomResourceColumnDefinition`; its internal
/// field name `JSONPath` is the one errors name).
fn validate_column(column: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if str_of(column, "name").is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    }
    let types = format!("must be one of {}", COLUMN_TYPES.join(","));
    match str_of(column, "type") {
        "" => errs.push(FieldError::required(format!("{path}.type"), types)),
        t if !COLUMN_TYPES.contains(&t) => {
            errs.push(FieldError::invalid(format!("{path}.type"), t, types));
        }
        _ => {}
    }
    let format = str_of(column, "format");
    if !format.is_empty() && !COLUMN_FORMATS.contains(&format) {
        errs.push(FieldError::invalid(
            format!("{path}.format"),
            format,
            format!("must be one of {}", COLUMN_FORMATS.join(",")),
        ));
    }
    let json_path = str_of(column, "jsonPath");
    if json_path.is_empty() {
        errs.push(FieldError::required(format!("{path}.JSONPath"), ""));
    } else if let Some(problem) = simple_json_path_problem(json_path) {
        errs.push(FieldError::invalid(
            format!("{path}.JSONPath"),
            json_path,
            problem,
        ));
    }
    errs
}

/// `status.storedVersions` (Kubernetes' `ValidateCustomResourceDefinitionStoredVersions`):
/// not empty, holding the storage version, and only versions still in `spec.versions`.
pub fn validate_stored_versions(crd: &Value, spec: &Spec<'_>) -> Vec<FieldError> {
    const PATH: &str = "status.storedVersions";
    let stored: Vec<&str> = crd
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if stored.is_empty() {
        return vec![FieldError::invalid(
            PATH,
            Value::Array(Vec::new()),
            "must have at least one stored version",
        )];
    }
    let mut errs = Vec::new();
    for version in spec.versions.iter().filter(|v| v.storage) {
        if !stored.contains(&version.name) {
            errs.push(FieldError::invalid(
                PATH,
                Value::from(stored.clone()),
                format!("must have the storage version {}", version.name),
            ));
        }
    }
    for (i, s) in stored.iter().enumerate() {
        if !spec.versions.iter().any(|v| v.name == *s) {
            errs.push(FieldError::invalid(
                format!("{PATH}[{i}]"),
                *s,
                format!("missing from spec.versions; {s} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {s} and removes {s} from status.storedVersions"),
            ));
        }
    }
    errs
}

/// Whether `group` is one of Kubernetes' protected community groups.
fn is_protected_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|d| group == *d || group.ends_with(&format!(".{d}")))
}

/// The state of the API-approval annotation, with Kubernetes' reason.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Approval {
    Invalid,
    Approved,
    Bypassed,
    Missing,
}

fn approval_of(crd: &Value) -> (Approval, String) {
    let value = crd
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(API_APPROVED))
        .and_then(Value::as_str)
        .unwrap_or("");
    if value.is_empty() {
        return (
            Approval::Missing,
            format!(
                "protected groups must have approval annotation {API_APPROVED:?}, see https://github.com/kubernetes/enhancements/pull/1111"
            ),
        );
    }
    if value.starts_with("unapproved") {
        return (Approval::Bypassed, format!("not approved: {value:?}"));
    }
    let is_url = value.split_once("://").is_some_and(|(scheme, rest)| {
        !scheme.is_empty() && !rest.is_empty() && !rest.starts_with('/')
    });
    if is_url {
        return (Approval::Approved, format!("approved in {value}"));
    }
    (
        Approval::Invalid,
        format!(
            "protected groups must have approval annotation {API_APPROVED:?} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"
        ),
    )
}

/// Kubernetes' `validateAPIApproval`: a CRD in a protected group needs the approval
/// annotation, unless an update leaves its state as it was.
pub fn validate_api_approval(crd: &Value, old: Option<&Value>, spec: &Spec<'_>) -> Vec<FieldError> {
    if !is_protected_group(spec.str("/group")) {
        return Vec::new();
    }
    let (state, reason) = approval_of(crd);
    if old.is_some_and(|old| approval_of(old).0 == state) {
        return Vec::new();
    }
    let path = format!("metadata.annotations[{API_APPROVED}]");
    let value = crd
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(API_APPROVED))
        .and_then(Value::as_str)
        .unwrap_or("");
    match state {
        Approval::Approved | Approval::Bypassed => Vec::new(),
        Approval::Missing => vec![FieldError::required(path, reason)],
        Approval::Invalid => vec![FieldError::invalid(path, value, reason)],
    }
}

/// Kubernetes' `validatePreserveUnknownFields`: v1 never turns it on (an old object that
/// had it keeps it).
pub fn validate_preserve_unknown_fields(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let on = |c: &Value| {
        c.pointer("/spec/preserveUnknownFields")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    if old.is_some_and(on) || !on(crd) {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "spec.preserveUnknownFields",
        true,
        "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    )]
}

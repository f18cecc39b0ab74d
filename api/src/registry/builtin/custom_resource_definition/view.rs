//! The internal view of a v1 CustomResourceDefinition that its validation reads, as
//! Kubernetes converts v1 to its internal version before validating: per-version schemas,
//! subresources, printer columns and selectable fields that are identical in every version
//! are lifted to the top level (so a one-version CRD reports `spec.validation...`), and the
//! webhook settings move from `conversion.webhook` to `conversion.webhookClientConfig` /
//! `conversion.conversionReviewVersions`. Field paths in errors follow the internal names.

use serde_json::Value;

/// One field of a spec or version that may be per-version or lifted to the top level.
#[derive(Debug, Clone, Copy)]
pub struct PerVersion<'a> {
    /// The value at the top level (lifted), if every version had the same one.
    pub top: Option<&'a Value>,
    /// Whether the versions' values were lifted (then no version carries its own).
    lifted: bool,
}

/// One entry of `spec.versions`.
#[derive(Debug, Clone, Copy)]
pub struct Version<'a> {
    /// The raw version object.
    pub raw: &'a Value,
    /// `name`.
    pub name: &'a str,
    /// `storage`.
    pub storage: bool,
}

/// The spec of a CRD as its validation reads it.
#[derive(Debug)]
pub struct Spec<'a> {
    /// The raw `spec` object (`Null` when missing).
    pub raw: &'a Value,
    /// `spec.versions`.
    pub versions: Vec<Version<'a>>,
    /// `schema` (internal `validation`).
    pub validation: PerVersion<'a>,
    /// `subresources`.
    pub subresources: PerVersion<'a>,
    /// `additionalPrinterColumns`.
    pub columns: PerVersion<'a>,
    /// `selectableFields`.
    pub selectable_fields: PerVersion<'a>,
}

const NULL: Value = Value::Null;

/// The string at `key` of `v` (`""` when missing or not a string).
pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The boolean at `key` of `v` (`false` when missing or not a boolean).
pub fn bool_of(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The strings of the list at `key` of `v`.
pub fn strings_of<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The schemas of the list at `key` of `schema` (`allOf`, `anyOf`, `oneOf`), with their index.
pub fn each_of<'a>(schema: &'a Value, key: &str) -> impl Iterator<Item = (usize, &'a Value)> {
    schema
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
}

/// Whether `v` is absent: missing, `null`, or an empty list (Go's nil slice after decoding).
fn absent(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

impl<'a> Spec<'a> {
    /// The view of `crd` (a decoded v1 CustomResourceDefinition).
    pub fn of(crd: &'a Value) -> Self {
        let raw = crd.get("spec").unwrap_or(&NULL);
        let versions: Vec<Version<'a>> = raw
            .get("versions")
            .and_then(Value::as_array)
            .map(|vs| {
                vs.iter()
                    .map(|v| Version {
                        raw: v,
                        name: v.get("name").and_then(Value::as_str).unwrap_or(""),
                        storage: v.get("storage").and_then(Value::as_bool).unwrap_or(false),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let lift = |field: &str| {
            let first = versions.first().and_then(|v| v.raw.get(field));
            let identical = !versions.is_empty()
                && versions.iter().all(|v| {
                    let this = v.raw.get(field);
                    (absent(this) && absent(first)) || this == first
                });
            PerVersion {
                top: if identical && !absent(first) {
                    first
                } else {
                    None
                },
                lifted: identical,
            }
        };
        Self {
            raw,
            validation: lift("schema"),
            subresources: lift("subresources"),
            columns: lift("additionalPrinterColumns"),
            selectable_fields: lift("selectableFields"),
            versions,
        }
    }

    /// A string field of the spec (`""` when missing).
    pub fn str(&self, pointer: &str) -> &'a str {
        self.raw
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The subresources that apply to `version`: the top-level ones, or its own.
    pub fn subresources_of(&self, version: &Version<'a>) -> Option<&'a Value> {
        self.subresources
            .of(version, "subresources")
            .or(self.subresources.top)
    }

    /// Whether any version (or the top level) has the status subresource.
    pub fn any_status(&self) -> bool {
        let has = |s: Option<&Value>| {
            s.and_then(|s| s.get("status"))
                .is_some_and(|s| !s.is_null())
        };
        has(self.subresources.top)
            || self
                .versions
                .iter()
                .any(|v| has(self.subresources.of(v, "subresources")))
    }
}

impl<'a> PerVersion<'a> {
    /// `version`'s own value of `field`, unless the versions' values were lifted.
    pub fn of(&self, version: &Version<'a>, field: &str) -> Option<&'a Value> {
        if self.lifted {
            return None;
        }
        version.raw.get(field).filter(|v| !absent(Some(v)))
    }
}

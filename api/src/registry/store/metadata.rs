//! Kubernetes' metadata rules: the namespace from the path, generated names, generation
//! counting, the server-owned fields an update carries over, and `ValidateObjectMeta`.

use serde_json::Map;
use serde_json::Value;

use super::Store;
use crate::error::ApiError;
use crate::random::RandomSource;
use crate::validation::FieldError;

/// Characters of generated name suffixes (Kubernetes' `utilrand.String`: no vowels, no
/// look-alikes, so generated names never spell words).
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Length of a generated name suffix.
const SUFFIX_LEN: usize = 5;

/// Longest `generateName` prefix kept, so prefix + suffix fits a DNS label.
const MAX_PREFIX_LEN: usize = 63 - SUFFIX_LEN;

pub(super) fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub(super) fn meta_mut(obj: &mut Value) -> Result<&mut Map<String, Value>, ApiError> {
    obj.get_mut("metadata")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| ApiError::Internal("object has no metadata".into()))
}

/// `prefix` (cut to fit) and a suffix drawn from `random`.
pub(crate) fn generated_name(prefix: &str, random: &RandomSource) -> String {
    let cut = prefix
        .char_indices()
        .nth(MAX_PREFIX_LEN)
        .map_or(prefix.len(), |(i, _)| i);
    let mut name = prefix[..cut].to_owned();
    for _ in 0..SUFFIX_LEN {
        let i = random.index(SUFFIX_ALPHABET.len());
        name.push(char::from(SUFFIX_ALPHABET[i]));
    }
    name
}

/// The object without `metadata` and `status`: what a generation counts changes of.
fn spec_part(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Value::Object(m) = &mut v {
        m.remove("metadata");
        m.remove("status");
    }
    v
}

/// Sets `obj`'s `metadata.generation` to one more than `old`'s when its spec part changed
/// (an update of a kind that tracks generations; an unchanged spec keeps the generation).
pub(super) fn bump_generation(obj: &mut Value, old: &Value) -> Result<(), ApiError> {
    if spec_part(obj) == spec_part(old) {
        return Ok(());
    }
    let next = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
        + 1;
    meta_mut(obj)?.insert("generation".to_owned(), next.into());
    Ok(())
}

/// Sets `fields` of `obj` to their values in `old` (absent in `old`: removed).
pub(crate) fn keep_fields(obj: &mut Value, old: &Value, fields: &[&str]) {
    let Value::Object(map) = obj else { return };
    for field in fields {
        match old.get(*field) {
            Some(v) => {
                map.insert((*field).to_owned(), v.clone());
            }
            None => {
                map.remove(*field);
            }
        }
    }
}

impl Store {
    /// Puts the path's namespace into the object (namespaced types) or removes it
    /// (cluster-scoped types); a different namespace in the body is a 400.
    pub(super) fn apply_namespace(&self, obj: &mut Value, namespace: &str) -> Result<(), ApiError> {
        let meta = meta_mut(obj)?;
        if !self.resource.is_namespaced() {
            meta.remove("namespace");
            return Ok(());
        }
        let body_ns = meta
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !body_ns.is_empty() && body_ns != namespace {
            return Err(ApiError::BadRequest(
                "the namespace of the provided object does not match the namespace sent on the request".into(),
            ));
        }
        meta.insert("namespace".to_owned(), namespace.into());
        Ok(())
    }

    /// Kubernetes' `ValidateObjectMeta` plus the strategy's own validation.
    pub(super) fn validate_new(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = crate::validation::validate_object_meta(
            obj,
            self.strategy.name_rule(),
            self.resource.is_namespaced(),
            self.builtin.filter(|_| self.strategy.core_finalizer_rule()),
        );
        errs.extend(self.strategy.validate(obj));
        errs
    }

    pub(super) fn invalid(&self, obj: &Value, causes: Vec<FieldError>) -> ApiError {
        ApiError::Invalid {
            kind: self.resource.group_kind(),
            name: meta_str(obj, "name").to_owned(),
            causes: crate::validation::within_budget(causes),
        }
    }

    /// Carries the server-owned metadata of `old` into an update (Kubernetes'
    /// `BeforeUpdate`): uid (a different one is invalid), creation and deletion timestamps,
    /// generation; drops `resourceVersion` (the store assigns it).
    pub(super) fn prepare_update_meta(
        &self,
        obj: &mut Value,
        old: &Value,
    ) -> Result<Vec<FieldError>, ApiError> {
        let mut errs = Vec::new();
        let old_meta = old.get("metadata").cloned().unwrap_or(Value::Null);
        let meta = meta_mut(obj)?;
        meta.remove("resourceVersion");
        let old_uid = old_meta.get("uid").cloned().unwrap_or(Value::Null);
        match meta.get("uid").and_then(Value::as_str) {
            None | Some("") => {
                meta.insert("uid".to_owned(), old_uid);
            }
            Some(uid) if Some(uid) != old_uid.as_str() => {
                errs.push(FieldError::invalid(
                    "metadata.uid",
                    uid,
                    "field is immutable",
                ));
            }
            Some(_) => {}
        }
        for field in ["creationTimestamp", "deletionTimestamp", "generation"] {
            match old_meta.get(field) {
                Some(v) => {
                    meta.insert(field.to_owned(), v.clone());
                }
                None => {
                    meta.remove(field);
                }
            }
        }
        if !meta.contains_key("deletionGracePeriodSeconds")
            && let Some(v) = old_meta.get("deletionGracePeriodSeconds")
        {
            meta.insert("deletionGracePeriodSeconds".to_owned(), v.clone());
        }
        Ok(errs)
    }
}

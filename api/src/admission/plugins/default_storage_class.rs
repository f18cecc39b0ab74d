//! `DefaultStorageClass`: a new PersistentVolumeClaim that names no storage class gets the
//! default StorageClass's name (Kubernetes' plugin of that name).

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use super::default_class::newest_default;
use super::objects::ObjectCache;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::storage::Storage;

/// Sets the default storage class of new claims.
pub struct DefaultStorageClass {
    classes: ObjectCache,
    /// The GA and beta default-class annotations.
    default_marks: [String; 2],
    /// The beta annotation that names a claim's class.
    class_annotation: String,
}

impl DefaultStorageClass {
    /// The plugin reading `storage`'s StorageClasses.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor) -> Self {
        let (group, domain) = (flavor.group_domain(), flavor.label_domain());
        Self {
            classes: ObjectCache::new(storage, &format!("storage.{group}"), "storageclasses"),
            default_marks: [
                format!("storageclass.{domain}/is-default-class"),
                format!("storageclass.beta.{domain}/is-default-class"),
            ],
            class_annotation: format!("volume.beta.{domain}/storage-class"),
        }
    }
}

/// Whether the write creates a PersistentVolumeClaim itself.
pub(super) fn is_claim(attributes: &Attributes<'_>) -> bool {
    attributes.resource.group.is_empty()
        && attributes.resource.plural == "persistentvolumeclaims"
        && attributes.subresource.is_empty()
}

#[async_trait::async_trait]
impl Plugin for DefaultStorageClass {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(claim) = object else {
            return Ok(());
        };
        if attributes.operation != Operation::Create || !is_claim(attributes) {
            return Ok(());
        }
        let named = claim
            .pointer("/spec/storageClassName")
            .is_some_and(|c| !c.is_null())
            || (claim.pointer("/metadata/annotations"))
                .and_then(|a| a.get(&self.class_annotation))
                .is_some();
        if named {
            return Ok(());
        }
        let classes = (self.classes.list().await).map_err(|e| attributes.forbidden(e))?;
        let Some(default) = newest_default(classes, &self.default_marks) else {
            return Ok(());
        };
        let name = default
            .pointer("/metadata/name")
            .cloned()
            .unwrap_or(json!(""));
        if let Some(spec) = claim.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("storageClassName".into(), name);
        }
        Ok(())
    }
}

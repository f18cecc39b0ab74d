//! `DefaultStorageClass`: a new PersistentVolumeClaim that names no storage class gets the
//! default StorageClass's name (Kubernetes' plugin of that name).

use std::sync::Arc;

use serde_json::Value;

use super::default_class::DefaultClass;
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
    default: DefaultClass,
}

impl DefaultStorageClass {
    /// The plugin reading `storage`'s StorageClasses.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor) -> Self {
        let (group, domain) = (flavor.group_domain(), flavor.label_domain());
        let default = DefaultClass {
            classes: ObjectCache::new(storage, &format!("storage.{group}"), "storageclasses"),
            // The GA and the beta default-class annotations.
            marks: vec![
                format!("storageclass.{domain}/is-default-class"),
                format!("storageclass.beta.{domain}/is-default-class"),
            ],
            field: "storageClassName",
            // The beta annotation that names a claim's class.
            annotation: format!("volume.beta.{domain}/storage-class"),
        };
        Self { default }
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
        self.default.fill(attributes, claim).await
    }
}

//! `PersistentVolumeClaimResize`: a claim's storage request may grow only when the claim is
//! bound and its StorageClass sets `allowVolumeExpansion` (Kubernetes' plugin of that name;
//! shrinking is the strategy's refusal).

use std::sync::Arc;

use serde_json::Value;

use super::default_storage_class::is_claim;
use super::objects::ObjectCache;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::storage::Storage;
use crate::validation::parse_quantity_nanos;

/// Checks claim expansions against their class.
pub struct PersistentVolumeClaimResize {
    classes: ObjectCache,
    /// The beta annotation that names a claim's class (it wins over the field).
    class_annotation: String,
}

impl PersistentVolumeClaimResize {
    /// The plugin reading `storage`'s StorageClasses.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor) -> Self {
        let group = format!("storage.{}", flavor.group_domain());
        Self {
            classes: ObjectCache::new(storage, &group, "storageclasses"),
            class_annotation: format!("volume.beta.{}/storage-class", flavor.label_domain()),
        }
    }

    /// The claim's class name, empty when it has none.
    fn class_of<'a>(&self, claim: &'a Value) -> &'a str {
        (claim.pointer("/metadata/annotations"))
            .and_then(|a| a.get(&self.class_annotation))
            .or_else(|| claim.pointer("/spec/storageClassName"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// Whether both versions name the same class and it allows expansion.
    async fn allows_resize(&self, claim: &Value, old: &Value) -> Result<bool, ApiError> {
        let (class, old_class) = (self.class_of(claim), self.class_of(old));
        if class.is_empty() || class != old_class {
            return Ok(false);
        }
        let Some(class) = self.classes.get("", class).await? else {
            return Ok(false);
        };
        Ok(class.get("allowVolumeExpansion").and_then(Value::as_bool) == Some(true))
    }
}

fn requested(claim: &Value) -> i128 {
    (claim
        .pointer("/spec/resources/requests/storage")
        .and_then(Value::as_str))
    .and_then(parse_quantity_nanos)
    .unwrap_or(0)
}

#[async_trait::async_trait]
impl Plugin for PersistentVolumeClaimResize {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let (Some(claim), Some(old)) = (object, old) else {
            return Ok(());
        };
        if attributes.operation != Operation::Update
            || !is_claim(attributes)
            || requested(claim) <= requested(old)
        {
            return Ok(());
        }
        if old.pointer("/status/phase").and_then(Value::as_str) != Some("Bound") {
            return Err(attributes.forbidden("Only bound persistent volume claims can be expanded"));
        }
        if !self.allows_resize(claim, old).await? {
            return Err(attributes.forbidden(
                "only dynamically provisioned pvc can be resized and the storageclass that \
                 provisions the pvc must support resize",
            ));
        }
        Ok(())
    }
}

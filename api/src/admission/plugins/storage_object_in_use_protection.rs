//! `StorageObjectInUseProtection`: new PersistentVolumes and PersistentVolumeClaims get the
//! `<domain>/pv-protection` / `<domain>/pvc-protection` finalizer, so they outlive their use
//! by a pod (Kubernetes' plugin of that name; the protection controllers remove it).

use serde_json::Value;
use serde_json::json;

use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// Adds the protection finalizers on create.
pub struct StorageObjectInUseProtection {
    /// The finalizers of volumes and of claims.
    volume: String,
    claim: String,
}

impl StorageObjectInUseProtection {
    /// The plugin for `flavor`'s finalizer names.
    pub fn new(flavor: Flavor) -> Self {
        let domain = flavor.label_domain();
        Self {
            volume: format!("{domain}/pv-protection"),
            claim: format!("{domain}/pvc-protection"),
        }
    }
}

#[async_trait::async_trait]
impl Plugin for StorageObjectInUseProtection {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let resource = attributes.resource;
        if attributes.operation != Operation::Create
            || !resource.group.is_empty()
            || !attributes.subresource.is_empty()
        {
            return Ok(());
        }
        let finalizer = match resource.plural.as_str() {
            "persistentvolumes" => &self.volume,
            "persistentvolumeclaims" => &self.claim,
            _ => return Ok(()),
        };
        let Some(metadata) =
            (object.and_then(|o| o.get_mut("metadata"))).and_then(Value::as_object_mut)
        else {
            return Ok(());
        };
        let finalizers = metadata.entry("finalizers").or_insert_with(|| json!([]));
        if !finalizers.is_array() {
            *finalizers = json!([]);
        }
        if let Some(list) = finalizers.as_array_mut()
            && !list.iter().any(|f| f.as_str() == Some(finalizer))
        {
            list.push(json!(finalizer));
        }
        Ok(())
    }
}

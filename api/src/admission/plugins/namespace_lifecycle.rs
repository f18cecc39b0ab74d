//! `NamespaceLifecycle`: objects are created only in namespaces that exist and are not
//! terminating, and the system namespaces cannot be deleted. The first rule is checked by the
//! store inside the create's own proposal (registry/store/namespace.rs: a guard on the
//! namespace's version, no extra round trip), which this plugin being enabled turns on
//! ([`crate::admission::Admission::runs`]); the second is this plugin's `validate`.

use serde_json::Value;

use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// The plugin's name, which also turns the store's namespace check on.
pub const NAME: &str = "NamespaceLifecycle";

/// The NamespaceLifecycle admission plugin.
pub struct NamespaceLifecycle {
    /// `default` and the flavor's system and public namespaces.
    immortal: [&'static str; 3],
}

impl NamespaceLifecycle {
    /// The plugin of a server of `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        Self {
            immortal: [
                "default",
                flavor.system_namespace(),
                flavor.public_namespace(),
            ],
        }
    }
}

#[async_trait::async_trait]
impl Plugin for NamespaceLifecycle {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        _object: Option<&Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let resource = attributes.resource;
        let deleting_namespace = attributes.operation == Operation::Delete
            && resource.group.is_empty()
            && resource.plural == "namespaces";
        if deleting_namespace && self.immortal.contains(&attributes.name) {
            return Err(attributes.forbidden("this namespace may not be deleted"));
        }
        Ok(())
    }
}

//! Namespace lifecycle, the store's part of the NamespaceLifecycle admission plugin
//! (admission/plugins/namespace_lifecycle.rs): a namespaced create needs its namespace to
//! exist and not be terminating. The namespace is read from the replica's own state (as the plugin reads its
//! informer cache), with a quorum read only when it is not open there; the create's own
//! transaction checks that the namespace has not changed since.

use serde::Deserialize;

use super::Store;
use super::corrupt;
use crate::error::ApiError;
use crate::registry::StoredJson;
use crate::registry::builtin::namespace_type;
use crate::storage::Guard;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// What a create reads of its namespace (every create reads it, so the rest of the
/// namespace is skipped unparsed).
#[derive(Deserialize)]
struct Phase {
    status: Option<PhaseStatus>,
}

#[derive(Deserialize)]
struct PhaseStatus {
    phase: Option<String>,
}

impl Store {
    /// A namespaced create needs its namespace to exist (404 naming the namespace) and not
    /// be terminating (403 with the `NamespaceTerminating` cause), as Kubernetes'
    /// NamespaceLifecycle admission. `name` names the object (its `generateName` if unnamed).
    /// Answers the [`Guard`] the create proposes with it: the namespace is still at the
    /// version found open, so a namespace that starts terminating meanwhile fails the create's
    /// transaction instead of receiving the object.
    ///
    /// The namespace is read from the replica's own state unless `quorum`; a namespace that
    /// is absent or terminating there is read again with a quorum read, which decides (it
    /// may have just been created, or deleted and created again, through another replica).
    pub(super) async fn check_namespace_open(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        name: &str,
        quorum: bool,
    ) -> Result<Guard, ApiError> {
        let ns_type = namespace_type();
        let key = ns_type.object_key("", namespace);
        let resource = ns_type.group_resource();
        let read = async |consistency| {
            let found = storage
                .get(&key, consistency)
                .await
                .map_err(|e| ApiError::from_storage(e, &resource, namespace))?;
            let Some(found) = found else {
                return Ok(None);
            };
            let ns: Phase = StoredJson::from_stored(found.value)
                .and_then(|s| s.read_as())
                .map_err(|e| corrupt(&key, e))?;
            let terminating = ns.status.and_then(|s| s.phase).as_deref() == Some("Terminating");
            Ok::<_, ApiError>(Some((found.mod_revision, terminating)))
        };
        let local = match quorum {
            true => None,
            false => read(ReadConsistency::Any).await?,
        };
        let found = match local {
            Some((revision, false)) => Some((revision, false)),
            _ => read(ReadConsistency::Linearizable).await?,
        };
        match found {
            None => Err(ApiError::NotFound {
                resource,
                name: namespace.to_owned(),
            }),
            Some((_, true)) => Err(ApiError::NamespaceTerminating {
                resource: self.group_resource(),
                name: name.to_owned(),
                namespace: namespace.to_owned(),
            }),
            Some((mod_revision, false)) => Ok(Guard { key, mod_revision }),
        }
    }
}

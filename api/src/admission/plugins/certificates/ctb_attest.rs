//! `ClusterTrustBundleAttest`: a create or update of a ClusterTrustBundle that names a
//! `spec.signerName` needs `attest` on that signer, unless the update changes only what the
//! garbage collector changes (owner references, finalizers).

use serde_json::Value;

use super::Signers;
use super::signer_name;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;

/// The ClusterTrustBundleAttest admission plugin.
pub struct ClusterTrustBundleAttest {
    signers: Signers,
}

impl ClusterTrustBundleAttest {
    /// The plugin asking `signers` who may attest.
    pub fn new(signers: Signers) -> Self {
        Self { signers }
    }
}

/// The metadata fields a write may change without changing what the object means: the
/// garbage collector's (`ownerReferences`, `finalizers`; Kubernetes'
/// `IsOnlyMutatingGCFields`) and those the server itself sets on every write
/// (`resourceVersion`, `managedFields`, `selfLink`).
const BOOKKEEPING: [&str; 5] = [
    "ownerReferences",
    "finalizers",
    "selfLink",
    "managedFields",
    "resourceVersion",
];

/// Whether `new` differs from `old` only in [`BOOKKEEPING`] fields.
pub(super) fn only_bookkeeping(new: &Value, old: &Value) -> bool {
    let strip = |object: &Value| {
        let mut copy = object.clone();
        if let Some(metadata) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
            for field in BOOKKEEPING {
                metadata.remove(field);
            }
        }
        copy
    };
    strip(new) == strip(old)
}

#[async_trait::async_trait]
impl Plugin for ClusterTrustBundleAttest {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let (Operation::Create | Operation::Update, Some(bundle)) = (attributes.operation, object)
        else {
            return Ok(());
        };
        if !self.signers.writes(attributes, "clustertrustbundles", "") {
            return Ok(());
        }
        // The new object's signer: validation refuses a change of it on update.
        let signer = signer_name(Some(bundle));
        if signer.is_empty() || old.is_some_and(|old| only_bookkeeping(bundle, old)) {
            return Ok(());
        }
        if self.signers.allows(attributes.user, "attest", signer).await {
            return Ok(());
        }
        Err(attributes.forbidden(format!(
            "user not permitted to attest for signerName {signer:?}"
        )))
    }
}

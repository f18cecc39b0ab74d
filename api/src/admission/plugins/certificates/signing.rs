//! `CertificateSigning`: an update of `certificatesigningrequests/status` that changes
//! `status.certificate` or `status.conditions` needs `sign` on the request's signer (the
//! stored request's).

use serde_json::Value;

use super::Signers;
use super::signer_name;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;

/// The CertificateSigning admission plugin.
pub struct CertificateSigning {
    signers: Signers,
}

impl CertificateSigning {
    /// The plugin asking `signers` who may sign.
    pub fn new(signers: Signers) -> Self {
        Self { signers }
    }
}

/// `status.<field>` of `object`, an absent, null, empty string or empty list being the
/// same (Kubernetes compares the decoded fields, where those are all empty).
fn status_field<'a>(object: Option<&'a Value>, field: &str) -> Option<&'a Value> {
    let value = object?.get("status")?.get(field)?;
    let empty = match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    (!empty).then_some(value)
}

/// Whether `new` changes the issued certificate or the conditions of `old`.
pub(super) fn signs(new: Option<&Value>, old: Option<&Value>) -> bool {
    ["certificate", "conditions"]
        .iter()
        .any(|field| status_field(new, field) != status_field(old, field))
}

#[async_trait::async_trait]
impl Plugin for CertificateSigning {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        if attributes.operation != Operation::Update
            || !(self.signers).writes(attributes, "certificatesigningrequests", "status")
            || !signs(object, old)
        {
            return Ok(());
        }
        let signer = signer_name(old);
        if self.signers.allows(attributes.user, "sign", signer).await {
            return Ok(());
        }
        Err(attributes.forbidden(format!(
            "user not permitted to sign requests with signerName {signer:?}"
        )))
    }
}

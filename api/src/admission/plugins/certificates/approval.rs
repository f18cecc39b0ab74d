//! `CertificateApproval`: an update of `certificatesigningrequests/approval` needs `approve`
//! on the request's signer (judged on the stored request, so a changed `signerName` cannot
//! lend its permission).

use serde_json::Value;

use super::Signers;
use super::signer_name;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;

/// The CertificateApproval admission plugin.
pub struct CertificateApproval {
    signers: Signers,
}

impl CertificateApproval {
    /// The plugin asking `signers` who may approve.
    pub fn new(signers: Signers) -> Self {
        Self { signers }
    }
}

#[async_trait::async_trait]
impl Plugin for CertificateApproval {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        _object: Option<&Value>,
        old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        if attributes.operation != Operation::Update
            || !(self.signers).writes(attributes, "certificatesigningrequests", "approval")
        {
            return Ok(());
        }
        let signer = signer_name(old);
        if self
            .signers
            .allows(attributes.user, "approve", signer)
            .await
        {
            return Ok(());
        }
        Err(attributes.forbidden(format!(
            "user not permitted to approve requests with signerName {signer:?}"
        )))
    }
}

//! `CertificateSubjectRestriction`: a new CertificateSigningRequest for the API server client
//! signer (`<label domain>/<component>-apiserver-client`) may not ask for the
//! `system:masters` organization, which would make its holder unrestricted.

use base64::Engine as _;
use serde_json::Value;
use x509_parser::prelude::FromDer;
use x509_parser::prelude::X509CertificationRequest;

use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::auth::SYSTEM_MASTERS;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// The CertificateSubjectRestriction admission plugin.
pub struct CertificateSubjectRestriction {
    /// `certificates.<group domain>`.
    group: String,
    /// The API server client signer's name.
    signer: String,
}

impl CertificateSubjectRestriction {
    /// The plugin of a server of `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        Self {
            group: format!("certificates.{}", flavor.group_domain()),
            signer: format!(
                "{}/{}-apiserver-client",
                flavor.label_domain(),
                flavor.component_prefix()
            ),
        }
    }
}

/// The organizations of the subject of the PEM `CERTIFICATE REQUEST` in `request` (the
/// base64 of `spec.request`); `Err` with why it cannot be read.
pub(super) fn organizations(request: &str) -> Result<Vec<String>, String> {
    let pem_bytes = base64::engine::general_purpose::STANDARD
        .decode(request)
        .map_err(|e| e.to_string())?;
    let block = pem::parse(&pem_bytes)
        .ok()
        .filter(|block| block.tag() == "CERTIFICATE REQUEST")
        .ok_or("PEM block type must be CERTIFICATE REQUEST")?;
    let (_, csr) =
        X509CertificationRequest::from_der(block.contents()).map_err(|e| format!("x509: {e}"))?;
    let subject = &csr.certification_request_info.subject;
    Ok(subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .map(str::to_owned)
        .collect())
}

#[async_trait::async_trait]
impl Plugin for CertificateSubjectRestriction {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let r = attributes.resource;
        let (Operation::Create, Some(csr)) = (attributes.operation, object) else {
            return Ok(());
        };
        if r.group != self.group
            || r.plural != "certificatesigningrequests"
            || !attributes.subresource.is_empty()
            || super::signer_name(Some(csr)) != self.signer
        {
            return Ok(());
        }
        let request = csr
            .pointer("/spec/request")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let organizations = organizations(request)
            .map_err(|e| attributes.forbidden(format!("failed to parse CSR: {e}")))?;
        if organizations.iter().any(|o| o == SYSTEM_MASTERS) {
            return Err(attributes.forbidden(format!(
                "use of {} signer with {SYSTEM_MASTERS} group is not allowed",
                self.signer
            )));
        }
        Ok(())
    }
}

//! The certificate plugins (Kubernetes' `plugin/pkg/admission/certificates`): who may approve
//! and sign CertificateSigningRequests and attest ClusterTrustBundles for a signer, and which
//! subjects the API server client signer refuses. They share [`Signers`], the authorization
//! check on the synthetic `signers` resource.

mod approval;
mod ctb_attest;
mod signing;
mod subject_restriction;

#[cfg(test)]
mod tests;

pub use self::approval::CertificateApproval;
pub use self::ctb_attest::ClusterTrustBundleAttest;
pub use self::signing::CertificateSigning;
pub use self::subject_restriction::CertificateSubjectRestriction;

use serde_json::Value;

use crate::admission::Attributes;
use crate::auth::Attributes as AuthzAttributes;
use crate::auth::AuthorizerChain;
use crate::auth::Decision;
use crate::auth::UserInfo;
use crate::flavor::Flavor;
use crate::request::RequestInfo;
use crate::request::Verb;

/// The certificates group of a flavor and the authorization of a verb on its signers.
#[derive(Clone)]
pub struct Signers {
    /// `certificates.<group domain>`.
    group: String,
    /// The server's authorizers, asked about the requester.
    authorizers: AuthorizerChain,
}

impl Signers {
    /// The signers of `flavor`'s certificates group, authorized by `authorizers`.
    pub fn new(flavor: Flavor, authorizers: AuthorizerChain) -> Self {
        Self {
            group: format!("certificates.{}", flavor.group_domain()),
            authorizers,
        }
    }

    /// Whether `attributes` write the certificates group's `plural` (`subresource`).
    fn writes(&self, attributes: &Attributes<'_>, plural: &str, subresource: &str) -> bool {
        attributes.resource.group == self.group
            && attributes.resource.plural == plural
            && attributes.subresource == subresource
    }

    /// Whether `user` may `verb` the signer `signer`, or every signer of its domain (the part
    /// before the first `/`, as `<domain>/*`): Kubernetes' `IsAuthorizedForSignerName`.
    pub async fn allows(&self, user: &UserInfo, verb: &str, signer: &str) -> bool {
        let domain = signer.split('/').next().unwrap_or_default();
        for name in [signer.to_owned(), format!("{domain}/*")] {
            let request = self.request(verb, &name);
            let attributes = AuthzAttributes {
                user,
                request: &request,
            };
            if self.authorizers.decide(&attributes).await == Decision::Allow {
                return true;
            }
        }
        false
    }

    /// The attributes of `verb` on `signers/<name>` in any version of the group.
    fn request(&self, verb: &str, name: &str) -> RequestInfo {
        let mut request = RequestInfo::non_resource("", Verb::named(verb));
        request.is_resource_request = true;
        request.api_prefix = "apis".to_owned();
        request.api_group = self.group.clone();
        request.api_version = "*".to_owned();
        request.resource = "signers".to_owned();
        request.name = name.to_owned();
        request
    }
}

/// The `spec.signerName` of `object` (empty when it has none).
fn signer_name(object: Option<&Value>) -> &str {
    object
        .and_then(|o| o.pointer("/spec/signerName"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

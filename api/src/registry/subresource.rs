//! The subresources a built-in kind can have, each knowing its verbs, the kind it answers
//! and whether the server serves it yet (discovery lists only served ones); and the domain
//! logic of those not served by the generic store, as Kubernetes keeps it in its registry
//! packages: `scale` of the replicated workloads, `binding` and `eviction` of pods (with the
//! disruption budget arithmetic), `token` of service accounts. Each reads and writes its
//! [`Parent`] through the parent's generic store; the HTTP handlers only decode the request
//! and render the answer.

pub(crate) mod binding;
mod disruption;
pub(crate) mod eviction;
mod parent;
pub(crate) mod scale;
pub(crate) mod token;

pub(crate) use self::parent::Parent;
pub use self::scale::ScalePaths;
use crate::flavor::Flavor;

/// A subresource of a resource type (`<plural>/<name>` in discovery).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    /// `status`: read and write the status part only.
    Status,
    /// `scale`: an `autoscaling/v1` Scale view of the replicas.
    Scale,
    /// `finalize`: write the namespace finalizers.
    Finalize,
    /// `eviction`: a `policy/v1` Eviction of a pod.
    Eviction,
    /// `binding`: bind a pod to a node.
    Binding,
    /// `token`: an `authentication/v1` TokenRequest for a service account.
    Token,
    /// `approval`: approve or deny a certificate signing request.
    Approval,
    /// `ephemeralcontainers`: add debugging containers to a pod.
    EphemeralContainers,
    /// `resize`: change a pod's resources in place.
    Resize,
    /// A streaming subresource (`exec`, `attach`, `log`, `proxy`, `portforward`).
    Connect(&'static str),
}

impl Subresource {
    /// The name in paths and discovery.
    pub fn name(self) -> &'static str {
        match self {
            Self::Status => "status",
            Self::Scale => "scale",
            Self::Finalize => "finalize",
            Self::Eviction => "eviction",
            Self::Binding => "binding",
            Self::Token => "token",
            Self::Approval => "approval",
            Self::EphemeralContainers => "ephemeralcontainers",
            Self::Resize => "resize",
            Self::Connect(name) => name,
        }
    }

    /// The verbs, as Kubernetes' discovery lists them.
    pub fn verbs(self) -> &'static [&'static str] {
        match self {
            Self::Status
            | Self::Scale
            | Self::Approval
            | Self::EphemeralContainers
            | Self::Resize => &["get", "patch", "update"],
            Self::Finalize => &["update"],
            Self::Eviction | Self::Binding | Self::Token => &["create"],
            Self::Connect("log") => &["get"],
            Self::Connect(_) => &["create", "get"],
        }
    }

    /// Whether requests to it are served now: the generic store serves `status` (only the
    /// status part is taken), `finalize` (the namespace strategy) and `approval` (the
    /// CertificateSigningRequest strategy); `scale`, `eviction`, `binding` and `token` have
    /// handlers of their own; the others stay out of discovery until they have them.
    pub fn is_served(self) -> bool {
        Self::SERVED.contains(&self)
    }

    /// The served subresources.
    const SERVED: [Self; 7] = [
        Self::Status,
        Self::Finalize,
        Self::Approval,
        Self::Scale,
        Self::Eviction,
        Self::Binding,
        Self::Token,
    ];

    /// The served subresource called `name`, if any.
    pub fn served_named(name: &str) -> Option<Self> {
        Self::SERVED.into_iter().find(|s| s.name() == name)
    }

    /// The `(group, version, kind)` it reads and writes in `flavor`, when that is not the
    /// parent's own kind (as upstream's discovery lists it): `scale` is `autoscaling/v1`
    /// Scale, `eviction` `policy/v1` Eviction, `binding` core `v1` Binding, `token`
    /// `authentication.<d>/v1` TokenRequest.
    pub fn response_kind(self, flavor: Flavor) -> Option<(String, &'static str, &'static str)> {
        match self {
            Self::Scale => Some(("autoscaling".to_owned(), "v1", "Scale")),
            Self::Eviction => Some(("policy".to_owned(), "v1", "Eviction")),
            Self::Binding => Some((String::new(), "v1", "Binding")),
            Self::Token => Some((
                format!("authentication.{}", flavor.group_domain()),
                "v1",
                "TokenRequest",
            )),
            _ => None,
        }
    }
}

/// The kind the served subresource `name` answers in `flavor`, when not the parent's (see
/// [`Subresource::response_kind`]).
pub fn subresource_kind(
    name: &str,
    flavor: Flavor,
) -> Option<(String, &'static str, &'static str)> {
    Subresource::served_named(name).and_then(|s| s.response_kind(flavor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_subresources_and_their_kinds() {
        assert_eq!(
            Subresource::served_named("status"),
            Some(Subresource::Status)
        );
        assert_eq!(
            Subresource::served_named("finalize"),
            Some(Subresource::Finalize)
        );
        assert_eq!(Subresource::served_named("scale"), Some(Subresource::Scale));
        assert_eq!(Subresource::served_named("exec"), None);
        assert_eq!(
            subresource_kind("token", Flavor::Kubernetes),
            Some(("authentication.k8s.io".to_owned(), "v1", "TokenRequest"))
        );
        assert_eq!(
            subresource_kind("scale", Flavor::Platform),
            Some(("autoscaling".to_owned(), "v1", "Scale"))
        );
        assert_eq!(subresource_kind("status", Flavor::Kubernetes), None);
        assert!(!Subresource::Connect("exec").is_served());
        assert_eq!(Subresource::Connect("log").verbs(), &["get"]);
        assert_eq!(Subresource::Token.verbs(), &["create"]);
    }
}

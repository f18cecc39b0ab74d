//! The subresources a built-in kind can have, each knowing its verbs and whether the server
//! serves it yet (discovery lists only served ones).

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
    /// status part is taken) and `finalize` (the namespace strategy); the others need their
    /// own handlers and stay out of discovery until they have them.
    pub fn is_served(self) -> bool {
        matches!(self, Self::Status | Self::Finalize)
    }

    /// The served subresource called `name`, if any.
    pub fn served_named(name: &str) -> Option<Self> {
        [Self::Status, Self::Finalize]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_status_and_finalize_are_served() {
        assert_eq!(
            Subresource::served_named("status"),
            Some(Subresource::Status)
        );
        assert_eq!(
            Subresource::served_named("finalize"),
            Some(Subresource::Finalize)
        );
        assert_eq!(Subresource::served_named("scale"), None);
        assert!(!Subresource::Connect("exec").is_served());
        assert_eq!(Subresource::Connect("log").verbs(), &["get"]);
        assert_eq!(Subresource::Token.verbs(), &["create"]);
    }
}

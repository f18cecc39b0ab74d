//! The naming flavor (DESIGN.md §5): the ONLY place product-named identifiers are spelled.
//!
//! The specification writes them with the neutral word `platform`; with
//! [`Flavor::Kubernetes`] Apiary spells them as the Kubernetes API server does, so unmodified
//! clients work against it. Every other module asks the flavor instead of spelling a name.

use std::str::FromStr;

/// Which product names the server uses, chosen once at start-up (`--flavor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flavor {
    /// The neutral names of the specification (`platform.io`, `platform-system`, ...).
    #[default]
    Platform,
    /// The names of the Kubernetes API server (`k8s.io`, `kube-system`, ...).
    Kubernetes,
}

/// A `--flavor` value that names no flavor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown flavor {0:?} (expected \"platform\" or \"kubernetes\")")]
pub struct UnknownFlavor(pub String);

impl FromStr for Flavor {
    type Err = UnknownFlavor;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "platform" => Ok(Self::Platform),
            "kubernetes" => Ok(Self::Kubernetes),
            other => Err(UnknownFlavor(other.to_owned())),
        }
    }
}

impl Flavor {
    /// The product word of response headers (`X-Kubernetes-PF-FlowSchema-UID`).
    pub fn header_product(self) -> &'static str {
        match self {
            Self::Platform => "Platform",
            Self::Kubernetes => "Kubernetes",
        }
    }

    /// The API group domain: `rbac.authorization.<d>`, `meta.<d>`, `apidiscovery.<d>`.
    pub fn group_domain(self) -> &'static str {
        match self {
            Self::Platform => "platform.io",
            Self::Kubernetes => "k8s.io",
        }
    }

    /// The label and annotation domain (`<d>/metadata.name`, `<d>/bootstrapping`).
    pub fn label_domain(self) -> &'static str {
        match self {
            Self::Platform => "platform.io",
            Self::Kubernetes => "kubernetes.io",
        }
    }

    /// The Protobuf media type.
    pub fn protobuf_media_type(self) -> &'static str {
        match self {
            Self::Platform => "application/vnd.platform.protobuf",
            Self::Kubernetes => "application/vnd.kubernetes.protobuf",
        }
    }

    /// The namespace of the system's own components.
    pub fn system_namespace(self) -> &'static str {
        match self {
            Self::Platform => "platform-system",
            Self::Kubernetes => "kube-system",
        }
    }

    /// The namespace readable by everyone.
    pub fn public_namespace(self) -> &'static str {
        match self {
            Self::Platform => "platform-public",
            Self::Kubernetes => "kube-public",
        }
    }

    /// The namespace holding node heartbeat leases.
    pub fn node_lease_namespace(self) -> &'static str {
        match self {
            Self::Platform => "platform-node-lease",
            Self::Kubernetes => "kube-node-lease",
        }
    }

    /// The node agent's name (`system:<agent>-api-admin`, ...).
    pub fn node_agent(self) -> &'static str {
        match self {
            Self::Platform => "nodeagent",
            Self::Kubernetes => "kubelet",
        }
    }

    /// The word control-plane component names start with (`system:<w>-scheduler`,
    /// `system:<w>-controller-manager`, `<w>-apiserver-client` signers).
    pub fn component_prefix(self) -> &'static str {
        match self {
            Self::Platform => "platform",
            Self::Kubernetes => "kube",
        }
    }

    /// The finalizer the server puts in every namespace's `spec.finalizers`.
    pub fn namespace_finalizer(self) -> &'static str {
        match self {
            Self::Platform => "platform",
            Self::Kubernetes => "kubernetes",
        }
    }

    /// The name of the Service in `default` that points at the API servers (and the
    /// `provider` label on it).
    pub fn api_service_name(self) -> &'static str {
        self.namespace_finalizer()
    }

    /// The environment variable a credential plugin reads its input from.
    pub fn exec_info_variable(self) -> &'static str {
        match self {
            Self::Platform => "PLATFORM_EXEC_INFO",
            Self::Kubernetes => "KUBERNETES_EXEC_INFO",
        }
    }

    /// The group of the meta types (`Table`, `PartialObjectMetadata`): `meta.<d>`.
    pub fn meta_group(self) -> String {
        format!("meta.{}", self.group_domain())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_flavors_and_rejects_others() {
        assert_eq!("platform".parse::<Flavor>(), Ok(Flavor::Platform));
        assert_eq!("kubernetes".parse::<Flavor>(), Ok(Flavor::Kubernetes));
        assert!("k8s".parse::<Flavor>().is_err());
    }

    #[test]
    fn kubernetes_flavor_spells_kubernetes_names() {
        let k = Flavor::Kubernetes;
        assert_eq!(k.system_namespace(), "kube-system");
        assert_eq!(k.public_namespace(), "kube-public");
        assert_eq!(k.node_lease_namespace(), "kube-node-lease");
        assert_eq!(k.meta_group(), "meta.k8s.io");
        assert_eq!(k.namespace_finalizer(), "kubernetes");
        assert_eq!(Flavor::Platform.meta_group(), "meta.platform.io");
        assert_eq!(Flavor::Platform.system_namespace(), "platform-system");
    }
}

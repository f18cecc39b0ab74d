//! Which admission plugins run: Kubernetes' ordered list, its default set, and the
//! `--enable-admission-plugins` / `--disable-admission-plugins` flags over them.

/// Every admission plugin Kubernetes knows, in the order they run (mutating ones first in
/// this order, then validating ones in this order), as kube-apiserver orders them.
pub const ORDERED_PLUGINS: [&str; 36] = [
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
];

/// The plugins on when no flag names them (kube-apiserver's default set).
const DEFAULT_ON: [&str; 22] = [
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "TaintNodesByCondition",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
];

/// A refusal of the admission flags, worded as kube-apiserver words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    /// A flag names a plugin Kubernetes does not have.
    #[error("{flag} plugin {name:?} is unknown")]
    Unknown {
        /// `enable-admission-plugins` or `disable-admission-plugins`.
        flag: &'static str,
        /// The name given.
        name: String,
    },
    /// A plugin is both enabled and disabled.
    #[error("[{}] in enable-admission-plugins and disable-admission-plugins overlapped", .0.join(" "))]
    Overlapped(Vec<String>),
}

/// The enabled plugins, in the order they run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSelection {
    enabled: Vec<&'static str>,
}

impl Default for PluginSelection {
    /// Kubernetes' default set.
    fn default() -> Self {
        Self::new(&[], &[]).unwrap_or(Self {
            enabled: Vec::new(),
        })
    }
}

impl PluginSelection {
    /// The default set, plus `enable`, less `disable` (kube-apiserver's rule: the order of
    /// the flags does not matter, every plugin runs in [`ORDERED_PLUGINS`] order).
    pub fn new(enable: &[String], disable: &[String]) -> Result<Self, SelectionError> {
        let known = |flag, names: &[String]| {
            names
                .iter()
                .try_for_each(|name| match ORDERED_PLUGINS.contains(&name.as_str()) {
                    true => Ok(()),
                    false => Err(SelectionError::Unknown {
                        flag,
                        name: name.clone(),
                    }),
                })
        };
        known("enable-admission-plugins", enable)?;
        known("disable-admission-plugins", disable)?;
        let mut both: Vec<String> = enable
            .iter()
            .filter(|n| disable.contains(n))
            .cloned()
            .collect();
        if !both.is_empty() {
            both.sort();
            both.dedup();
            return Err(SelectionError::Overlapped(both));
        }
        let enabled = ORDERED_PLUGINS
            .into_iter()
            .filter(|name| {
                let named = |list: &[String]| list.iter().any(|n| n == name);
                (DEFAULT_ON.contains(name) || named(enable)) && !named(disable)
            })
            .collect();
        Ok(Self { enabled })
    }

    /// The enabled plugins' names, in the order they run.
    pub fn enabled(&self) -> &[&'static str] {
        &self.enabled
    }

    /// Whether `name` is enabled.
    pub fn is_enabled(&self, name: &str) -> bool {
        self.enabled.contains(&name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn defaults_run_in_kubernetes_order() {
        let selection = PluginSelection::default();
        assert_eq!(selection.enabled().len(), DEFAULT_ON.len());
        let first = selection.enabled()[0];
        assert_eq!(first, "NamespaceLifecycle");
        let tail: Vec<_> = selection
            .enabled()
            .iter()
            .rev()
            .take(5)
            .rev()
            .copied()
            .collect();
        assert_eq!(
            tail,
            [
                "MutatingAdmissionPolicy",
                "MutatingAdmissionWebhook",
                "ValidatingAdmissionPolicy",
                "ValidatingAdmissionWebhook",
                "ResourceQuota",
            ]
        );
    }

    #[test]
    fn flags_add_and_remove_in_any_order() {
        let selection = PluginSelection::new(
            &names(&["NodeRestriction", "AlwaysPullImages"]),
            &names(&["LimitRanger"]),
        )
        .expect("valid flags");
        assert!(selection.is_enabled("NodeRestriction"));
        assert!(selection.is_enabled("AlwaysPullImages"));
        assert!(!selection.is_enabled("LimitRanger"));
        let position = |n| selection.enabled().iter().position(|e| *e == n);
        assert!(position("ServiceAccount") < position("NodeRestriction"));
        assert!(position("NodeRestriction") < position("AlwaysPullImages"));
    }

    #[test]
    fn unknown_and_overlapping_names_are_refused() {
        let unknown = PluginSelection::new(&names(&["Nope"]), &[]).unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "enable-admission-plugins plugin \"Nope\" is unknown"
        );
        let overlap =
            PluginSelection::new(&names(&["PodSecurity"]), &names(&["PodSecurity"])).unwrap_err();
        assert_eq!(
            overlap.to_string(),
            "[PodSecurity] in enable-admission-plugins and disable-admission-plugins overlapped"
        );
    }
}

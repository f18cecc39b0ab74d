//! The admission plugins this server has, built by name for the chain a
//! [`PluginSelection`] enables. One file (or folder) per plugin.

mod always;
mod certificates;
mod default_class;
mod default_ingress_class;
mod default_storage_class;
mod default_toleration_seconds;
mod limit_ranger;
mod mutating_admission_policy;
mod namespace_lifecycle;
mod node_restriction;
mod objects;
mod owner_references;
mod persistent_volume_claim_resize;
mod pod_security;
mod pods;
mod priority;
mod quantity;
pub mod resource_quota;
mod runtime_class;
mod service_account;
mod storage_object_in_use_protection;
mod taint_nodes_by_condition;
mod tolerations;
mod validating_admission_policy;

use std::sync::Arc;

use serde_json::Value;

pub use self::namespace_lifecycle::NAME as NAMESPACE_LIFECYCLE;
pub use self::pod_security::PodSecurityConfig;
use super::Admission;
use super::AdmissionConfig;
use super::Namespaces;
use super::Plugin;
use super::PluginSelection;
use super::policy::ResourceTable;
use super::webhook;
use crate::RandomSource;
use crate::auth::AuthorizerChain;
use crate::flavor::Flavor;
use crate::storage::Storage;
use crate::webhook::WebhookTransport;

/// Where the webhook configurations are stored (the same keys in every flavor).
const WEBHOOK_CONFIGURATIONS: &str = "/registry/admissionregistration.k8s.io/";

/// What plugins are built with.
#[derive(Clone)]
pub struct PluginContext {
    /// The replica's store, for the reads a plugin makes.
    pub storage: Arc<dyn Storage>,
    /// The naming flavor.
    pub flavor: Flavor,
    /// The replica's namespaces (namespace selectors, `namespaceObject`).
    pub namespaces: Arc<Namespaces>,
    /// The plugins' configurations (`--admission-control-config-file`).
    pub config: AdmissionConfig,
    /// How admission webhooks are called (`ApiConfig::webhooks`); `None`: every call fails.
    pub webhooks: Option<Arc<dyn WebhookTransport>>,
    /// The server's authorizers (the CEL `authorizer` variable).
    pub authorizers: AuthorizerChain,
    /// The server's randomness (review uids).
    pub random: RandomSource,
    /// The served resource types (a policy's `paramKind`).
    pub resources: ResourceTable,
}

/// What is wrong with `configuration`, given for the plugin `name` in the admission
/// configuration file (plugins that take none accept anything, as Kubernetes' do).
pub(super) fn check_configuration(name: &str, configuration: &Value) -> Result<(), String> {
    match name {
        "PodSecurity" if !configuration.is_null() => {
            PodSecurityConfig::parse(configuration).map(|_| ())
        }
        resource_quota::NAME if !configuration.is_null() => {
            resource_quota::QuotaConfig::parse(configuration).map(|_| ())
        }
        _ => Ok(()),
    }
}

/// The webhooks of the configurations stored as `plural`, followed from now on.
fn webhooks(context: &PluginContext, plural: &str) -> Arc<webhook::Dispatcher> {
    let prefix = format!("{WEBHOOK_CONFIGURATIONS}{plural}/");
    Arc::new(webhook::Dispatcher {
        configurations: webhook::Configurations::follow(context.storage.clone(), &prefix),
        caller: webhook::Caller {
            transport: context.webhooks.clone(),
            storage: context.storage.clone(),
            flavor: context.flavor,
            random: context.random.clone(),
        },
        namespaces: context.namespaces.clone(),
        authorizers: context.authorizers.clone(),
        resources: context.resources.clone(),
    })
}

/// The signers of the context's flavor, authorized by its authorizers.
fn signers(context: &PluginContext) -> certificates::Signers {
    certificates::Signers::new(context.flavor, context.authorizers.clone())
}

/// The plugin named `name`, or `None` when this server does not have it.
fn plugin(name: &str, context: &PluginContext) -> Option<Arc<dyn Plugin>> {
    let (storage, flavor) = (context.storage.clone(), context.flavor);
    Some(match name {
        "AlwaysAdmit" => Arc::new(always::AlwaysAdmit),
        "AlwaysDeny" => Arc::new(always::AlwaysDeny),
        NAMESPACE_LIFECYCLE => Arc::new(namespace_lifecycle::NamespaceLifecycle::new(flavor)),
        "NodeRestriction" => Arc::new(node_restriction::NodeRestriction::new(storage, flavor)),
        "OwnerReferencesPermissionEnforcement" => Arc::new(
            owner_references::OwnerReferencesPermissionEnforcement::new(flavor),
        ),
        "CertificateApproval" => Arc::new(certificates::CertificateApproval::new(signers(context))),
        "CertificateSigning" => Arc::new(certificates::CertificateSigning::new(signers(context))),
        "CertificateSubjectRestriction" => {
            Arc::new(certificates::CertificateSubjectRestriction::new(flavor))
        }
        "ClusterTrustBundleAttest" => Arc::new(certificates::ClusterTrustBundleAttest::new(
            signers(context),
        )),
        "PodSecurity" => {
            // The configuration was checked when the file was read.
            let config = context
                .config
                .plugin(name)
                .and_then(|doc| PodSecurityConfig::parse(doc).ok())
                .unwrap_or_default();
            Arc::new(pod_security::PodSecurity::new(storage, flavor, config))
        }
        "DefaultTolerationSeconds" => Arc::new(
            default_toleration_seconds::DefaultTolerationSeconds::new(flavor),
        ),
        "LimitRanger" => Arc::new(limit_ranger::LimitRanger::new(storage, flavor)),
        "Priority" => Arc::new(priority::Priority::new(storage, flavor)),
        "RuntimeClass" => Arc::new(runtime_class::RuntimeClass::new(storage, flavor)),
        "ServiceAccount" => Arc::new(service_account::ServiceAccount::new(
            storage,
            flavor,
            context.random.clone(),
        )),
        "TaintNodesByCondition" => {
            Arc::new(taint_nodes_by_condition::TaintNodesByCondition::new(flavor))
        }
        "DefaultStorageClass" => Arc::new(default_storage_class::DefaultStorageClass::new(
            storage, flavor,
        )),
        "DefaultIngressClass" => Arc::new(default_ingress_class::DefaultIngressClass::new(
            storage, flavor,
        )),
        "PersistentVolumeClaimResize" => Arc::new(
            persistent_volume_claim_resize::PersistentVolumeClaimResize::new(storage, flavor),
        ),
        "StorageObjectInUseProtection" => {
            Arc::new(storage_object_in_use_protection::StorageObjectInUseProtection::new(flavor))
        }
        "MutatingAdmissionWebhook" => Arc::new(webhook::MutatingWebhooks::new(webhooks(
            context,
            "mutatingwebhookconfigurations",
        ))),
        "ValidatingAdmissionWebhook" => Arc::new(webhook::ValidatingWebhooks::new(webhooks(
            context,
            "validatingwebhookconfigurations",
        ))),
        "MutatingAdmissionPolicy" => {
            Arc::new(mutating_admission_policy::MutatingAdmissionPolicy::new(
                crate::admission::policy::mutating::MutatingDispatcher::start(
                    &context.storage,
                    context.resources.clone(),
                    context.namespaces.clone(),
                    context.flavor,
                ),
            ))
        }
        "ValidatingAdmissionPolicy" => {
            Arc::new(validating_admission_policy::ValidatingAdmissionPolicy::new(
                crate::admission::policy::Dispatcher::start(
                    &context.storage,
                    context.resources.clone(),
                    context.namespaces.clone(),
                    context.flavor,
                ),
            ))
        }
        resource_quota::NAME => {
            // The configuration was checked when the file was read.
            let config = (context.config.plugin(name))
                .and_then(|doc| resource_quota::QuotaConfig::parse(doc).ok())
                .unwrap_or_default();
            Arc::new(resource_quota::ResourceQuota::new(storage, config))
        }
        _ => return None,
    })
}

/// The chain of `selection`'s plugins, and the names of the enabled plugins this server does
/// not have (the caller says so at start-up).
pub fn build(
    selection: &PluginSelection,
    context: &PluginContext,
) -> (Admission, Vec<&'static str>) {
    let mut missing = Vec::new();
    let mut plugins = Vec::new();
    for name in selection.enabled() {
        match plugin(name, context) {
            Some(p) => plugins.push((*name, p)),
            None => missing.push(*name),
        }
    }
    (Admission::new(plugins), missing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtin::rows;

    #[test]
    fn webhook_configurations_are_followed_where_they_are_stored() {
        for flavor in [Flavor::Kubernetes, Flavor::Platform] {
            let prefixes: Vec<String> = (rows().iter())
                .map(|r| r.resource_type(flavor).key_prefix())
                .collect();
            for plural in [
                "mutatingwebhookconfigurations",
                "validatingwebhookconfigurations",
            ] {
                let prefix = format!("{WEBHOOK_CONFIGURATIONS}{plural}/");
                assert!(prefixes.contains(&prefix), "{prefix} in {flavor:?}");
            }
        }
    }
}

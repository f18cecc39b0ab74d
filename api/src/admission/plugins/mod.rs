//! The admission plugins this server has, built by name for the chain a
//! [`PluginSelection`] enables. One file per plugin.

mod always;

use std::sync::Arc;

use super::Admission;
use super::Namespaces;
use super::Plugin;
use super::PluginSelection;
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
    /// How admission webhooks are called (`ApiConfig::webhooks`); `None`: every call fails.
    pub webhooks: Option<Arc<dyn WebhookTransport>>,
    /// The server's authorizers (the CEL `authorizer` variable).
    pub authorizers: AuthorizerChain,
    /// The server's randomness (review uids).
    pub random: RandomSource,
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
    })
}

/// The plugin named `name`, or `None` when this server does not have it.
fn plugin(name: &str, context: &PluginContext) -> Option<Arc<dyn Plugin>> {
    match name {
        "AlwaysAdmit" => Some(Arc::new(always::AlwaysAdmit)),
        "AlwaysDeny" => Some(Arc::new(always::AlwaysDeny)),
        "MutatingAdmissionWebhook" => Some(Arc::new(webhook::MutatingWebhooks::new(webhooks(
            context,
            "mutatingwebhookconfigurations",
        )))),
        "ValidatingAdmissionWebhook" => Some(Arc::new(webhook::ValidatingWebhooks::new(webhooks(
            context,
            "validatingwebhookconfigurations",
        )))),
        _ => None,
    }
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

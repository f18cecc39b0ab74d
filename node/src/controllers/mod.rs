//! Leader-only controllers (DESIGN.md "Controllers", issue 14 item 4): work Kubernetes does in
//! kube-controller-manager runs in-process on the replica that leads raft. [`runner`] starts
//! the selected controllers when the replica becomes leader and stops them (cancelled and
//! awaited) when it loses leadership. Each controller acts through the API's own router as a
//! client ([`client::InProcessClient`]) with its own identity (its ServiceAccount in the
//! system namespace, as kube-controller-manager with `--use-service-account-credentials`, or
//! the server's loopback identity for the RBAC controllers, which write roles),
//! and is level-triggered: every pass lists the store and converges it, keeping no state only
//! in memory, so a new leader finishes what an old one started. A pass runs again after the
//! store changed, or only after a change of what it reads ([`changes::Interest`]).
//!
//! `--controllers` selects them as kube-controller-manager's flag does: `*` is the default-on
//! set, `name` turns one on, `-name` off; an unknown name is a start-up error. The bootstrap
//! token controllers ([`token_cleaner`], [`bootstrap_signer`]) are off in `*` and on by name
//! (R-ACC-120); the RBAC controllers ([`rbac_bootstrap`], [`clusterrole_aggregation`]), the
//! [`garbage_collector`], pod garbage collection ([`pod_gc`]), the claim and volume
//! protection controllers ([`volume_protection`]), the [`namespace`] controller, the
//! [`resource_quota`] controller, the `default` ServiceAccount of every namespace
//! ([`service_accounts`]), the CA bundle of every namespace ([`root_ca_publisher`]) and the
//! CustomResourceDefinition controllers ([`custom_resource_definitions`]: naming,
//! establishing, cleanup of deleted CRDs) and the ValidatingAdmissionPolicy type checks
//! ([`policy_status`]) are on in `*`.

pub mod bootstrap_signer;
pub mod changes;
pub mod client;
pub mod clusterrole_aggregation;
pub mod custom_resource_definitions;
pub mod garbage_collector;
pub mod namespace;
pub mod pod_gc;
pub mod policy_status;
pub mod rbac_bootstrap;
pub mod resource_quota;
pub mod root_ca_publisher;
pub mod runner;
pub mod service_accounts;
pub mod token_cleaner;
pub mod volume_protection;

use std::sync::Arc;

use self::changes::Changes;

use apiary_api::Clock;
use apiary_api::Flavor;
use axum::Router;
use tokio_util::sync::CancellationToken;

/// One controller.
///
/// ### Correctness requirements
/// - Restart-safe and level-triggered: converge from what the store holds now, so a pass that
///   a lost leadership cut short is finished by the next leader's first pass.
/// - Return promptly once `stop` is cancelled (leadership lost or shutdown).
#[async_trait::async_trait]
pub trait Controller: Send + Sync + 'static {
    /// The name `--controllers` knows it by.
    fn name(&self) -> &'static str;

    /// Runs until `stop` is cancelled.
    async fn run(&self, context: ControllerContext, stop: CancellationToken);
}

/// What a controller works with.
#[derive(Clone)]
pub struct ControllerContext {
    /// The API's router: requests go through the whole pipeline, as a client's do.
    pub api: Router,
    /// The naming flavor.
    pub flavor: Flavor,
    /// The time source (expiry decisions).
    pub clock: Arc<dyn Clock>,
    /// The store's changes: every applied revision, or those that wrote what a pass reads.
    pub changes: Changes,
}

/// The controllers Apiary knows, and whether `*` turns each on.
const KNOWN: &[(&str, bool)] = &[
    (bootstrap_signer::NAME, false),
    (clusterrole_aggregation::NAME, true),
    (custom_resource_definitions::ESTABLISHING, true),
    (custom_resource_definitions::FINALIZER, true),
    (custom_resource_definitions::NAMING, true),
    (garbage_collector::NAME, true),
    (namespace::NAME, true),
    (pod_gc::NAME, true),
    (volume_protection::VOLUMES, true),
    (volume_protection::CLAIMS, true),
    (rbac_bootstrap::NAME, true),
    (resource_quota::NAME, true),
    (root_ca_publisher::NAME, true),
    (service_accounts::NAME, true),
    (token_cleaner::NAME, false),
    (policy_status::NAME, true),
];

/// `--controllers` names a controller Apiary does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--controllers: unknown controller {name:?} (known: {known})")]
pub struct UnknownController {
    /// The unknown name, without a leading `-`.
    pub name: String,
    /// The known names, comma separated.
    pub known: String,
}

/// Which controllers run, from `--controllers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerSelection {
    entries: Vec<String>,
}

impl Default for ControllerSelection {
    /// `--controllers=*`: the default-on set.
    fn default() -> Self {
        Self {
            entries: vec!["*".to_owned()],
        }
    }
}

impl ControllerSelection {
    /// The selection `entries` (`*`, `name`, `-name`) describe; an unknown name is an error.
    pub fn parse(entries: &[String]) -> Result<Self, UnknownController> {
        for entry in entries {
            let name = entry.strip_prefix('-').unwrap_or(entry);
            if entry != "*" && !KNOWN.iter().any(|(known, _)| *known == name) {
                let known = KNOWN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
                return Err(UnknownController {
                    name: name.to_owned(),
                    known,
                });
            }
        }
        Ok(Self {
            entries: entries.to_vec(),
        })
    }

    /// Whether `name` runs, as kube-controller-manager decides it: the first entry that is
    /// `name` (on) or `-name` (off) decides; otherwise it runs if `*` is listed and it is in
    /// the default-on set.
    pub fn is_enabled(&self, name: &str, default_on: bool) -> bool {
        for entry in &self.entries {
            if entry == name {
                return true;
            }
            if entry.strip_prefix('-') == Some(name) {
                return false;
            }
        }
        default_on && self.entries.iter().any(|e| e == "*")
    }

    /// The names of the controllers that run, in a fixed order.
    pub fn enabled(&self) -> Vec<&'static str> {
        KNOWN
            .iter()
            .filter(|(name, default_on)| self.is_enabled(name, *default_on))
            .map(|(name, _)| *name)
            .collect()
    }

    /// The controllers that run; `root_ca` is the CA bundle the root CA publisher publishes.
    pub fn build(&self, root_ca: &Arc<str>) -> Vec<Arc<dyn Controller>> {
        self.enabled()
            .into_iter()
            .filter_map(|name| -> Option<Arc<dyn Controller>> {
                match name {
                    token_cleaner::NAME => Some(Arc::new(token_cleaner::TokenCleaner)),
                    bootstrap_signer::NAME => Some(Arc::new(bootstrap_signer::BootstrapSigner)),
                    clusterrole_aggregation::NAME => {
                        Some(Arc::new(clusterrole_aggregation::ClusterRoleAggregation))
                    }
                    rbac_bootstrap::NAME => Some(Arc::new(rbac_bootstrap::RbacBootstrap)),
                    root_ca_publisher::NAME => Some(Arc::new(root_ca_publisher::RootCaPublisher {
                        bundle: root_ca.clone(),
                    })),
                    service_accounts::NAME => Some(Arc::new(service_accounts::ServiceAccounts)),
                    custom_resource_definitions::NAMING => {
                        Some(Arc::new(custom_resource_definitions::CrdNaming))
                    }
                    custom_resource_definitions::ESTABLISHING => {
                        Some(Arc::new(custom_resource_definitions::CrdEstablishing))
                    }
                    custom_resource_definitions::FINALIZER => {
                        Some(Arc::new(custom_resource_definitions::CrdFinalizer))
                    }
                    garbage_collector::NAME => Some(Arc::new(garbage_collector::GarbageCollector)),
                    namespace::NAME => Some(Arc::new(namespace::NamespaceController)),
                    resource_quota::NAME => Some(Arc::new(resource_quota::ResourceQuotaController)),
                    pod_gc::NAME => Some(Arc::new(pod_gc::PodGc::default())),
                    policy_status::NAME => Some(Arc::new(policy_status::PolicyStatus)),
                    volume_protection::CLAIMS => {
                        Some(Arc::new(volume_protection::VolumeProtection::Claims))
                    }
                    volume_protection::VOLUMES => {
                        Some(Arc::new(volume_protection::VolumeProtection::Volumes))
                    }
                    _ => None,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(entries: &[&str]) -> Result<Vec<&'static str>, UnknownController> {
        let entries: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
        ControllerSelection::parse(&entries).map(|s| s.enabled())
    }

    /// The controllers `*` runs.
    const DEFAULT_ON: [&str; 14] = [
        "clusterrole-aggregation",
        "crd-establishing",
        "crd-finalizer",
        "crd-naming",
        "garbagecollector",
        "namespace",
        "podgc",
        "pv-protection",
        "pvc-protection",
        "rbac-bootstrap",
        "resourcequota",
        "root-ca-cert-publisher",
        "serviceaccount",
        "validatingadmissionpolicy-status-controller",
    ];

    // R-ACC-120: `*` leaves the bootstrap token controllers off; naming them turns them on.
    // The RBAC controllers are on in `*`.
    #[test]
    fn bootstrap_token_controllers_run_only_by_name() {
        assert_eq!(select(&["*"]), Ok(DEFAULT_ON.to_vec()));
        assert_eq!(
            ControllerSelection::default().enabled(),
            DEFAULT_ON.to_vec()
        );
        assert_eq!(
            select(&["*", "tokencleaner", "bootstrapsigner"]),
            Ok(vec![
                "bootstrapsigner",
                "clusterrole-aggregation",
                "crd-establishing",
                "crd-finalizer",
                "crd-naming",
                "garbagecollector",
                "namespace",
                "podgc",
                "pv-protection",
                "pvc-protection",
                "rbac-bootstrap",
                "resourcequota",
                "root-ca-cert-publisher",
                "serviceaccount",
                "tokencleaner",
                "validatingadmissionpolicy-status-controller"
            ])
        );
        assert_eq!(select(&["tokencleaner"]), Ok(vec!["tokencleaner"]));
    }

    // `-name` turns a controller off; the first entry naming a controller decides, as in
    // kube-controller-manager.
    #[test]
    fn minus_turns_a_controller_off() {
        assert_eq!(
            select(&["*", "-tokencleaner", "-rbac-bootstrap"]),
            Ok(vec![
                "clusterrole-aggregation",
                "crd-establishing",
                "crd-finalizer",
                "crd-naming",
                "garbagecollector",
                "namespace",
                "podgc",
                "pv-protection",
                "pvc-protection",
                "resourcequota",
                "root-ca-cert-publisher",
                "serviceaccount",
                "validatingadmissionpolicy-status-controller"
            ])
        );
        assert_eq!(select(&["-tokencleaner", "tokencleaner"]), Ok(vec![]));
        assert_eq!(
            select(&["tokencleaner", "-tokencleaner"]),
            Ok(vec!["tokencleaner"])
        );
        let all_on = ControllerSelection::parse(&["*".to_owned()]).unwrap();
        assert!(all_on.is_enabled("future", true));
        let minus =
            ControllerSelection::parse(&["*".to_owned(), "-tokencleaner".to_owned()]).unwrap();
        assert!(!minus.is_enabled("tokencleaner", true));
    }

    // An unknown name, with or without `-`, stops start-up.
    #[test]
    fn unknown_controllers_are_refused() {
        let error = select(&["*", "tokencleanr"]).unwrap_err();
        assert_eq!(error.name, "tokencleanr");
        assert!(error.to_string().contains("tokencleaner"), "{error}");
        assert!(select(&["-nope"]).is_err());
    }
}

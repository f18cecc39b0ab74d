//! What the node chooses for the API: naming flavor, readiness, the authentication and
//! authorization chains, the clock and the service account token signer.

use std::sync::Arc;
use std::time::Duration;

use chrono::DateTime;
use chrono::Utc;

use crate::admin::ClusterAdmin;
use crate::audit::AuditConfig;
use crate::auth::AuthenticationMethods;
use crate::auth::Authorizer;
use crate::auth::BasicUserAuthorizer;
use crate::auth::ControllerRolesAuthorizer;
use crate::auth::IssuerDiscoveryAuthorizer;
use crate::auth::SystemMastersAuthorizer;
use crate::features::FeatureGates;
use crate::flavor::Flavor;
use crate::flowcontrol::FlowControlSettings;
use crate::health::Readiness;
use crate::metrics::Metrics;
use crate::metrics::MonitoringAuthorizer;
use crate::random::RandomSource;
use crate::registry::RuntimeConfig;
use crate::registry::allocator::ServiceRanges;
use crate::serviceaccount::IssuerDiscovery;
use crate::serviceaccount::TokenSigner;
use crate::webhook::WebhookTransport;

/// The time source of the API (creation and deletion timestamps), injected so simulations
/// run on virtual time.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// How long watches run and how often they report progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchSettings {
    /// A watch without `timeoutSeconds` ends after a random time between this and twice this
    /// (Kubernetes' `--min-request-timeout`, default 30 minutes), so clients spread out their
    /// reconnects.
    pub min_request_timeout: Duration,
    /// How often a watch with `allowWatchBookmarks` gets a BOOKMARK (Kubernetes: about a
    /// minute).
    pub bookmark_interval: Duration,
}

impl Default for WatchSettings {
    fn default() -> Self {
        Self {
            min_request_timeout: Duration::from_secs(1800),
            bookmark_interval: Duration::from_secs(60),
        }
    }
}

/// The most bytes an object's stored form may have unless configured otherwise
/// (`--max-object-bytes`): 1.5 MiB, etcd's default `--max-request-bytes`, the largest write
/// Kubernetes' storage accepts.
pub const DEFAULT_MAX_OBJECT_BYTES: usize = 1_572_864;

/// The configuration of [`router`](crate::router).
#[derive(Clone)]
pub struct ApiConfig {
    /// The naming flavor (DESIGN.md §5).
    pub flavor: Flavor,
    /// Whether this replica is ready (`/readyz`).
    pub readiness: Arc<dyn Readiness>,
    /// Authentication methods, tried in order (first success wins).
    pub authentication: AuthenticationMethods,
    /// Authorization modes, consulted in order (allow or deny ends it).
    pub authorizers: Vec<Arc<dyn Authorizer>>,
    /// The time source.
    pub clock: Arc<dyn Clock>,
    /// The randomness of uids, generated names, token ids and watch timeouts.
    pub random: RandomSource,
    /// Watch durations.
    pub watch: WatchSettings,
    /// Which API versions and resources are served (`--runtime-config`, R-VER-063).
    pub runtime_config: RuntimeConfig,
    /// The signer of service account tokens; without one, token requests are a 500.
    pub token_signer: Option<Arc<dyn TokenSigner>>,
    /// The service account issuer discovery documents; not served without.
    pub issuer_discovery: Option<Arc<IssuerDiscovery>>,
    /// Where Services get cluster IPs and node ports (`--service-cluster-ip-range`, default
    /// `10.96.0.0/12`; `--service-node-port-range`, default `30000-32767`).
    pub service_ranges: ServiceRanges,
    /// The most bytes an object's stored form may have (`--max-object-bytes`, default
    /// [`DEFAULT_MAX_OBJECT_BYTES`]); a write of a larger one is a 413 and stores nothing.
    pub max_object_bytes: usize,
    /// Which gated features are on (`--feature-gates`).
    pub feature_gates: FeatureGates,
    /// The audit policy and backends; nothing is audited by default.
    pub audit: AuditConfig,
    /// API Priority and Fairness (`--enable-priority-and-fairness`,
    /// `--max-requests-inflight`, `--max-mutating-requests-inflight`).
    pub flow_control: FlowControlSettings,
    /// The metrics registry `/metrics` serves (crate::metrics).
    pub metrics: Metrics,
    /// The operating API under [`crate::admin::PREFIX`] (none: those paths are not served).
    pub cluster_admin: Option<Arc<dyn ClusterAdmin>>,
    /// How webhooks are called (CRD conversion); without one, a definition's conversion
    /// webhook fails every conversion it is asked for.
    pub webhooks: Option<Arc<dyn WebhookTransport>>,
    /// The admission plugins enabled (`--enable-admission-plugins`,
    /// `--disable-admission-plugins`); Kubernetes' default set by default.
    pub admission: crate::admission::PluginSelection,
    /// The admission plugins' configurations (`--admission-control-config-file`); none by
    /// default.
    pub admission_config: crate::admission::AdmissionConfig,
}

impl ApiConfig {
    /// The default configuration: client certificates authenticate, `system:masters` may do
    /// everything, `system:monitoring` may read health and metrics, every authenticated user may create the
    /// self reviews, the controller identities may do what their roles allow, service accounts
    /// may read the issuer discovery documents, everyone else is denied; wall-clock time;
    /// randomness seeded from the operating system; no token signer; stored objects of at most
    /// [`DEFAULT_MAX_OBJECT_BYTES`]; every feature gate at its default; flow control on with
    /// Kubernetes' 400 + 200 seats.
    pub fn new(flavor: Flavor, readiness: Arc<dyn Readiness>) -> Self {
        Self {
            flavor,
            readiness,
            authentication: AuthenticationMethods::default(),
            authorizers: vec![
                Arc::new(SystemMastersAuthorizer),
                Arc::new(MonitoringAuthorizer),
                Arc::new(BasicUserAuthorizer::new(flavor)),
                Arc::new(ControllerRolesAuthorizer::new(flavor)),
                Arc::new(IssuerDiscoveryAuthorizer),
            ],
            clock: Arc::new(SystemClock),
            random: RandomSource::from_os_entropy(),
            watch: WatchSettings::default(),
            runtime_config: RuntimeConfig::default(),
            token_signer: None,
            issuer_discovery: None,
            service_ranges: ServiceRanges::default(),
            max_object_bytes: DEFAULT_MAX_OBJECT_BYTES,
            feature_gates: FeatureGates::default(),
            audit: AuditConfig::default(),
            flow_control: FlowControlSettings::default(),
            metrics: Metrics::default(),
            cluster_admin: None,
            webhooks: None,
            admission: crate::admission::PluginSelection::default(),
            admission_config: crate::admission::AdmissionConfig::default(),
        }
    }
}

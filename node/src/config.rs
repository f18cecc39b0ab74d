//! The validated configuration of one replica ([`ServeConfig`]), built from `apiary serve`'s
//! flags. Everything that can be wrong with the flags together (a name missing from
//! `--initial-cluster`, a duplicate, a peer URL that is not a URL) is caught here, before any
//! socket or file is touched.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use apiary_api::FeatureGates;
use apiary_api::TokenLimits;
use apiary_api::WatchSettings;
use apiary_api::admission::AdmissionConfig;
use apiary_api::admission::PluginSelection;
use apiary_api::features::FeatureGateError;
use apiary_api::features::GateWarning;
use apiary_api::flowcontrol::FlowControlSettings;
use apiary_api::metrics::Exposure;
use apiary_api::metrics::ShowHiddenVersionError;
use apiary_api::registry::RuntimeConfig;
use apiary_api::registry::RuntimeConfigError;
use apiary_api::registry::allocator::RangeError;
use apiary_api::registry::allocator::ServiceRanges;
use apiary_raft::replica::RaftTimings;
use apiary_raft::typ::NodeId;

use crate::audit::AuditError;
use crate::audit::AuditSettings;
use crate::authn::jwt::JwtConfig;
use crate::authn::jwt::JwtConfigError;
use crate::authn::request_header::RequestHeaderError;
use crate::authn::request_header::RequestHeaderSettings;
use crate::authn::token_flags::TokenAuthError;
use crate::authn::token_flags::TokenAuthSettings;
use crate::authz::AuthorizationSettings;
use crate::authz::AuthzError;
use crate::cli::ClusterState;
use crate::cli::FlavorName;
use crate::cli::FlowControlArgs;
use crate::cli::ServeArgs;
use crate::cli::WatchArgs;
use crate::cluster_gates::GateRecord;
use crate::controllers::ControllerSelection;
use crate::controllers::UnknownController;
use crate::drain::ShutdownSettings;
use crate::periodic_snapshots::PeriodicSnapshots;
use crate::server::flavor;
use crate::service_account_key::DEFAULT_KEY_FILE;

/// Why the flags do not describe a replica.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// An audit flag cannot be used.
    #[error("invalid audit flags")]
    Audit(#[from] AuditError),
    /// The token file or the authentication webhook cannot be used.
    #[error("invalid token authentication flags")]
    TokenAuth(#[from] TokenAuthError),
    /// The authenticating proxy flags cannot be used.
    #[error("invalid authenticating proxy flags")]
    RequestHeader(#[from] RequestHeaderError),
    /// An `--initial-cluster` member is not `name=url`.
    #[error("--initial-cluster member {member:?} is not name=url")]
    MalformedMember {
        /// The offending member.
        member: String,
    },
    /// Two members share a name.
    #[error("--initial-cluster names {name:?} twice")]
    DuplicateName {
        /// The repeated name.
        name: String,
    },
    /// A peer URL is not `http(s)://host:port`.
    #[error("peer url {url:?} of {name:?} is not http(s)://host:port")]
    BadPeerUrl {
        /// The member.
        name: String,
        /// Its URL.
        url: String,
    },
    /// `--initial-cluster` lists nobody.
    #[error("--initial-cluster is empty")]
    EmptyCluster,
    /// A service account flag cannot be used.
    #[error("{0}")]
    ServiceAccounts(String),
    /// `--name` is not in `--initial-cluster`.
    #[error("--name {name:?} is not a member of --initial-cluster")]
    NotAMember {
        /// The name given.
        name: String,
    },
    /// Flow control is on but the server would have no seats to share.
    #[error(
        "--max-requests-inflight plus --max-mutating-requests-inflight must be positive while --enable-priority-and-fairness is true"
    )]
    NoConcurrency,
    /// The election timeout leaves too little room for heartbeats (as etcd, at least five).
    #[error(
        "--election-timeout ({election_ms} ms) must be at least five --heartbeat-interval ({heartbeat_ms} ms)"
    )]
    ElectionTimeoutTooShort {
        /// `--election-timeout`.
        election_ms: u64,
        /// `--heartbeat-interval`.
        heartbeat_ms: u64,
    },
    /// `--runtime-config` names an unknown group, version or resource, or a bad value.
    #[error(transparent)]
    RuntimeConfig(#[from] RuntimeConfigError),
    /// `--feature-gates` names an unknown or removed gate, unlocks a GA one, or is malformed.
    #[error("invalid argument {value:?} for \"--feature-gates\" flag: {problem}")]
    FeatureGates {
        /// The flag's values, comma-joined.
        value: String,
        /// What is wrong with them.
        problem: FeatureGateError,
    },
    /// `--service-cluster-ip-range` or `--service-node-port-range` is malformed.
    #[error(transparent)]
    ServiceRange(#[from] RangeError),
    /// `--show-hidden-metrics-for-version` is not the previous minor release.
    #[error(transparent)]
    ShowHiddenMetrics(#[from] ShowHiddenVersionError),
    /// `--enable-admission-plugins` or `--disable-admission-plugins` names an unknown
    /// plugin, or both name one.
    #[error(transparent)]
    Admission(#[from] apiary_api::admission::SelectionError),
    /// `--admission-control-config-file` cannot be read or is invalid.
    #[error(transparent)]
    AdmissionConfig(#[from] apiary_api::admission::AdmissionConfigError),
    /// `--controllers` names an unknown controller.
    #[error(transparent)]
    Controllers(#[from] UnknownController),
    /// The OpenID Connect flags or the authentication configuration cannot be used.
    #[error(transparent)]
    Jwt(#[from] JwtConfigError),
    /// The authorization flags or configuration file cannot be used.
    #[error(transparent)]
    Authz(#[from] AuthzError),
    /// A duration flag that must be positive is zero.
    #[error("{flag} must be more than zero")]
    ZeroDuration {
        /// The flag.
        flag: &'static str,
    },
}

/// One member of `--initial-cluster`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Raft id: the 1-based position in the list.
    pub id: NodeId,
    /// The replica's name.
    pub name: String,
    /// Where its peer listener is reached.
    pub peer_url: String,
}

/// Certificate files of the API listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTlsFiles {
    /// PEM certificate chain served.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
    /// PEM CA bundle verifying client certificates; `None`: no client certificates.
    pub client_ca: Option<PathBuf>,
}

/// Certificate files of the mutual TLS between replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerTlsFiles {
    /// PEM certificate chain presented to peers, as server and as client.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
    /// PEM CA bundle peers must chain to.
    pub trusted_ca: PathBuf,
}

/// Everything one replica needs besides its sockets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    /// This replica's name.
    pub name: String,
    /// This replica's raft id.
    pub id: NodeId,
    /// Raft log, snapshots and state.
    pub data_dir: PathBuf,
    /// Every founding replica: raft id to peer URL.
    pub initial_cluster: BTreeMap<NodeId, String>,
    /// Join a running cluster instead of founding one.
    pub join_existing: bool,
    /// API listener certificates.
    pub api_tls: ApiTlsFiles,
    /// Peer mutual TLS certificates.
    pub peer_tls: PeerTlsFiles,
    /// Product naming of the API.
    pub flavor: FlavorName,
    /// Heartbeat, election and request timings.
    pub raft: RaftTimings,
    /// How much history the leader keeps before it compacts (`--watch-history`).
    pub watch_history: Duration,
    /// Periodic automatic snapshots, if asked for.
    pub periodic_snapshots: Option<PeriodicSnapshots>,
    /// Watch durations and bookmark interval of the API.
    pub watch: WatchSettings,
    /// Which API versions and resources are served (`--runtime-config`, read once here).
    pub runtime_config: RuntimeConfig,
    /// The key that signs service account tokens (made there when absent).
    pub service_account_key: PathBuf,
    /// How service account tokens are issued and checked.
    pub service_accounts: ServiceAccountSettings,
    /// Where Services get cluster IPs and node ports (`--service-cluster-ip-range`,
    /// `--service-node-port-range`).
    pub service_ranges: ServiceRanges,
    /// The most bytes an object's stored form may have (`--max-object-bytes`).
    pub max_object_bytes: usize,
    /// The admission plugins enabled (`--enable-admission-plugins`,
    /// `--disable-admission-plugins`).
    pub admission: PluginSelection,
    /// The admission plugins' configurations (`--admission-control-config-file`).
    pub admission_config: AdmissionConfig,
    /// Which gated features are on (`--feature-gates`).
    pub feature_gates: FeatureGates,
    /// What setting `--feature-gates` left to log: GA or deprecated gates that were set.
    pub feature_gate_warnings: Vec<GateWarning>,
    /// Whether this replica's cluster-wide gates replace the cluster's
    /// (`--replace-cluster-feature-gates`) or must agree with them.
    pub gate_record: GateRecord,
    /// Graceful shutdown (`--shutdown-delay-duration`, `--shutdown-send-retry-after`).
    pub shutdown: ShutdownSettings,
    /// How long after start `/livez` passes unfinished start-up steps (`--livez-grace-period`).
    pub livez_grace_period: Duration,
    /// The audit policy and backends (`--audit-*`).
    pub audit: AuditSettings,
    /// Anonymous requests, the token file and the authentication webhook.
    pub token_auth: TokenAuthSettings,
    /// API Priority and Fairness (`--enable-priority-and-fairness`, `--max-requests-inflight`,
    /// `--max-mutating-requests-inflight`).
    pub flow_control: FlowControlSettings,
    /// Which metrics `/metrics` shows (`--show-hidden-metrics-for-version`).
    pub metrics_exposure: Exposure,
    /// Whether bootstrap tokens authenticate (`--enable-bootstrap-token-auth`).
    pub bootstrap_token_auth: bool,
    /// The controllers run while this replica leads (`--controllers`).
    pub controllers: ControllerSelection,
    /// JWT authentication (`--oidc-*` or `--authentication-config`), if configured.
    pub jwt: Option<JwtConfig>,
    /// The authenticating proxy (`--requestheader-*`), if any.
    pub request_header: Option<RequestHeaderSettings>,
    /// The authorization modes (`--authorization-mode` or `--authorization-config`).
    pub authorization: AuthorizationSettings,
}

/// The service account flags (`--service-account-*`, `--api-audiences`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceAccountSettings {
    /// The accepted issuers; the first signs.
    pub issuers: Vec<String>,
    /// Files of keys that verify tokens (empty: the serving key).
    pub key_files: Vec<PathBuf>,
    /// The audiences a token must be meant for (default: the issuers).
    pub api_audiences: Vec<String>,
    /// Whether legacy tokens are checked against the API.
    pub lookup: bool,
    /// Lifetime bounds of issued tokens.
    pub limits: TokenLimits,
    /// The `jwks_uri` of the discovery document.
    pub jwks_uri: Option<String>,
}

impl ServiceAccountSettings {
    /// The defaults for tokens of `issuer`: it is the only issuer and API audience, the
    /// serving key verifies, legacy tokens are looked up, Kubernetes' lifetime defaults.
    pub fn new(issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        Self {
            issuers: vec![issuer.clone()],
            key_files: Vec::new(),
            api_audiences: vec![issuer],
            lookup: true,
            limits: TokenLimits::default(),
            jwks_uri: None,
        }
    }
}

/// The service account settings of `args`; an error for an empty issuer or a maximum
/// lifetime out of 1h..=2^32s (upstream's bounds).
fn service_account_settings(args: &ServeArgs) -> Result<ServiceAccountSettings, ConfigError> {
    let issuers: Vec<String> = args
        .service_account_issuer
        .iter()
        .filter(|i| !i.is_empty())
        .cloned()
        .collect();
    if issuers.is_empty() {
        return Err(ConfigError::ServiceAccounts(
            "--service-account-issuer must not be empty".to_owned(),
        ));
    }
    let max_expiration_seconds = match args.service_account_max_token_expiration {
        Some(max) if !(3600..=1 << 32).contains(&max.as_secs()) => {
            return Err(ConfigError::ServiceAccounts(
                "the --service-account-max-token-expiration must be between 1 hour and 2^32 seconds"
                    .to_owned(),
            ));
        }
        Some(max) => i64::try_from(max.as_secs()).ok(),
        None => None,
    };
    let api_audiences = if args.api_audiences.is_empty() {
        issuers.clone()
    } else {
        args.api_audiences.clone()
    };
    Ok(ServiceAccountSettings {
        issuers,
        key_files: args.service_account_key_file.clone(),
        api_audiences,
        lookup: args.service_account_lookup,
        limits: TokenLimits {
            max_expiration_seconds,
            extend_expiration: args.service_account_extend_token_expiration,
        },
        jwks_uri: args.service_account_jwks_uri.clone(),
    })
}

impl ServeConfig {
    /// Checks `args` and resolves this replica's id from `--initial-cluster`.
    pub fn from_args(args: &ServeArgs) -> Result<Self, ConfigError> {
        let members = parse_initial_cluster(&args.initial_cluster)?;
        let id = members
            .iter()
            .find(|m| m.name == args.name)
            .map(|m| m.id)
            .ok_or_else(|| ConfigError::NotAMember {
                name: args.name.clone(),
            })?;
        let (feature_gates, feature_gate_warnings) = FeatureGates::parse(
            args.feature_gates.iter().map(String::as_str),
        )
        .map_err(|problem| ConfigError::FeatureGates {
            value: args.feature_gates.join(","),
            problem,
        })?;
        let jwt = args
            .jwt
            .config(&args.service_account_issuer, flavor(args.flavor))?;
        Ok(Self {
            name: args.name.clone(),
            id,
            data_dir: args.data_dir.clone(),
            initial_cluster: members.into_iter().map(|m| (m.id, m.peer_url)).collect(),
            join_existing: args.initial_cluster_state == ClusterState::Existing,
            api_tls: ApiTlsFiles {
                cert: args.tls_cert_file.clone(),
                key: args.tls_private_key_file.clone(),
                client_ca: args.client_ca_file.clone(),
            },
            peer_tls: PeerTlsFiles {
                cert: args.peer_cert_file.clone(),
                key: args.peer_key_file.clone(),
                trusted_ca: args.peer_trusted_ca_file.clone(),
            },
            flavor: args.flavor,
            raft: raft_timings(args.heartbeat_interval, args.election_timeout)?,
            watch_history: positive("--watch-history", args.watch.watch_history)?,
            periodic_snapshots: args.periodic_snapshots.settings(&args.data_dir),
            watch: watch_settings(&args.watch)?,
            runtime_config: RuntimeConfig::parse(
                args.runtime_config.iter().map(String::as_str),
                flavor(args.flavor),
            )?,
            service_account_key: args
                .service_account_signing_key_file
                .clone()
                .unwrap_or_else(|| args.data_dir.join(DEFAULT_KEY_FILE)),
            service_accounts: service_account_settings(args)?,
            service_ranges: ServiceRanges::parse(
                &args.service_cluster_ip_range,
                &args.service_node_port_range,
            )?,
            max_object_bytes: args.max_object_bytes,
            admission: PluginSelection::new(
                &args.admission.enable_admission_plugins,
                &args.admission.disable_admission_plugins,
            )?,
            admission_config: match &args.admission.admission_control_config_file {
                Some(path) => AdmissionConfig::read(path)?,
                None => AdmissionConfig::default(),
            },
            feature_gates,
            feature_gate_warnings,
            gate_record: if args.replace_cluster_feature_gates {
                GateRecord::Replace
            } else {
                GateRecord::Agree
            },
            shutdown: ShutdownSettings {
                delay: args.lifecycle.shutdown_delay_duration,
                send_retry_after: args.lifecycle.shutdown_send_retry_after,
                watch_termination_grace: args.lifecycle.shutdown_watch_termination_grace_period,
            },
            livez_grace_period: args.lifecycle.livez_grace_period,
            audit: AuditSettings::from_args(&args.audit, flavor(args.flavor))?,
            token_auth: TokenAuthSettings::from_args(
                &args.token_auth,
                jwt.as_ref().and_then(JwtConfig::anonymous),
            )?,
            flow_control: flow_control_settings(&args.flow_control)?,
            metrics_exposure: Exposure::for_show_hidden_version(
                args.show_hidden_metrics_for_version
                    .as_deref()
                    .unwrap_or_default(),
            )?,
            bootstrap_token_auth: args.enable_bootstrap_token_auth,
            controllers: ControllerSelection::parse(&args.controllers)?,
            jwt,
            request_header: args.request_header.settings()?,
            authorization: AuthorizationSettings::from_args(&args.authz, flavor(args.flavor))?,
        })
    }
}

/// Flow control's settings from its flags; the seats must not sum to zero while it is on.
fn flow_control_settings(args: &FlowControlArgs) -> Result<FlowControlSettings, ConfigError> {
    let settings = FlowControlSettings {
        enabled: args.enable_priority_and_fairness,
        max_requests_inflight: args.max_requests_inflight,
        max_mutating_requests_inflight: args.max_mutating_requests_inflight,
        ..FlowControlSettings::default()
    };
    if settings.enabled
        && settings.max_requests_inflight + settings.max_mutating_requests_inflight == 0
    {
        return Err(ConfigError::NoConcurrency);
    }
    Ok(settings)
}

/// The API's watch settings from `--min-request-timeout` and `--watch-bookmark-interval`.
fn watch_settings(args: &WatchArgs) -> Result<WatchSettings, ConfigError> {
    Ok(WatchSettings {
        min_request_timeout: positive(
            "--min-request-timeout",
            Duration::from_secs(args.min_request_timeout),
        )?,
        bookmark_interval: positive("--watch-bookmark-interval", args.watch_bookmark_interval)?,
    })
}

/// `duration` unless it is zero (a zero history would compact away every watch's start, a
/// zero interval is no interval).
fn positive(flag: &'static str, duration: Duration) -> Result<Duration, ConfigError> {
    if duration.is_zero() {
        Err(ConfigError::ZeroDuration { flag })
    } else {
        Ok(duration)
    }
}

/// Raft timings from `--heartbeat-interval` and `--election-timeout` (milliseconds).
fn raft_timings(heartbeat_ms: u64, election_ms: u64) -> Result<RaftTimings, ConfigError> {
    if heartbeat_ms == 0 || election_ms < heartbeat_ms.saturating_mul(5) {
        return Err(ConfigError::ElectionTimeoutTooShort {
            election_ms,
            heartbeat_ms,
        });
    }
    Ok(RaftTimings::new(
        Duration::from_millis(heartbeat_ms),
        Duration::from_millis(election_ms),
    ))
}

/// Parses `name=url,name=url,...`; ids are 1-based positions.
pub fn parse_initial_cluster(spec: &str) -> Result<Vec<Member>, ConfigError> {
    let mut members: Vec<Member> = Vec::new();
    for (member, id) in spec
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .zip(1..)
    {
        let (name, url) = member
            .split_once('=')
            .map(|(n, u)| (n.trim(), u.trim()))
            .filter(|(n, u)| !n.is_empty() && !u.is_empty())
            .ok_or_else(|| ConfigError::MalformedMember {
                member: member.to_owned(),
            })?;
        if members.iter().any(|m| m.name == name) {
            return Err(ConfigError::DuplicateName {
                name: name.to_owned(),
            });
        }
        if !is_peer_url(url) {
            return Err(ConfigError::BadPeerUrl {
                name: name.to_owned(),
                url: url.to_owned(),
            });
        }
        members.push(Member {
            id,
            name: name.to_owned(),
            peer_url: url.trim_end_matches('/').to_owned(),
        });
    }
    if members.is_empty() {
        return Err(ConfigError::EmptyCluster);
    }
    Ok(members)
}

/// `http(s)://authority` with a port; the authority must parse as an `http::Uri` authority.
fn is_peer_url(url: &str) -> bool {
    let Ok(uri) = url.parse::<http::Uri>() else {
        return false;
    };
    let scheme_ok = matches!(uri.scheme_str(), Some("https" | "http"));
    let path_ok = matches!(uri.path(), "" | "/");
    scheme_ok && path_ok && uri.port_u16().is_some() && uri.query().is_none()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use apiary_api::Feature;
    use apiary_api::Flavor;

    use super::*;
    use crate::cli::Cli;
    use crate::cli::Command;

    #[test]
    fn ids_are_one_based_positions() {
        let members =
            parse_initial_cluster("a=https://127.0.0.1:7001, b=https://h:7002/,c=http://[::1]:3")
                .unwrap();
        let got: Vec<_> = members
            .iter()
            .map(|m| (m.id, m.name.as_str(), m.peer_url.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "a", "https://127.0.0.1:7001"),
                (2, "b", "https://h:7002"),
                (3, "c", "http://[::1]:3"),
            ]
        );
    }

    #[test]
    fn malformed_clusters_are_rejected() {
        assert_eq!(parse_initial_cluster(""), Err(ConfigError::EmptyCluster));
        assert!(matches!(
            parse_initial_cluster("a"),
            Err(ConfigError::MalformedMember { .. })
        ));
        assert!(matches!(
            parse_initial_cluster("=https://h:1"),
            Err(ConfigError::MalformedMember { .. })
        ));
        assert!(matches!(
            parse_initial_cluster("a=https://h:1,a=https://h:2"),
            Err(ConfigError::DuplicateName { .. })
        ));
        for url in [
            "h:1",
            "ftp://h:1",
            "https://h",
            "https://h:1/x",
            "https://h:99999",
        ] {
            assert!(
                matches!(
                    parse_initial_cluster(&format!("a={url}")),
                    Err(ConfigError::BadPeerUrl { .. })
                ),
                "{url}"
            );
        }
    }

    #[test]
    fn serve_config_resolves_own_id() {
        let cli = Cli::try_parse_from([
            "apiary",
            "serve",
            "--name=node-2",
            "--data-dir=/d",
            "--initial-cluster=node-1=https://127.0.0.1:7001,node-2=https://127.0.0.1:7002",
            "--initial-cluster-state=existing",
            "--tls-cert-file=s.crt",
            "--tls-private-key-file=s.key",
            "--peer-cert-file=p.crt",
            "--peer-key-file=p.key",
            "--peer-trusted-ca-file=ca.crt",
        ])
        .unwrap();
        let Command::Serve(args) = cli.command else {
            panic!("not serve");
        };
        let config = ServeConfig::from_args(&args).unwrap();
        assert_eq!(config.id, 2);
        assert!(config.join_existing);
        assert_eq!(config.initial_cluster.len(), 2);
        assert_eq!(config.initial_cluster[&1], "https://127.0.0.1:7001");
        assert_eq!(config.raft.heartbeat_interval, Duration::from_millis(200));
        // A follower stands after [1 s, 1.2 s) without a leader: openraft's lease (600 ms),
        // then a random election timeout in [400 ms, 600 ms).
        assert_eq!(config.raft.election_timeout(), Duration::from_millis(1000));
        assert_eq!(config.raft.election_timeout_min, Duration::from_millis(400));
        assert_eq!(config.raft.election_timeout_max, Duration::from_millis(600));
        // R-RES-233: five minutes of history unless told otherwise.
        assert_eq!(config.watch_history, Duration::from_secs(300));
        assert_eq!(config.watch, WatchSettings::default());
        assert_eq!(
            config.max_object_bytes,
            apiary_api::DEFAULT_MAX_OBJECT_BYTES
        );
        let small = ServeArgs {
            max_object_bytes: 4096,
            ..args.clone()
        };
        assert_eq!(
            ServeConfig::from_args(&small).map(|c| c.max_object_bytes),
            Ok(4096)
        );
        let no_seats = ServeArgs {
            flow_control: FlowControlArgs {
                enable_priority_and_fairness: true,
                max_requests_inflight: 0,
                max_mutating_requests_inflight: 0,
            },
            ..args.clone()
        };
        assert_eq!(
            ServeConfig::from_args(&no_seats).map(|c| c.flow_control),
            Err(ConfigError::NoConcurrency)
        );
        let off = ServeArgs {
            flow_control: FlowControlArgs {
                enable_priority_and_fairness: false,
                ..no_seats.flow_control.clone()
            },
            ..args.clone()
        };
        assert!(!ServeConfig::from_args(&off).unwrap().flow_control.enabled);

        let short = ServeArgs {
            watch: WatchArgs {
                watch_history: Duration::from_secs(2),
                min_request_timeout: 4,
                watch_bookmark_interval: Duration::from_millis(700),
            },
            ..args.clone()
        };
        let config = ServeConfig::from_args(&short).unwrap();
        assert_eq!(config.watch_history, Duration::from_secs(2));
        assert_eq!(
            config.watch,
            WatchSettings {
                min_request_timeout: Duration::from_secs(4),
                bookmark_interval: Duration::from_millis(700),
            }
        );
        let no_history = ServeArgs {
            watch: WatchArgs {
                watch_history: Duration::ZERO,
                ..short.watch.clone()
            },
            ..args.clone()
        };
        assert_eq!(
            ServeConfig::from_args(&no_history),
            Err(ConfigError::ZeroDuration {
                flag: "--watch-history"
            })
        );
        let no_bookmarks = ServeArgs {
            watch: WatchArgs {
                watch_bookmark_interval: Duration::ZERO,
                ..short.watch.clone()
            },
            ..args.clone()
        };
        assert_eq!(
            ServeConfig::from_args(&no_bookmarks),
            Err(ConfigError::ZeroDuration {
                flag: "--watch-bookmark-interval"
            })
        );

        // R-VER-063, R-VER-067: `--runtime-config` is parsed once, into the replica's config at
        // start; an unknown key stops start-up.
        assert_eq!(config.runtime_config, RuntimeConfig::default());
        let configured = ServeArgs {
            runtime_config: vec!["api/all=false".into(), "batch/v1".into()],
            ..args.clone()
        };
        let expected = RuntimeConfig::parse(["api/all=false,batch/v1"], Flavor::Platform);
        assert_eq!(
            ServeConfig::from_args(&configured).map(|c| c.runtime_config),
            Ok(expected.unwrap())
        );
        let unknown = ServeArgs {
            runtime_config: vec!["batch/v9=true".into()],
            ..args.clone()
        };
        assert_eq!(
            ServeConfig::from_args(&unknown),
            Err(ConfigError::RuntimeConfig(
                RuntimeConfigError::UnknownGroupVersion("batch/v9".into())
            ))
        );

        assert_eq!(config.service_ranges, ServiceRanges::default());
        let ranges = ServeArgs {
            service_cluster_ip_range: "10.0.0.0/24".into(),
            service_node_port_range: "31000-31999".into(),
            ..args.clone()
        };
        assert_eq!(
            ServeConfig::from_args(&ranges).map(|c| c.service_ranges),
            ServiceRanges::parse("10.0.0.0/24", "31000-31999").map_err(ConfigError::from)
        );
        let bad_range = ServeArgs {
            service_cluster_ip_range: "fd00::/108".into(),
            ..args.clone()
        };
        assert!(matches!(
            ServeConfig::from_args(&bad_range),
            Err(ConfigError::ServiceRange(RangeError::Cidr(_)))
        ));

        // Only the previous minor release shows hidden metrics; anything else stops start-up.
        let shown = ServeArgs {
            show_hidden_metrics_for_version: Some("1.36".into()),
            ..args.clone()
        };
        let config = ServeConfig::from_args(&shown).unwrap();
        assert!(config.metrics_exposure.shows_hidden());
        let too_old = ServeArgs {
            show_hidden_metrics_for_version: Some("1.35".into()),
            ..args.clone()
        };
        assert!(matches!(
            ServeConfig::from_args(&too_old),
            Err(ConfigError::ShowHiddenMetrics(_))
        ));

        let stranger = ServeArgs {
            name: "node-9".into(),
            ..args
        };
        assert_eq!(
            ServeConfig::from_args(&stranger),
            Err(ConfigError::NotAMember {
                name: "node-9".into()
            })
        );
    }

    // R-ACC-121: the service account flags: repeatable issuers (the first signs) and key
    // files, audiences defaulting to the issuers, the lookup and extension switches, and the
    // maximum lifetime within upstream's bounds.
    #[test]
    fn service_account_flags_are_read() {
        let defaults = ServeConfig::from_args(&serve_args(&[]))
            .unwrap()
            .service_accounts;
        assert_eq!(
            defaults,
            ServiceAccountSettings::new(crate::cli::DEFAULT_SERVICE_ACCOUNT_ISSUER)
        );
        let args = serve_args(&[
            "--service-account-issuer=https://a",
            "--service-account-issuer=https://b",
            "--service-account-key-file=k1.pem",
            "--service-account-key-file=k2.pem",
            "--service-account-lookup=false",
            "--service-account-extend-token-expiration=false",
            "--service-account-max-token-expiration=2h",
            "--service-account-jwks-uri=https://keys/jwks",
        ]);
        let settings = ServeConfig::from_args(&args).unwrap().service_accounts;
        assert_eq!(settings.issuers, ["https://a", "https://b"]);
        assert_eq!(settings.api_audiences, ["https://a", "https://b"]);
        assert_eq!(
            settings.key_files,
            [PathBuf::from("k1.pem"), PathBuf::from("k2.pem")]
        );
        assert!(!settings.lookup);
        assert_eq!(
            settings.limits,
            TokenLimits {
                max_expiration_seconds: Some(7200),
                extend_expiration: false
            }
        );
        assert_eq!(settings.jwks_uri.as_deref(), Some("https://keys/jwks"));
        let audiences = serve_args(&["--api-audiences=x,y"]);
        let settings = ServeConfig::from_args(&audiences).unwrap().service_accounts;
        assert_eq!(settings.api_audiences, ["x", "y"]);
        for bad in [
            "--service-account-max-token-expiration=30m",
            "--service-account-issuer=",
        ] {
            assert!(
                matches!(
                    ServeConfig::from_args(&serve_args(&[bad])),
                    Err(ConfigError::ServiceAccounts(_))
                ),
                "{bad}"
            );
        }
    }

    fn serve_args(feature_gates: &[&str]) -> ServeArgs {
        let mut argv = vec![
            "apiary",
            "serve",
            "--name=n",
            "--data-dir=/d",
            "--initial-cluster=n=https://127.0.0.1:7001",
            "--tls-cert-file=s.crt",
            "--tls-private-key-file=s.key",
            "--peer-cert-file=p.crt",
            "--peer-key-file=p.key",
            "--peer-trusted-ca-file=ca.crt",
        ];
        argv.extend(feature_gates);
        let Command::Serve(args) = Cli::try_parse_from(argv).unwrap().command else {
            panic!("not serve");
        };
        args
    }

    // R-VER-087: a beta gate set off reaches the replica's config.
    #[test]
    fn feature_gates_reach_the_config() {
        let config = ServeConfig::from_args(&serve_args(&[])).unwrap();
        assert_eq!(config.feature_gates, FeatureGates::default());
        assert!(config.feature_gate_warnings.is_empty());
        let config = ServeConfig::from_args(&serve_args(&[
            "--feature-gates= APIResponseCompression=false, CBORServingAndStorage=true",
            "--feature-gates=AuthorizeWithSelectors=true",
        ]))
        .unwrap();
        assert!(
            !config
                .feature_gates
                .enabled(Feature::APIResponseCompression)
        );
        assert!(config.feature_gates.enabled(Feature::CBORServingAndStorage));
        assert_eq!(config.feature_gate_warnings.len(), 1);
    }

    // R-VER-051 R-VER-088 R-VER-089: unlocking a GA gate, setting a removed or an unknown gate,
    // or a malformed entry stops start-up, with kube-apiserver's wording.
    #[test]
    fn bad_feature_gates_stop_start_up() {
        let error = |flag: &str| {
            ServeConfig::from_args(&serve_args(&[flag]))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            error("--feature-gates=AuthorizeWithSelectors=false"),
            "invalid argument \"AuthorizeWithSelectors=false\" for \"--feature-gates\" flag: \
             cannot set feature gate AuthorizeWithSelectors to false, feature is locked to true"
        );
        assert!(error("--feature-gates=APIListChunking=true").contains("has been removed"));
        assert!(error("--feature-gates=Nope=true").ends_with("unrecognized feature gate: Nope"));
        assert!(error("--feature-gates=WatchList").contains("expect string=bool"));
        assert!(error("--feature-gates=WatchList=yes").contains("invalid value of WatchList=yes"));
    }

    #[test]
    fn election_timeout_must_cover_five_heartbeats() {
        assert!(raft_timings(100, 500).is_ok());
        assert_eq!(
            raft_timings(200, 999).unwrap_err(),
            ConfigError::ElectionTimeoutTooShort {
                election_ms: 999,
                heartbeat_ms: 200
            }
        );
        assert!(raft_timings(0, 1000).is_err());
    }
}

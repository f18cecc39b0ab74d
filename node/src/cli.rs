//! The command line of the `apiary` binary (clap derive): `apiary serve` runs one replica,
//! `apiary dev` runs a local cluster of replicas. Only shapes and defaults live here; checking
//! the values against each other is [`crate::config`]'s job.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use apiary_api::DEFAULT_MAX_OBJECT_BYTES;
use apiary_api::FeatureGates;
use apiary_api::registry::allocator::DEFAULT_CLUSTER_IP_RANGE;
use apiary_api::registry::allocator::DEFAULT_NODE_PORT_RANGE;
use clap::Args;
use clap::Parser;
use clap::Subcommand;
use clap::ValueEnum;

use crate::audit::AuditArgs;
use crate::authn::jwt::JwtArgs;
use crate::authn::request_header::RequestHeaderArgs;
use crate::authn::token_flags::TokenAuthArgs;
use crate::authz::AuthzArgs;
use crate::certs::hosts::Address;
use crate::certs::hosts::Host;
use crate::certs::hosts::parse_address;
use crate::certs::hosts::parse_host;
use crate::certs::hosts::parse_server;
use crate::duration::parse_duration;

/// `apiary`: a replicated API server.
#[derive(Debug, Parser)]
#[command(name = "apiary", version, about)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
#[allow(
    clippy::large_enum_variant,
    reason = "parsed once at start-up; boxing would only obscure the clap derive"
)]
pub enum Command {
    /// Run one replica: the HTTP API server and its share of the replicated store.
    Serve(ServeArgs),
    /// Run a local cluster of replicas with generated certificates and a kubeconfig.
    Dev(DevArgs),
    /// List, add, promote, remove members and hand leadership over (the operating API).
    Member(crate::ctl::member::MemberArgs),
    /// Show the cluster's status: members, roles, indexes, sizes and versions.
    Status(crate::ctl::status::StatusArgs),
    /// Take, check and restore backups of the cluster's store.
    Snapshot(crate::ctl::snapshot::SnapshotArgs),
    /// Write the certificates, admin kubeconfig and per-host environment files of a cluster of
    /// named hosts (keeps the CAs and keys already in `--dir`).
    Certs(CertsArgs),
}

/// Which product naming the API uses (DESIGN.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum FlavorName {
    /// Neutral names (`platform.io`, `platform-system`).
    #[default]
    Platform,
    /// Kubernetes names (`k8s.io`, `kube-system`), for unmodified Kubernetes clients.
    Kubernetes,
}

impl FlavorName {
    /// The flag value that selects this flavor.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Platform => "platform",
            Self::Kubernetes => "kubernetes",
        }
    }
}

/// Whether a replica founds a new cluster or joins a running one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ClusterState {
    /// Found the cluster listed in `--initial-cluster` (a no-op on restart).
    #[default]
    New,
    /// Join a running cluster: added as a learner, then promoted to voter.
    Existing,
}

impl ClusterState {
    /// The flag value that selects this state.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::New => "new",
            Self::Existing => "existing",
        }
    }
}

/// Flags of `apiary serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// This replica's name; must appear in `--initial-cluster`.
    #[arg(long)]
    pub name: String,
    /// Where the raft log, snapshots and raft state are kept.
    #[arg(long)]
    pub data_dir: PathBuf,
    /// Address of the HTTPS API listener.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen_api: SocketAddr,
    /// Address of the peer (replica to replica) listener.
    #[arg(long, default_value = "127.0.0.1:7443")]
    pub listen_peer: SocketAddr,
    /// Every replica as `name=peer-url`, comma separated; a replica's raft id is its 1-based
    /// position in this list.
    #[arg(long)]
    pub initial_cluster: String,
    /// `new` to found the cluster, `existing` to join a running one.
    #[arg(long, value_enum, default_value_t)]
    pub initial_cluster_state: ClusterState,
    /// Periodic automatic snapshots.
    #[command(flatten)]
    pub periodic_snapshots: crate::periodic_snapshots::PeriodicSnapshotArgs,
    /// PEM certificate chain served on the API listener.
    #[arg(long)]
    pub tls_cert_file: PathBuf,
    /// PEM private key of `--tls-cert-file`.
    #[arg(long)]
    pub tls_private_key_file: PathBuf,
    /// PEM CA bundle that verifies client certificates (x509 authentication); without it no
    /// client certificate is asked for.
    #[arg(long)]
    pub client_ca_file: Option<PathBuf>,
    /// PEM certificate chain this replica presents to its peers (as server and as client).
    #[arg(long)]
    pub peer_cert_file: PathBuf,
    /// PEM private key of `--peer-cert-file`.
    #[arg(long)]
    pub peer_key_file: PathBuf,
    /// PEM CA bundle that peers' certificates must chain to.
    #[arg(long)]
    pub peer_trusted_ca_file: PathBuf,
    /// Product naming of the API.
    #[arg(long, value_enum, default_value_t)]
    pub flavor: FlavorName,
    /// API versions and resources to enable or disable beyond the defaults: comma-separated
    /// `<key>[=true|false]` (`api/all`, `api/ga`, `api/beta`, `api/alpha`, `<group>/<version>`,
    /// `<group>/<version>/<resource>`; core: `api/v1`), repeatable; the most specific key
    /// wins, and an unknown key stops start-up.
    #[arg(long, value_delimiter = ',')]
    pub runtime_config: Vec<String>,
    /// The IPv4 CIDR Services' cluster IPs come from; its first IP goes to the API servers'
    /// own Service in `default`.
    #[arg(long, default_value = DEFAULT_CLUSTER_IP_RANGE)]
    pub service_cluster_ip_range: String,
    /// The ports NodePort and LoadBalancer Services get node ports from (`FIRST-LAST`).
    #[arg(long, default_value = DEFAULT_NODE_PORT_RANGE)]
    pub service_node_port_range: String,
    /// Milliseconds between leader heartbeats; also the deadline of one replication RPC, so it
    /// must cover a round trip on a loaded machine.
    #[arg(long, default_value_t = 200)]
    pub heartbeat_interval: u64,
    /// The election timeout in milliseconds; at least five heartbeat intervals. A follower
    /// that hears no leader stands for election after about this long: between this and 1.2
    /// times this (openraft: the leader's lease, 3/5 of it, then a random 2/5 to 3/5 of it).
    #[arg(long, default_value_t = 1000)]
    pub election_timeout: u64,
    /// RSA private key (PEM) that signs service account tokens; without it, the replica
    /// makes one at first start and keeps it as `service-account.key` in its data directory.
    #[arg(long)]
    pub service_account_signing_key_file: Option<PathBuf>,
    /// The `iss` claim of service account tokens, repeatable: the first signs new tokens,
    /// tokens of every one authenticate (a change of issuer without invalidating tokens).
    #[arg(long, default_value = DEFAULT_SERVICE_ACCOUNT_ISSUER)]
    pub service_account_issuer: Vec<String>,
    /// PEM file of public or private keys (RSA, ECDSA) that verify service account tokens,
    /// repeatable; without it, the `--tls-private-key-file` key (the signing key always
    /// verifies).
    #[arg(long)]
    pub service_account_key_file: Vec<PathBuf>,
    /// The audiences a bearer token must be meant for (comma-separated); default: the service
    /// account issuers.
    #[arg(long, value_delimiter = ',')]
    pub api_audiences: Vec<String>,
    /// Check legacy service account tokens against their Secret and service account.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub service_account_lookup: bool,
    /// The longest lifetime of an issued service account token (1h up to 2^32s; longer
    /// requests get this); no limit by default.
    #[arg(long, value_parser = parse_duration)]
    pub service_account_max_token_expiration: Option<Duration>,
    /// Give pod-bound tokens asking for the node agent's default lifetime a year, with a
    /// `warnafter` claim at the lifetime asked for.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub service_account_extend_token_expiration: bool,
    /// The `jwks_uri` of `/.well-known/openid-configuration`; default: this server's
    /// `/openid/v1/jwks` at the address the client reached.
    #[arg(long)]
    pub service_account_jwks_uri: Option<String>,
    /// The most bytes an object may have when stored (its encoded form): a create, update or
    /// patch of a larger one is refused with 413. The default is etcd's default
    /// `--max-request-bytes`.
    #[arg(long, default_value_t = DEFAULT_MAX_OBJECT_BYTES, value_parser = parse_object_bytes)]
    pub max_object_bytes: usize,
    /// Feature gates as comma-separated `Name=true|false`, repeatable (help: the gate table).
    #[arg(long, value_delimiter = ',', help = FeatureGates::help())]
    pub feature_gates: Vec<String>,
    /// Make this replica's values of the gates marked "same on every replica" the cluster's,
    /// replacing the recorded ones (a deliberate change, with every other replica stopped);
    /// without it, a replica whose values differ from the cluster's refuses to start.
    #[arg(long)]
    pub replace_cluster_feature_gates: bool,
    /// The previous minor release (e.g. `1.36`) to show on `/metrics` the metrics this release
    /// hides because they were deprecated before it; no other value is accepted.
    #[arg(long)]
    pub show_hidden_metrics_for_version: Option<String>,
    /// Authenticate bootstrap tokens: Secrets `bootstrap-token-<id>` of type
    /// `bootstrap.<domain>/token` in the system namespace.
    #[arg(long)]
    pub enable_bootstrap_token_auth: bool,
    /// The controllers run on the replica that leads, comma separated: `*` is the default-on
    /// set, `name` turns one on, `-name` off (`tokencleaner` and `bootstrapsigner` only by name).
    #[arg(long, value_delimiter = ',', default_value = "*")]
    pub controllers: Vec<String>,
    /// History, watch and continue-token lifetimes.
    #[command(flatten)]
    pub watch: WatchArgs,
    /// Start-up and graceful shutdown.
    #[command(flatten)]
    pub lifecycle: LifecycleArgs,
    /// The audit log and webhook.
    #[command(flatten)]
    pub audit: AuditArgs,
    /// Anonymous requests, the static token file and the authentication webhook.
    #[command(flatten)]
    pub token_auth: TokenAuthArgs,
    /// API Priority and Fairness.
    #[command(flatten)]
    pub flow_control: FlowControlArgs,
    /// OpenID Connect flags and the authentication configuration file.
    #[command(flatten)]
    pub jwt: JwtArgs,
    /// The authenticating proxy.
    #[command(flatten)]
    pub request_header: RequestHeaderArgs,
    /// The authorization modes or configuration file.
    #[command(flatten)]
    pub authz: AuthzArgs,
    /// The admission plugins.
    #[command(flatten)]
    pub admission: AdmissionArgs,
}

/// Which admission plugins run (kube-apiserver's flags): Kubernetes' default set, plus
/// `--enable-admission-plugins`, less `--disable-admission-plugins`, in Kubernetes' order
/// whatever the order of the flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AdmissionArgs {
    /// Admission plugins to enable beyond the default set, comma separated.
    #[arg(long, value_delimiter = ',')]
    pub enable_admission_plugins: Vec<String>,
    /// Admission plugins of the default set to disable, comma separated.
    #[arg(long, value_delimiter = ',')]
    pub disable_admission_plugins: Vec<String>,
    /// The AdmissionConfiguration file: the plugins' configurations (YAML or JSON).
    #[arg(long)]
    pub admission_control_config_file: Option<PathBuf>,
}

/// `--max-object-bytes`: a positive number of bytes.
fn parse_object_bytes(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(0) => Err("must be more than zero".to_owned()),
        Ok(bytes) => Ok(bytes),
        Err(e) => Err(e.to_string()),
    }
}

/// The issuer of service account tokens when `--service-account-issuer` is not given.
pub const DEFAULT_SERVICE_ACCOUNT_ISSUER: &str = "https://apiary.local";

/// Flags about history and watches, shared by `apiary serve` and `apiary dev` (which passes
/// them on to every replica).
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct WatchArgs {
    /// How much change history the leader keeps before it compacts (`500ms`, `2s`, `5m`):
    /// watches and continue tokens older than this get 410 Gone.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub watch_history: Duration,
    /// Seconds a watch without `timeoutSeconds` runs at least (it ends after a random time
    /// between this and twice this).
    #[arg(long, default_value_t = 1800)]
    pub min_request_timeout: u64,
    /// How often a watch that allows bookmarks gets one (`1s`, `60s`).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub watch_bookmark_interval: Duration,
}

/// Flags about start-up and graceful shutdown, shared by `apiary serve` and `apiary dev` (which
/// passes them on to every replica); kube-apiserver's names and defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct LifecycleArgs {
    /// How long after start `/livez` passes the start-up steps (`poststarthook/...` checks)
    /// that have not finished yet, so a supervisor does not restart a replica still starting.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub livez_grace_period: Duration,
    /// How long the API keeps serving after a shutdown signal while `/readyz` already fails,
    /// so load balancers stop sending requests first (`0s`, `10s`).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub shutdown_delay_duration: Duration,
    /// Once the delay has passed, keep listening until the requests in flight finished and
    /// answer new ones 429 with `Retry-After` and `Connection: close`.
    #[arg(long, default_value_t = false, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub shutdown_send_retry_after: bool,
    /// When shutting down, how long the open watches (ended after their current event) get to
    /// finish sending before the listener closes.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub shutdown_watch_termination_grace_period: Duration,
}

/// Flags of API Priority and Fairness, shared by `apiary serve` and `apiary dev` (which passes
/// them on to every replica); kube-apiserver's names and defaults.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct FlowControlArgs {
    /// Classify every request by the FlowSchemas and limit it by its priority level.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub enable_priority_and_fairness: bool,
    /// Requests in flight at once that do not change anything; with the next flag, the
    /// server's total concurrency that priority levels share (the sum must be positive).
    #[arg(long, default_value_t = 400)]
    pub max_requests_inflight: usize,
    /// Requests in flight at once that change something (see `--max-requests-inflight`).
    #[arg(long, default_value_t = 200)]
    pub max_mutating_requests_inflight: usize,
}

/// Flags of `apiary dev`.
#[derive(Debug, Clone, Args)]
pub struct DevArgs {
    /// How many replicas to run.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=9))]
    pub nodes: u16,
    /// Where certificates, the kubeconfig, data, logs and pid files go.
    #[arg(long, default_value = ".apiary-dev")]
    pub dir: PathBuf,
    /// Product naming of the API.
    #[arg(long, value_enum, default_value_t)]
    pub flavor: FlavorName,
    /// `--runtime-config` entries, passed on to every replica.
    #[arg(long, value_delimiter = ',')]
    pub runtime_config: Vec<String>,
    /// `--service-cluster-ip-range`, passed on to every replica.
    #[arg(long, default_value = DEFAULT_CLUSTER_IP_RANGE)]
    pub service_cluster_ip_range: String,
    /// `--service-node-port-range`, passed on to every replica.
    #[arg(long, default_value = DEFAULT_NODE_PORT_RANGE)]
    pub service_node_port_range: String,
    /// `--max-object-bytes`, passed on to every replica.
    #[arg(long, default_value_t = DEFAULT_MAX_OBJECT_BYTES, value_parser = parse_object_bytes)]
    pub max_object_bytes: usize,
    /// `--feature-gates` entries (`Name=true|false`), passed on to every replica.
    #[arg(long, value_delimiter = ',')]
    pub feature_gates: Vec<String>,
    /// The admission plugin flags, passed on to every replica.
    #[command(flatten)]
    pub admission: AdmissionArgs,
    /// `--show-hidden-metrics-for-version`, passed on to every replica.
    #[arg(long)]
    pub show_hidden_metrics_for_version: Option<String>,
    /// `--enable-bootstrap-token-auth`, passed on to every replica.
    #[arg(long)]
    pub enable_bootstrap_token_auth: bool,
    /// `--controllers`, passed on to every replica.
    #[arg(long, value_delimiter = ',', default_value = "*")]
    pub controllers: Vec<String>,
    /// First API port; replica N serves its API on `base-port + N - 1` and its peer listener on
    /// `base-port + 1000 + N - 1`, all on 127.0.0.1.
    #[arg(long, default_value_t = 6443, value_parser = clap::value_parser!(u16).range(1..=63535))]
    pub base_port: u16,
    /// Only write the certificates and the kubeconfig, start no replica (for running the
    /// replicas some other way, e.g. `deploy/local/Procfile`).
    #[arg(long)]
    pub init_only: bool,
    /// History and watch flags, passed on to every replica.
    #[command(flatten)]
    pub watch: WatchArgs,
    /// Start-up and graceful shutdown flags, passed on to every replica.
    #[command(flatten)]
    pub lifecycle: LifecycleArgs,
    /// Periodic snapshot flags, passed on to every replica.
    #[command(flatten)]
    pub periodic_snapshots: crate::periodic_snapshots::PeriodicSnapshotArgs,
    /// Audit flags, passed on to every replica (a relative `--audit-log-path` is put in each
    /// replica's directory).
    #[command(flatten)]
    pub audit: AuditArgs,
    /// Anonymous, token file and authentication webhook flags, passed on to every replica.
    #[command(flatten)]
    pub token_auth: TokenAuthArgs,
    /// Flow-control flags, passed on to every replica.
    #[command(flatten)]
    pub flow_control: FlowControlArgs,
    /// OpenID Connect flags and the authentication configuration file, passed on to every
    /// replica.
    #[command(flatten)]
    pub jwt: JwtArgs,
    /// Authenticating proxy flags, passed on to every replica.
    #[command(flatten)]
    pub request_header: RequestHeaderArgs,
    /// Authorization flags, passed on to every replica.
    #[command(flatten)]
    pub authz: AuthzArgs,
}

/// Flags of `apiary certs`.
#[derive(Debug, Clone, Args)]
pub struct CertsArgs {
    /// The replicas' hosts as `name=address`, comma separated, in `--initial-cluster` order; the
    /// address (an IP address or a DNS name) is what peers and clients dial, and goes into the
    /// host's certificates with 127.0.0.1, localhost and ::1.
    #[arg(long, required = true, value_delimiter = ',', value_parser = parse_host)]
    pub hosts: Vec<Host>,
    /// Where the files are written (and the CAs and keys of an earlier run are kept).
    #[arg(long, default_value = "pki")]
    pub dir: PathBuf,
    /// The API port of every replica.
    #[arg(long, default_value_t = 6443)]
    pub api_port: u16,
    /// The peer port of every replica.
    #[arg(long, default_value_t = 7443)]
    pub peer_port: u16,
    /// More IP addresses or DNS names every serving certificate is valid for (a load
    /// balancer), comma separated.
    #[arg(long, value_delimiter = ',', value_parser = parse_address)]
    pub extra_sans: Vec<Address>,
    /// The kubeconfig's server of some hosts as `name=https://host:port`, comma separated,
    /// where clients reach a replica elsewhere than `https://address:api-port` (published
    /// container ports).
    #[arg(long, value_delimiter = ',', value_parser = parse_server)]
    pub kubeconfig_servers: Vec<(String, String)>,
    /// Where each host keeps its certificate files: the environment files name them there.
    #[arg(long, default_value = "/etc/apiary/pki")]
    pub host_dir: PathBuf,
    /// The data directory the environment files give every replica.
    #[arg(long, default_value = "/var/lib/apiary")]
    pub data_dir: PathBuf,
    /// `--initial-cluster-state` in the environment files (`existing` for hosts that join a
    /// running cluster).
    #[arg(long, value_enum, default_value_t)]
    pub initial_cluster_state: ClusterState,
    /// Product naming of the API, in the environment files.
    #[arg(long, value_enum, default_value_t)]
    pub flavor: FlavorName,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("apiary").chain(args.iter().copied()))
    }

    #[test]
    fn serve_flags_parse_with_defaults() {
        let cli = parse(&[
            "serve",
            "--name",
            "node-2",
            "--data-dir",
            "/tmp/d",
            "--initial-cluster",
            "node-1=https://127.0.0.1:7001,node-2=https://127.0.0.1:7002",
            "--tls-cert-file",
            "s.crt",
            "--tls-private-key-file",
            "s.key",
            "--peer-cert-file",
            "p.crt",
            "--peer-key-file",
            "p.key",
            "--peer-trusted-ca-file",
            "ca.crt",
        ])
        .unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("not serve");
        };
        assert_eq!(serve.name, "node-2");
        assert_eq!(serve.listen_api, "127.0.0.1:6443".parse().unwrap());
        assert_eq!(serve.service_cluster_ip_range, "10.96.0.0/12");
        assert_eq!(serve.service_node_port_range, "30000-32767");
        assert_eq!(serve.listen_peer, "127.0.0.1:7443".parse().unwrap());
        assert_eq!(serve.initial_cluster_state, ClusterState::New);
        assert_eq!(serve.flavor, FlavorName::Platform);
        assert_eq!(serve.client_ca_file, None);
        assert_eq!(serve.max_object_bytes, 1_572_864);
        let flow = &serve.flow_control;
        assert!(flow.enable_priority_and_fairness);
        assert_eq!(
            (
                flow.max_requests_inflight,
                flow.max_mutating_requests_inflight
            ),
            (400, 200)
        );
        // R-RES-233: five minutes of history by default.
        assert_eq!(serve.watch.watch_history, Duration::from_secs(300));
        assert_eq!(serve.watch.min_request_timeout, 1800);
        assert_eq!(serve.watch.watch_bookmark_interval, Duration::from_secs(60));
    }

    #[test]
    fn serve_flags_take_explicit_values() {
        let cli = parse(&[
            "serve",
            "--name=node-1",
            "--data-dir=/d",
            "--listen-api=0.0.0.0:1",
            "--listen-peer=[::1]:2",
            "--initial-cluster=node-1=https://a:1",
            "--initial-cluster-state=existing",
            "--tls-cert-file=s.crt",
            "--tls-private-key-file=s.key",
            "--client-ca-file=ca.crt",
            "--peer-cert-file=p.crt",
            "--peer-key-file=p.key",
            "--peer-trusted-ca-file=pca.crt",
            "--flavor=kubernetes",
            "--watch-history=2s",
            "--min-request-timeout=5",
            "--watch-bookmark-interval=500ms",
            "--runtime-config=api/beta=true,batch/v1",
            "--runtime-config",
            "apps/v1/deployments=false",
            "--max-object-bytes=1024",
        ])
        .unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("not serve");
        };
        assert_eq!(
            serve.watch,
            WatchArgs {
                watch_history: Duration::from_secs(2),
                min_request_timeout: 5,
                watch_bookmark_interval: Duration::from_millis(500),
            }
        );
        assert_eq!(serve.initial_cluster_state, ClusterState::Existing);
        assert_eq!(serve.flavor, FlavorName::Kubernetes);
        assert_eq!(serve.listen_peer, "[::1]:2".parse().unwrap());
        assert_eq!(serve.client_ca_file, Some(PathBuf::from("ca.crt")));
        assert_eq!(serve.max_object_bytes, 1024);
        // R-VER-063: comma-separated and repeatable, in the order given.
        assert_eq!(
            serve.runtime_config,
            vec!["api/beta=true", "batch/v1", "apps/v1/deployments=false"]
        );
    }

    #[test]
    fn serve_rejects_missing_and_bad_flags() {
        assert!(parse(&["serve", "--name", "n"]).is_err());
        let bad_state = parse(&[
            "serve",
            "--name=n",
            "--data-dir=/d",
            "--initial-cluster=n=https://a:1",
            "--initial-cluster-state=maybe",
            "--tls-cert-file=s",
            "--tls-private-key-file=k",
            "--peer-cert-file=p",
            "--peer-key-file=k",
            "--peer-trusted-ca-file=c",
        ]);
        assert!(bad_state.is_err());
        for bytes in ["0", "-1", "1.5MiB"] {
            let bad_size = parse(&[
                "serve",
                "--name=n",
                "--data-dir=/d",
                "--initial-cluster=n=https://a:1",
                "--tls-cert-file=s",
                "--tls-private-key-file=k",
                "--peer-cert-file=p",
                "--peer-key-file=k",
                "--peer-trusted-ca-file=c",
                &format!("--max-object-bytes={bytes}"),
            ]);
            assert!(bad_size.is_err(), "{bytes}");
        }
    }

    #[test]
    fn serve_help_lists_every_feature_gate_with_stage_and_default() {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        let serve = cli.find_subcommand_mut("serve").expect("serve");
        let help = serve.render_long_help().to_string();
        for gate in apiary_api::features::GATES {
            assert!(
                help.contains(&gate.help_line()),
                "{} missing:\n{help}",
                gate.name
            );
        }
        assert!(help.contains("APIResponseCompression=true|false (BETA - default=true)"));
    }

    #[test]
    fn feature_gates_are_comma_separated_and_repeatable() {
        let cli = parse(&[
            "dev",
            "--feature-gates=APIResponseCompression=false,WatchList=true",
            "--feature-gates",
            "CBORServingAndStorage=true",
        ])
        .unwrap();
        let Command::Dev(dev) = cli.command else {
            panic!("not dev");
        };
        assert_eq!(
            dev.feature_gates,
            vec![
                "APIResponseCompression=false",
                "WatchList=true",
                "CBORServingAndStorage=true"
            ]
        );
    }

    #[test]
    fn certs_flags_have_defaults_and_parse_hosts() {
        let Command::Certs(certs) = parse(&["certs", "--hosts", "a=10.0.0.1,b=b.example"])
            .unwrap()
            .command
        else {
            panic!("not certs");
        };
        assert_eq!(certs.hosts.len(), 2);
        assert_eq!(certs.hosts[1].name, "b");
        assert_eq!((certs.api_port, certs.peer_port), (6443, 7443));
        assert_eq!(certs.dir, PathBuf::from("pki"));
        assert_eq!(certs.host_dir, PathBuf::from("/etc/apiary/pki"));
        assert_eq!(certs.data_dir, PathBuf::from("/var/lib/apiary"));
        assert_eq!(certs.initial_cluster_state, ClusterState::New);
        assert!(parse(&["certs"]).is_err());
        assert!(parse(&["certs", "--hosts", "a"]).is_err());
        assert!(parse(&["certs", "--hosts", "a=1.2.3.4", "--extra-sans", "a b"]).is_err());
    }

    #[test]
    fn dev_flags_have_defaults_and_bounds() {
        let Command::Dev(dev) = parse(&["dev"]).unwrap().command else {
            panic!("not dev");
        };
        assert_eq!(dev.nodes, 3);
        assert_eq!(dev.dir, PathBuf::from(".apiary-dev"));
        assert_eq!(dev.base_port, 6443);
        assert!(!dev.init_only);
        assert_eq!(dev.max_object_bytes, 1_572_864);
        assert_eq!(dev.watch.watch_history, Duration::from_secs(300));
        let Command::Dev(dev) = parse(&[
            "dev",
            "--nodes",
            "5",
            "--flavor",
            "kubernetes",
            "--watch-history",
            "2s",
        ])
        .unwrap()
        .command
        else {
            panic!("not dev");
        };
        assert_eq!(dev.nodes, 5);
        assert_eq!(dev.flavor, FlavorName::Kubernetes);
        assert_eq!(dev.watch.watch_history, Duration::from_secs(2));
        assert!(parse(&["dev", "--nodes", "0"]).is_err());
        assert!(parse(&["dev", "--watch-history", "2"]).is_err());
        assert!(parse(&["dev", "--base-port", "65000"]).is_err());
    }
}

//! `apiary dev`: a local cluster on loopback for development. It generates (or reuses) the
//! certificates and a kubeconfig in its directory, runs one `apiary serve` child per replica
//! (the same binary) and stops them cleanly on SIGINT/SIGTERM. Started again on the same
//! directory it keeps the data and the certificates.
//!
//! Directory layout: `ca.{crt,key}`, `peer-ca.{crt,key}`, `admin.{crt,key}`,
//! `node-N.{crt,key}` (API serving), `node-N-peer.{crt,key}`, `kubeconfig`, and per replica its
//! data directory `node-N/`, its log `node-N.log` and, while it runs, `node-N.pid`.

mod pid_file;
mod pki;
mod supervisor;

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::Path;
use std::path::PathBuf;

pub use crate::certs::pki::PemPair;
pub use crate::certs::pki::PkiError;
pub use pki::DevPki;
pub use pki::node_name;
pub use supervisor::ReplicaSpec;
pub use supervisor::Supervisor;
pub use supervisor::SupervisorError;

use crate::certs::kubeconfig::kubeconfig;
use crate::cli::AdmissionArgs;
use crate::cli::DevArgs;
use crate::duration::format_duration;
use crate::service_account_key::DEFAULT_KEY_FILE;
use crate::service_account_key::KeyError;
use crate::service_account_key::load_or_generate;

/// Offset of the peer ports from the API ports.
const PEER_PORT_OFFSET: u16 = 1000;

/// Why `apiary dev` could not run its cluster.
#[derive(Debug, thiserror::Error)]
pub enum DevError {
    /// The directory could not be prepared.
    #[error("cannot prepare {path}")]
    Dir {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The path of the running `apiary` binary is unknown.
    #[error("cannot find the apiary binary to start replicas")]
    CurrentExe(#[source] io::Error),
    /// Certificates could not be generated.
    #[error(transparent)]
    Pki(#[from] PkiError),
    /// Replicas could not be started.
    #[error(transparent)]
    Supervisor(#[from] SupervisorError),
    /// The service account signing key could not be made.
    #[error(transparent)]
    ServiceAccountKey(#[from] KeyError),
}

/// Where replica `index` (0-based) listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ports {
    /// API port.
    pub api: u16,
    /// Peer port.
    pub peer: u16,
}

/// `--flag=<absolute path>` for each of `paths` that is given, in order: a file flag passed on
/// to a replica, which runs in its own directory.
pub fn path_flags(paths: &[(&str, &Option<PathBuf>)]) -> Vec<OsString> {
    let given = paths
        .iter()
        .filter_map(|(flag, path)| Some((flag, path.as_ref()?)));
    given
        .map(|(flag, path)| {
            let mut arg = OsString::from(format!("{flag}="));
            arg.push(std::path::absolute(path).unwrap_or_else(|_| path.clone()));
            arg
        })
        .collect()
}

/// The ports of replica `index` for `base_port` (clap bounds `base_port` so none overflows).
pub fn ports(base_port: u16, index: usize) -> Ports {
    let offset = u16::try_from(index).unwrap_or(u16::MAX);
    Ports {
        api: base_port.saturating_add(offset),
        peer: base_port
            .saturating_add(PEER_PORT_OFFSET)
            .saturating_add(offset),
    }
}

/// The `apiary serve` invocations of a dev cluster in `dir` (absolute).
pub fn replica_specs(args: &DevArgs, dir: &Path, pki: &DevPki, program: &Path) -> Vec<ReplicaSpec> {
    let nodes = usize::from(args.nodes);
    let initial_cluster = (0..nodes)
        .map(|i| {
            format!(
                "{}=https://127.0.0.1:{}",
                node_name(i),
                ports(args.base_port, i).peer
            )
        })
        .collect::<Vec<_>>()
        .join(",");
    (0..nodes)
        .map(|i| {
            let name = node_name(i);
            let data_dir = dir.join(&name);
            let ports = ports(args.base_port, i);
            let flags: Vec<(&str, OsString)> = vec![
                ("--name", name.clone().into()),
                ("--data-dir", data_dir.clone().into()),
                ("--listen-api", format!("127.0.0.1:{}", ports.api).into()),
                ("--listen-peer", format!("127.0.0.1:{}", ports.peer).into()),
                ("--initial-cluster", initial_cluster.clone().into()),
                ("--initial-cluster-state", "new".into()),
                ("--tls-cert-file", pki.serving[i].cert_path.clone().into()),
                (
                    "--tls-private-key-file",
                    pki.serving[i].key_path.clone().into(),
                ),
                ("--client-ca-file", pki.ca.cert_path.clone().into()),
                ("--peer-cert-file", pki.peer[i].cert_path.clone().into()),
                ("--peer-key-file", pki.peer[i].key_path.clone().into()),
                (
                    "--peer-trusted-ca-file",
                    pki.peer_ca.cert_path.clone().into(),
                ),
                ("--flavor", args.flavor.as_str().into()),
                (
                    "--service-account-signing-key-file",
                    dir.join(DEFAULT_KEY_FILE).into(),
                ),
                (
                    "--watch-history",
                    format_duration(args.watch.watch_history).into(),
                ),
                (
                    "--min-request-timeout",
                    args.watch.min_request_timeout.to_string().into(),
                ),
                (
                    "--watch-bookmark-interval",
                    format_duration(args.watch.watch_bookmark_interval).into(),
                ),
            ];
            let mut argv: Vec<OsString> = vec!["serve".into()];
            for (flag, value) in flags {
                argv.push(flag.into());
                argv.push(value);
            }
            argv.push(
                format!(
                    "--service-cluster-ip-range={}",
                    args.service_cluster_ip_range
                )
                .into(),
            );
            argv.push(format!("--service-node-port-range={}", args.service_node_port_range).into());
            argv.push(format!("--max-object-bytes={}", args.max_object_bytes).into());
            let admission = &args.admission;
            let enabled = dev_enabled_plugins(admission);
            for (flag, names) in [
                ("--enable-admission-plugins", &enabled),
                (
                    "--disable-admission-plugins",
                    &admission.disable_admission_plugins,
                ),
            ] {
                if !names.is_empty() {
                    argv.push(format!("{flag}={}", names.join(",")).into());
                }
            }
            if let Some(file) = &admission.admission_control_config_file {
                // The replicas run elsewhere: the file as an absolute path.
                let file = std::path::absolute(file).unwrap_or_else(|_| file.clone());
                argv.push("--admission-control-config-file".into());
                argv.push(file.into());
            }
            let flow = &args.flow_control;
            argv.push(
                format!(
                    "--enable-priority-and-fairness={}",
                    flow.enable_priority_and_fairness
                )
                .into(),
            );
            argv.push(format!("--max-requests-inflight={}", flow.max_requests_inflight).into());
            argv.push(
                format!(
                    "--max-mutating-requests-inflight={}",
                    flow.max_mutating_requests_inflight
                )
                .into(),
            );
            let lifecycle = &args.lifecycle;
            let grace = format_duration(lifecycle.livez_grace_period);
            argv.push(format!("--livez-grace-period={grace}").into());
            let delay = format_duration(lifecycle.shutdown_delay_duration);
            argv.push(format!("--shutdown-delay-duration={delay}").into());
            let retry_after = lifecycle.shutdown_send_retry_after;
            argv.push(format!("--shutdown-send-retry-after={retry_after}").into());
            let watch_grace = format_duration(lifecycle.shutdown_watch_termination_grace_period);
            argv.push(format!("--shutdown-watch-termination-grace-period={watch_grace}").into());
            if !args.runtime_config.is_empty() {
                argv.push(format!("--runtime-config={}", args.runtime_config.join(",")).into());
            }
            if let Some(version) = &args.show_hidden_metrics_for_version {
                argv.push(format!("--show-hidden-metrics-for-version={version}").into());
            }
            if !args.feature_gates.is_empty() {
                argv.push(format!("--feature-gates={}", args.feature_gates.join(",")).into());
            }
            if args.enable_bootstrap_token_auth {
                argv.push("--enable-bootstrap-token-auth".into());
            }
            argv.push(format!("--controllers={}", args.controllers.join(",")).into());
            argv.extend(args.audit.replica_flags(&data_dir));
            argv.extend(args.jwt.replica_flags());
            argv.extend(args.token_auth.replica_flags());
            argv.extend(args.request_header.replica_flags());
            argv.extend(args.authz.replica_flags());
            argv.extend(args.periodic_snapshots.replica_flags());
            ReplicaSpec {
                name: name.clone(),
                program: program.to_owned(),
                args: argv,
                log_file: dir.join(format!("{name}.log")),
                pid_file: dir.join(format!("{name}.pid")),
                data_dir,
            }
        })
        .collect()
}

/// Runs a dev cluster until `shutdown` resolves, then stops its replicas (with `init_only`:
/// only writes the certificates and the kubeconfig).
pub async fn run_dev(args: DevArgs, shutdown: impl Future<Output = ()>) -> Result<(), DevError> {
    let dir_error = |path: &Path| {
        let path = path.to_owned();
        move |source| DevError::Dir { path, source }
    };
    fs::create_dir_all(&args.dir).map_err(dir_error(&args.dir))?;
    let dir = fs::canonicalize(&args.dir).map_err(dir_error(&args.dir))?;
    let nodes = usize::from(args.nodes);
    let pki = DevPki::load_or_generate(&dir, nodes)?;
    // One key for every replica, so each verifies the tokens the others sign.
    load_or_generate(&dir.join(DEFAULT_KEY_FILE))?;

    let api_urls: Vec<String> = (0..nodes)
        .map(|i| format!("https://127.0.0.1:{}", ports(args.base_port, i).api))
        .collect();
    let kubeconfig_path = dir.join("kubeconfig");
    let servers: Vec<(String, String)> = api_urls
        .iter()
        .enumerate()
        .map(|(i, url)| (node_name(i), url.clone()))
        .collect();
    let document = kubeconfig(&pki.ca, &pki.admin, &servers);
    fs::write(&kubeconfig_path, format!("{document:#}\n")).map_err(dir_error(&kubeconfig_path))?;

    if args.init_only {
        println!(
            "apiary dev: certificates and kubeconfig written to {}",
            dir.display()
        );
        return Ok(());
    }

    let program = std::env::current_exe().map_err(DevError::CurrentExe)?;
    let mut supervisor = Supervisor::start(replica_specs(&args, &dir, &pki, &program)).await?;

    println!(
        "apiary dev: {nodes} replicas (flavor {})",
        args.flavor.as_str()
    );
    for ((name, pid), url) in supervisor.pids().into_iter().zip(&api_urls) {
        println!(
            "  {name}  {url}  pid {pid}  log {}",
            dir.join(format!("{name}.log")).display()
        );
    }
    println!("Use it with kubectl:");
    println!("  export KUBECONFIG={}", kubeconfig_path.display());
    // `kubectl create configmap` sends Protobuf, and `create -f` / `apply -f` fetch the OpenAPI
    // document for validation; both arrive with later work, so the banner shows what works now.
    println!(
        "  kubectl create -f - <<< '{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"demo\"}},\"data\":{{\"key\":\"value\"}}}}'"
    );
    println!("  kubectl --context node-2 get configmaps");
    println!("Stop with Ctrl-C (the data in {} is kept).", dir.display());

    supervisor.watch_until(shutdown).await;
    println!("apiary dev: stopping the replicas");
    supervisor.stop().await;
    Ok(())
}

/// The plugins `apiary dev` enables beyond the default set: the user's, and NodeRestriction
/// unless the user names it (kubeadm enables it on every control plane).
fn dev_enabled_plugins(admission: &AdmissionArgs) -> Vec<String> {
    let mut enabled = admission.enable_admission_plugins.clone();
    let named = |name: &str| {
        enabled.iter().any(|n| n == name)
            || admission
                .disable_admission_plugins
                .iter()
                .any(|n| n == name)
    };
    if !named(NODE_RESTRICTION) {
        enabled.push(NODE_RESTRICTION.to_owned());
    }
    enabled
}

/// The plugin `apiary dev` enables by default.
const NODE_RESTRICTION: &str = "NodeRestriction";

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use apiary_api::Flavor;
    use apiary_api::registry::RuntimeConfig;
    use clap::Parser;

    use super::*;
    use crate::audit::AuditArgs;
    use crate::authn::token_flags::TokenAuthArgs;
    use crate::cli::Cli;
    use crate::cli::Command;
    use crate::cli::FlavorName;
    use crate::cli::FlowControlArgs;
    use crate::cli::LifecycleArgs;
    use crate::cli::ServeArgs;
    use crate::cli::WatchArgs;
    use crate::config::ServeConfig;
    use crate::drain::ShutdownSettings;

    #[test]
    fn ports_follow_the_base_port() {
        assert_eq!(
            ports(6443, 0),
            Ports {
                api: 6443,
                peer: 7443
            }
        );
        assert_eq!(
            ports(6443, 2),
            Ports {
                api: 6445,
                peer: 7445
            }
        );
    }

    // The generated `serve` command lines parse with `apiary serve`'s own flags and describe
    // one cluster: every replica sees the same members and finds itself among them.
    #[test]
    fn replica_command_lines_parse_as_serve_flags() {
        let dir = tempfile::tempdir().unwrap();
        let args = DevArgs {
            nodes: 3,
            dir: dir.path().to_owned(),
            flavor: FlavorName::Kubernetes,
            runtime_config: vec!["api/beta=true".into(), "apps/v1=false".into()],
            service_cluster_ip_range: "10.0.0.0/24".into(),
            service_node_port_range: "31000-31999".into(),
            max_object_bytes: 2048,
            admission: Default::default(),
            feature_gates: vec![
                "APIResponseCompression=false".into(),
                "WatchList=true".into(),
            ],
            show_hidden_metrics_for_version: Some("1.36".into()),
            enable_bootstrap_token_auth: true,
            controllers: vec!["*".into(), "tokencleaner".into()],
            base_port: 20000,
            init_only: false,
            watch: WatchArgs {
                watch_history: Duration::from_secs(2),
                min_request_timeout: 7,
                watch_bookmark_interval: Duration::from_millis(1500),
            },
            periodic_snapshots: Default::default(),
            lifecycle: LifecycleArgs {
                livez_grace_period: Duration::from_secs(9),
                shutdown_delay_duration: Duration::from_secs(3),
                shutdown_send_retry_after: true,
                shutdown_watch_termination_grace_period: Duration::from_secs(4),
            },
            audit: AuditArgs::default(),
            jwt: Default::default(),
            token_auth: TokenAuthArgs::default(),
            flow_control: FlowControlArgs {
                enable_priority_and_fairness: false,
                max_requests_inflight: 7,
                max_mutating_requests_inflight: 3,
            },
            request_header: Default::default(),
            authz: Default::default(),
        };
        let pki = DevPki::load_or_generate(dir.path(), 3).unwrap();
        let specs = replica_specs(&args, dir.path(), &pki, Path::new("/bin/apiary"));
        assert_eq!(specs.len(), 3);
        let configs: Vec<ServeConfig> = specs
            .iter()
            .map(|spec| {
                let argv = std::iter::once(OsString::from("apiary")).chain(spec.args.clone());
                let Command::Serve(serve): Command = Cli::try_parse_from(argv).unwrap().command
                else {
                    panic!("not serve");
                };
                let serve: ServeArgs = serve;
                assert_eq!(serve.flavor, FlavorName::Kubernetes);
                ServeConfig::from_args(&serve).unwrap()
            })
            .collect();
        for (i, config) in configs.iter().enumerate() {
            assert_eq!(config.id, u64::try_from(i + 1).unwrap());
            assert_eq!(config.initial_cluster, configs[0].initial_cluster);
            assert_eq!(config.data_dir, dir.path().join(node_name(i)));
            assert_eq!(config.api_tls.client_ca.as_ref(), Some(&pki.ca.cert_path));
            assert_eq!(config.peer_tls.trusted_ca, pki.peer_ca.cert_path);
            // One signing key for all replicas.
            assert_eq!(
                config.service_account_key,
                dir.path().join(DEFAULT_KEY_FILE)
            );
            // The history and watch flags reach every replica unchanged.
            assert_eq!(config.watch_history, Duration::from_secs(2));
            assert_eq!(config.watch.min_request_timeout, Duration::from_secs(7));
            assert_eq!(config.watch.bookmark_interval, Duration::from_millis(1500));
            assert_eq!(
                Ok(&config.runtime_config),
                RuntimeConfig::parse(["api/beta=true,apps/v1=false"], Flavor::Kubernetes).as_ref()
            );
            assert_eq!(
                Ok(config.service_ranges),
                apiary_api::registry::allocator::ServiceRanges::parse("10.0.0.0/24", "31000-31999")
            );
            assert_eq!(config.max_object_bytes, 2048);
            // The flow-control flags too.
            assert!(!config.flow_control.enabled);
            let seats = &config.flow_control;
            assert_eq!(
                (
                    seats.max_requests_inflight,
                    seats.max_mutating_requests_inflight
                ),
                (7, 3)
            );
            assert!(
                !config
                    .feature_gates
                    .enabled(apiary_api::Feature::APIResponseCompression)
            );
            // The start-up and shutdown flags too.
            let shutdown = ShutdownSettings {
                delay: Duration::from_secs(3),
                send_retry_after: true,
                watch_termination_grace: Duration::from_secs(4),
            };
            assert_eq!(config.shutdown, shutdown);
            assert_eq!(config.livez_grace_period, Duration::from_secs(9));
            assert!(config.metrics_exposure.shows_hidden());
            assert!(config.bootstrap_token_auth);
            assert_eq!(
                config.controllers.enabled(),
                [
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
                ]
            );
        }
        assert_eq!(configs[1].initial_cluster[&2], "https://127.0.0.1:21001");
        assert_eq!(specs[2].pid_file, dir.path().join("node-3.pid"));
        assert_eq!(specs[2].data_dir, configs[2].data_dir);
    }

    #[tokio::test]
    async fn init_only_writes_certificates_and_kubeconfig_and_starts_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let args = DevArgs {
            nodes: 5,
            dir: dir.path().join("fresh"),
            flavor: FlavorName::Platform,
            runtime_config: Vec::new(),
            service_cluster_ip_range: "10.96.0.0/12".into(),
            service_node_port_range: "30000-32767".into(),
            max_object_bytes: apiary_api::DEFAULT_MAX_OBJECT_BYTES,
            admission: Default::default(),
            feature_gates: Vec::new(),
            show_hidden_metrics_for_version: None,
            enable_bootstrap_token_auth: false,
            controllers: vec!["*".into()],
            base_port: 6443,
            init_only: true,
            watch: WatchArgs {
                watch_history: Duration::from_secs(300),
                min_request_timeout: 1800,
                watch_bookmark_interval: Duration::from_secs(60),
            },
            lifecycle: LifecycleArgs::default(),
            periodic_snapshots: Default::default(),
            audit: AuditArgs::default(),
            jwt: Default::default(),
            token_auth: TokenAuthArgs::default(),
            flow_control: FlowControlArgs {
                enable_priority_and_fairness: true,
                max_requests_inflight: 400,
                max_mutating_requests_inflight: 200,
            },
            request_header: Default::default(),
            authz: Default::default(),
        };
        run_dev(args, std::future::pending()).await.unwrap();
        let cluster = dir.path().join("fresh");
        let config: serde_json::Value =
            serde_json::from_slice(&fs::read(cluster.join("kubeconfig")).unwrap()).unwrap();
        assert_eq!(config["contexts"].as_array().unwrap().len(), 5);
        assert_eq!(
            config["clusters"][4]["cluster"]["server"],
            "https://127.0.0.1:6447"
        );
        assert!(cluster.join("node-5-peer.crt").exists());
        assert!(!cluster.join("node-1.pid").exists());
    }

    // No CHECKLIST ID (kubeadm's default): `apiary dev` enables NodeRestriction unless the
    // user enables or disables it.
    #[test]
    fn dev_enables_node_restriction_unless_named() {
        let args = |enable: &[&str], disable: &[&str]| AdmissionArgs {
            enable_admission_plugins: enable.iter().map(|s| (*s).to_owned()).collect(),
            disable_admission_plugins: disable.iter().map(|s| (*s).to_owned()).collect(),
            admission_control_config_file: None,
        };
        assert_eq!(dev_enabled_plugins(&args(&[], &[])), ["NodeRestriction"]);
        assert_eq!(
            dev_enabled_plugins(&args(&["AlwaysPullImages"], &[])),
            ["AlwaysPullImages", "NodeRestriction"]
        );
        assert!(dev_enabled_plugins(&args(&[], &["NodeRestriction"])).is_empty());
        assert_eq!(
            dev_enabled_plugins(&args(&["NodeRestriction"], &[])),
            ["NodeRestriction"]
        );
    }
}

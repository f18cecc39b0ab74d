//! `apiary certs`: the certificates, admin kubeconfig and per-host environment files of a
//! cluster of named hosts, like kubeadm's PKI phase. Run again on the same `--dir` it keeps
//! every CA, certificate and key already there (a host added to `--hosts` gets its own without
//! re-keying the others) and rewrites the kubeconfig and the environment files.
//!
//! Two CAs keep the two trust domains apart, as `apiary dev` does: `ca` signs the API serving
//! certificates and the admin client certificate (`--client-ca-file`), `peer-ca` the replicas'
//! peer certificates (`--peer-trusted-ca-file`), so no API client certificate can pass as a
//! replica.
//!
//! Layout of `--dir`: `ca.{crt,key}`, `peer-ca.{crt,key}`, `admin.{crt,key}`, per host
//! `NAME.{crt,key}` (API serving) and `NAME-peer.{crt,key}`, `service-account.key` (the one
//! key that signs service account tokens on every replica), `kubeconfig` (one context per host,
//! current: the first) and per host `NAME.env` (its `apiary serve` flags). Keys and the
//! kubeconfig are readable by their owner only.

pub mod env_file;
pub mod hosts;
pub mod kubeconfig;
pub mod pki;

use std::fs;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::path::PathBuf;

use env_file::EnvFile;
use env_file::UnsafeValue;
use hosts::Host;
use pki::Ca;
use pki::Leaf;
use pki::PkiError;
use pki::Usage;
use pki::with_loopback;

use crate::cli::CertsArgs;
use crate::service_account_key::DEFAULT_KEY_FILE;
use crate::service_account_key::KeyError;
use crate::service_account_key::load_or_generate;

/// The file name of the admin kubeconfig in `--dir`.
pub const KUBECONFIG_FILE: &str = "kubeconfig";

/// Why `apiary certs` could not write the cluster's files.
#[derive(Debug, thiserror::Error)]
pub enum CertsError {
    /// `--hosts` or `--kubeconfig-servers` do not describe one cluster.
    #[error("{0}")]
    Hosts(String),
    /// A file or the directory could not be written.
    #[error("cannot write {path}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A certificate could not be generated or stored.
    #[error(transparent)]
    Pki(#[from] PkiError),
    /// The service account signing key could not be made.
    #[error(transparent)]
    ServiceAccountKey(#[from] KeyError),
    /// A flag value cannot go into an environment file.
    #[error("the environment file of {host}")]
    Env {
        /// The host.
        host: String,
        /// Which value.
        #[source]
        source: UnsafeValue,
    },
}

/// Writes the cluster's files into `args.dir`, keeping what is there.
pub fn run_certs(args: &CertsArgs) -> Result<(), CertsError> {
    hosts::check_hosts(&args.hosts).map_err(CertsError::Hosts)?;
    for (name, _) in &args.kubeconfig_servers {
        if !args.hosts.iter().any(|h| &h.name == name) {
            return Err(CertsError::Hosts(format!(
                "--kubeconfig-servers names {name}, which is not in --hosts"
            )));
        }
    }
    // Every environment file is rendered before anything is written, so a value that cannot
    // go into one refuses the run without leaving half a directory behind.
    let env_files = args
        .hosts
        .iter()
        .map(|host| {
            let text = env_file(args, host)
                .render()
                .map_err(|source| CertsError::Env {
                    host: host.name.clone(),
                    source,
                })?;
            Ok((args.dir.join(format!("{}.env", host.name)), text))
        })
        .collect::<Result<Vec<_>, CertsError>>()?;
    let dir = &args.dir;
    let io_error = |path: &Path| {
        let path = path.to_owned();
        move |source| CertsError::Io { path, source }
    };
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io_error(dir))?;

    let ca = Ca::load_or_create(dir, "ca", "apiary-ca")?;
    let peer_ca = Ca::load_or_create(dir, "peer-ca", "apiary-peer-ca")?;
    for host in &args.hosts {
        let own = vec![host.address.san()];
        let mut serving_names = own.clone();
        serving_names.extend(args.extra_sans.iter().map(hosts::Address::san));
        let serving = Leaf {
            common_name: &host.name,
            organization: None,
            names: &with_loopback(&serving_names),
            usage: Usage::Serving,
        };
        ca.load_or_issue(dir, &host.name, serving)?;
        let peer = Leaf {
            common_name: &host.name,
            organization: None,
            names: &with_loopback(&own),
            usage: Usage::Peer,
        };
        peer_ca.load_or_issue(dir, &format!("{}-peer", host.name), peer)?;
    }
    let admin = ca.load_or_issue_admin(dir)?;
    load_or_generate(&dir.join(DEFAULT_KEY_FILE))?;

    let servers: Vec<(String, String)> = args
        .hosts
        .iter()
        .map(|host| {
            let url = args
                .kubeconfig_servers
                .iter()
                .find(|(name, _)| name == &host.name)
                .map(|(_, url)| url.clone())
                .unwrap_or_else(|| format!("https://{}", host.address.with_port(args.api_port)));
            (host.name.clone(), url)
        })
        .collect();
    let kubeconfig_path = dir.join(KUBECONFIG_FILE);
    let document = kubeconfig::kubeconfig(&ca.pair, &admin, &servers);
    pki::write_private(&kubeconfig_path, &format!("{document:#}\n"))?;

    for (path, text) in env_files {
        fs::write(&path, text).map_err(io_error(&path))?;
    }
    println!(
        "apiary certs: {} hosts in {}",
        args.hosts.len(),
        dir.display()
    );
    for host in &args.hosts {
        let name = &host.name;
        println!(
            "  {name}: copy ca.crt peer-ca.crt {name}.crt {name}.key {name}-peer.crt \
             {name}-peer.key {DEFAULT_KEY_FILE} to {}, {name}.env to /etc/apiary/apiary.env",
            args.host_dir.display()
        );
    }
    println!("  kubectl: export KUBECONFIG={}", kubeconfig_path.display());
    Ok(())
}

/// The `apiary serve` flags of `host`'s replica.
fn env_file(args: &CertsArgs, host: &Host) -> EnvFile {
    let initial_cluster = args
        .hosts
        .iter()
        .map(|h| format!("{}=https://{}", h.name, h.address.with_port(args.peer_port)))
        .collect::<Vec<_>>()
        .join(",");
    let file = |name: String| args.host_dir.join(name).display().to_string();
    let name = &host.name;
    EnvFile {
        name: name.clone(),
        vars: vec![
            ("APIARY_NAME", name.clone()),
            ("APIARY_DATA_DIR", args.data_dir.display().to_string()),
            ("APIARY_LISTEN_API", host.address.unspecified(args.api_port)),
            (
                "APIARY_LISTEN_PEER",
                host.address.unspecified(args.peer_port),
            ),
            ("APIARY_INITIAL_CLUSTER", initial_cluster),
            (
                "APIARY_INITIAL_CLUSTER_STATE",
                args.initial_cluster_state.as_str().to_owned(),
            ),
            ("APIARY_FLAVOR", args.flavor.as_str().to_owned()),
            ("APIARY_TLS_CERT_FILE", file(format!("{name}.crt"))),
            ("APIARY_TLS_PRIVATE_KEY_FILE", file(format!("{name}.key"))),
            ("APIARY_CLIENT_CA_FILE", file("ca.crt".to_owned())),
            ("APIARY_PEER_CERT_FILE", file(format!("{name}-peer.crt"))),
            ("APIARY_PEER_KEY_FILE", file(format!("{name}-peer.key"))),
            (
                "APIARY_PEER_TRUSTED_CA_FILE",
                file("peer-ca.crt".to_owned()),
            ),
            (
                "APIARY_SERVICE_ACCOUNT_SIGNING_KEY_FILE",
                file(DEFAULT_KEY_FILE.to_owned()),
            ),
            ("APIARY_EXTRA_ARGS", String::new()),
        ],
    }
}

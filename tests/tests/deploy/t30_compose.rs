//! `deploy/compose/compose-3.yaml` and `compose-5.yaml`: each service's entrypoint and command
//! run as compose would run them, with the certificates `apiary certs` writes as the files say:
//! the volumes become temporary directories, each container's ports free loopback ports, and
//! the other services' names in peer URLs those ports.

use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;

use apiary_tests::ports;
use serde_json::Value;

use crate::certs_ok;
use crate::read_deploy_file;
use crate::replicas::INSTALLED_BINARY;
use crate::replicas::ReplicaCommand;
use crate::replicas::Replicas;

/// One service of a compose file.
struct Service {
    name: String,
    /// Entrypoint, then command.
    argv: Vec<String>,
    /// `(source, container path)` of every volume.
    volumes: Vec<(String, String)>,
    /// The container port its one published port forwards to.
    published_to: u16,
}

fn strings(value: &Value, what: &str) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{what} is a list"))
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| panic!("{what}: strings"))
                .to_owned()
        })
        .collect()
}

/// The services of the compose file `file`, checked for what one replica per service needs.
fn services(file: &str) -> Vec<Service> {
    let document: Value = serde_saphyr::from_str(&read_deploy_file(file)).expect("YAML");
    let declared: BTreeSet<&String> = document["volumes"]
        .as_object()
        .expect("top-level volumes")
        .keys()
        .collect();
    let mut data_volumes = BTreeSet::new();
    let services = document["services"].as_object().expect("services");
    services
        .iter()
        .map(|(name, service)| {
            assert!(service["image"].is_string(), "{name}: image");
            let entrypoint = strings(&service["entrypoint"], "entrypoint");
            assert_eq!(entrypoint, [INSTALLED_BINARY], "{name}");
            let command = strings(&service["command"], "command");
            assert_eq!(command[0], "serve", "{name}");
            assert!(command.contains(&format!("--name={name}")), "{name}");
            let volumes: Vec<(String, String)> = strings(&service["volumes"], "volumes")
                .iter()
                .map(|v| {
                    let mut parts = v.split(':');
                    let source = parts.next().expect("source").to_owned();
                    let target = parts.next().expect("target").to_owned();
                    (source, target)
                })
                .collect();
            // A volume of its own for the data directory.
            let data = volumes
                .iter()
                .find(|(source, _)| declared.contains(source))
                .unwrap_or_else(|| panic!("{name}: no named volume"));
            assert!(
                data_volumes.insert(data.0.clone()),
                "{name} shares {}",
                data.0
            );
            assert!(
                command.contains(&format!("--data-dir={}", data.1)),
                "{name}"
            );
            let published = strings(&service["ports"], "ports");
            assert_eq!(published.len(), 1, "{name}: one published port (the API)");
            let published_to = published[0]
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .expect("host:container");
            Service {
                name: name.clone(),
                argv: entrypoint.into_iter().chain(command).collect(),
                volumes,
                published_to,
            }
        })
        .collect()
}

/// The port a container's listener `0.0.0.0:PORT` takes in `argv`.
fn listen_port(argv: &[String], flag: &str) -> u16 {
    argv.iter()
        .find_map(|arg| arg.strip_prefix(&format!("{flag}=0.0.0.0:")))
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("{flag}=0.0.0.0:PORT"))
}

/// R-HA-012: the compose file `file` starts a working cluster of its services.
async fn compose_cluster_works(file: &str, expected: usize) {
    let services = services(file);
    assert_eq!(services.len(), expected, "{file}");
    let nodes = u16::try_from(services.len()).expect("a few services");
    let base = ports::free_base_port(&ports::dev_offsets(nodes)).expect("free ports");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let api_port = listen_port(&services[0].argv, "--listen-api");
    let peer_port = listen_port(&services[0].argv, "--listen-peer");
    // Container port -> loopback port, per service (the API ports are the published ones).
    let loopback = |index: usize, port: u16| {
        let index = u16::try_from(index).expect("a few services");
        if port == api_port {
            base + index
        } else {
            assert_eq!(port, peer_port, "only the API and peer ports are used");
            base + 1000 + index
        }
    };

    let hosts: Vec<String> = services
        .iter()
        .map(|s| format!("{0}={0}", s.name))
        .collect();
    let servers: Vec<String> = services
        .iter()
        .enumerate()
        .map(|(i, s)| {
            format!(
                "{}=https://127.0.0.1:{}",
                s.name,
                loopback(i, s.published_to)
            )
        })
        .collect();
    let pki = dir.path().join("pki");
    certs_ok(&[
        "--dir",
        pki.to_str().expect("a UTF-8 path"),
        "--hosts",
        &hosts.join(","),
        "--kubeconfig-servers",
        &servers.join(","),
    ]);

    let commands = services
        .iter()
        .enumerate()
        .map(|(i, service)| {
            assert_eq!(service.published_to, api_port, "{}", service.name);
            assert_eq!(listen_port(&service.argv, "--listen-api"), api_port);
            assert_eq!(listen_port(&service.argv, "--listen-peer"), peer_port);
            let mounts: Vec<(String, PathBuf)> = service
                .volumes
                .iter()
                .map(|(source, target)| (target.clone(), host_path(dir.path(), source)))
                .collect();
            let argv = service
                .argv
                .iter()
                .enumerate()
                .map(|(position, arg)| {
                    if position == 0 {
                        return arg.clone();
                    }
                    let mut arg = arg.clone();
                    for (target, source) in &mounts {
                        arg = arg.replace(target.as_str(), source.to_str().expect("a UTF-8 path"));
                    }
                    for port in [api_port, peer_port] {
                        arg = arg.replace(
                            &format!("0.0.0.0:{port}"),
                            &format!("127.0.0.1:{}", loopback(i, port)),
                        );
                    }
                    for (j, other) in services.iter().enumerate() {
                        arg = arg.replace(
                            &format!("//{}:{peer_port}", other.name),
                            &format!("//127.0.0.1:{}", loopback(j, peer_port)),
                        );
                    }
                    arg
                })
                .collect();
            ReplicaCommand {
                name: service.name.clone(),
                argv,
            }
        })
        .collect();
    let replicas = Replicas::start(commands, dir.path());
    replicas.smoke(&pki.join("kubeconfig")).await;
}

/// Where a volume's source is: `./x` beside the compose file (here: in `dir`), a named
/// volume in `dir/volumes/`.
fn host_path(dir: &Path, source: &str) -> PathBuf {
    match source.strip_prefix("./") {
        Some(relative) => dir.join(relative),
        None => {
            let path = dir.join("volumes").join(source);
            std::fs::create_dir_all(&path).expect("a volume directory");
            path
        }
    }
}

// R-HA-012
#[tokio::test]
async fn compose_3_runs_a_three_replica_cluster() {
    compose_cluster_works("compose/compose-3.yaml", 3).await;
}

// R-HA-012
#[tokio::test]
async fn compose_5_runs_a_five_replica_cluster() {
    compose_cluster_works("compose/compose-5.yaml", 5).await;
}
